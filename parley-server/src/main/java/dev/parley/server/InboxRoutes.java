package dev.parley.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.DeliveryPolicies;
import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.EventStore;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Principal;
import dev.parley.core.Registry;

import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/** The caller's inbox as SSE or JSON pages, and the admin's view of any inbox. */
final class InboxRoutes {
    private static final int DEFAULT_LIMIT = 100;
    private static final int MAX_LIMIT = 1000;

    private final EventStore store;
    private final DeliveryPolicies policies;
    private final Registry registry;
    private final InboxStream stream;
    private final InstantSource clock;

    InboxRoutes(EventStore store, DeliveryPolicies policies, Registry registry, InboxStream stream, InstantSource clock) {
        this.store = store;
        this.policies = policies;
        this.registry = registry;
        this.stream = stream;
        this.clock = clock;
    }

    void register(Routes routes) {
        routes.get("/v1/inbox/stream", ex -> stream(ex, own(ex.caller())))
                .get("/v1/inbox", ex -> page(ex, own(ex.caller())))
                .get("/v1/nodes/{id}/inbox/stream", ex -> stream(ex, anyAsAdmin(ex)))
                .get("/v1/nodes/{id}/inbox", ex -> page(ex, anyAsAdmin(ex)));
    }

    private void stream(Exchange ex, NodeId node) {
        Optional<String> header = ex.header("Last-Event-ID");
        OptionalLong cursor = header.isPresent()
                ? OptionalLong.of(Exchange.parseLong("Last-Event-ID", header.get(), 0, Long.MAX_VALUE, ErrorCode.INVALID_CURSOR))
                : ex.longQuery("after", 0, Long.MAX_VALUE, ErrorCode.INVALID_CURSOR);
        stream.serve(node, cursor, ex.response());
    }

    private void page(Exchange ex, NodeId node) {
        long after = ex.longQuery("after", 0, Long.MAX_VALUE, ErrorCode.INVALID_CURSOR).orElse(0);
        int limit = (int) ex.longQuery("limit", 1, MAX_LIMIT, ErrorCode.INVALID_REQUEST).orElse(DEFAULT_LIMIT);
        List<Envelope> items = store.inboxAfter(node, after, limit);
        store.markDelivered(items, clock.instant(), policies.of(node).redeliverAfter());
        ObjectNode out = Json.object();
        var array = out.putArray("items");
        items.forEach(e -> array.add(Json.envelopeTree(e)));
        out.put("next", items.isEmpty() ? after : items.getLast().seq());
        ex.json(200, out);
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
