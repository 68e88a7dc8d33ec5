package dev.parley.server;

import dev.parley.core.DeliveryPolicies;
import dev.parley.core.ErrorCode;
import dev.parley.core.EventStore;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Principal;
import dev.parley.core.Registry;

import java.time.InstantSource;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The caller's inbox as SSE or JSON pages, and the admin's view of any inbox. Only the
 * node's own reads take delivery ({@link InboxReader}).
 */
final class InboxRoutes {
    private static final int DEFAULT_LIMIT = 100;
    private static final int MAX_LIMIT = 1000;

    private final InboxPoll poll;
    private final Registry registry;
    private final InboxStream stream;

    InboxRoutes(EventStore store, DeliveryPolicies policies, Registry registry, InboxStream stream, InstantSource clock) {
        this.poll = new InboxPoll(store, policies, clock);
        this.registry = registry;
        this.stream = stream;
    }

    void register(Routes routes) {
        routes.get("/v1/inbox/stream", ex -> stream(ex, own(ex.caller()), InboxReader.OWNER))
                .get("/v1/inbox", ex -> page(ex, own(ex.caller()), InboxReader.OWNER))
                .get("/v1/nodes/{id}/inbox/stream", ex -> stream(ex, anyAsAdmin(ex), InboxReader.OBSERVER))
                .get("/v1/nodes/{id}/inbox", ex -> page(ex, anyAsAdmin(ex), InboxReader.OBSERVER));
    }

    /** A cursor ({@code Last-Event-ID}, else {@code ?after=}) wins over {@code ?replay=}, which is for cursor-less starts. */
    private void stream(Exchange ex, NodeId node, InboxReader reader) {
        Optional<String> header = ex.header("Last-Event-ID");
        OptionalLong cursor = header.isPresent()
                ? OptionalLong.of(Exchange.parseLong("Last-Event-ID", header.get(), 0, Long.MAX_VALUE, ErrorCode.INVALID_CURSOR))
                : ex.longQuery("after", 0, Long.MAX_VALUE, ErrorCode.INVALID_CURSOR);
        Replay replay = ex.query("replay").map(Replay::parse).orElse(Replay.UNDELIVERED);
        stream.serve(node, reader, cursor, replay, ex.response());
    }

    private void page(Exchange ex, NodeId node, InboxReader reader) {
        long after = ex.longQuery("after", 0, Long.MAX_VALUE, ErrorCode.INVALID_CURSOR).orElse(0);
        int limit = (int) ex.longQuery("limit", 1, MAX_LIMIT, ErrorCode.INVALID_REQUEST).orElse(DEFAULT_LIMIT);
        ex.json(200, poll.page(node, reader, after, limit));
    }

    private static NodeId own(Principal caller) {
        return switch (caller) {
            case Principal.Caller c -> c.id();
            case Principal.Admin a -> throw new ParleyException(ErrorCode.FORBIDDEN,
                    "the admin has no inbox; use /v1/nodes/{id}/inbox");
        };
    }

    private NodeId anyAsAdmin(Exchange ex) {
        if (!(ex.caller() instanceof Principal.Admin)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the admin may read another node's inbox; use /v1/inbox");
        }
        NodeId node = ex.pathNode();
        if (!registry.known(node)) {
            throw new ParleyException(ErrorCode.NODE_NOT_FOUND, "node " + node + " does not exist");
        }
        return node;
    }
}
