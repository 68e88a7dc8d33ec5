package dev.parley.server.rest;

import dev.parley.core.ErrorCode;
import dev.parley.core.Inboxes;
import dev.parley.core.Replay;
import dev.parley.server.delivery.InboxStream;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.wire.Views;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * The caller's inbox as SSE or JSON pages or a summary, and the admin's view of any inbox; {@link Inboxes}
 * says who may read which and whose reads take delivery.
 */
public final class InboxRoutes {
    private static final int DEFAULT_LIMIT = 100;
    private static final int MAX_LIMIT = 1000;

    private final Inboxes inboxes;
    private final InboxStream stream;

    public InboxRoutes(Inboxes inboxes, InboxStream stream) {
        this.inboxes = inboxes;
        this.stream = stream;
    }

    public void register(Routes routes) {
        routes.get("/v1/inbox/stream", ex -> stream(ex, inboxes.own(ex.caller())))
                .get("/v1/inbox", ex -> page(ex, inboxes.own(ex.caller())))
                .get("/v1/nodes/{id}/inbox/stream", ex -> stream(ex, inboxes.of(ex.caller(), ex.path("id"))))
                .get("/v1/nodes/{id}/inbox", ex -> page(ex, inboxes.of(ex.caller(), ex.path("id"))))
                .get("/v1/inbox/summary", ex -> summary(ex, inboxes.own(ex.caller())))
                .get("/v1/nodes/{id}/inbox/summary", ex -> summary(ex, inboxes.of(ex.caller(), ex.path("id"))));
    }

    /** A cursor ({@code Last-Event-ID}, else {@code ?after=}) wins over {@code ?replay=}, which is for cursor-less starts. */
    private void stream(Exchange ex, Inboxes.Inbox inbox) {
        Optional<String> header = ex.header("Last-Event-ID");
        OptionalLong cursor = header.isPresent()
                ? OptionalLong.of(Exchange.parseLong("Last-Event-ID", header.get(), 0, Long.MAX_VALUE, ErrorCode.INVALID_CURSOR))
                : ex.longQuery("after", 0, Long.MAX_VALUE, ErrorCode.INVALID_CURSOR);
        Replay replay = ex.query("replay").map(Replay::parse).orElse(Replay.UNDELIVERED);
        ex.goOnAlone(alone -> stream.serve(inbox, cursor, replay, alone)); // it may wait for hours
    }

    /** Head seq, backlog and last delivery: reading it takes no delivery. */
    private void summary(Exchange ex, Inboxes.Inbox inbox) {
        ex.json(200, Views.inboxSummary(inboxes.summary(inbox)));
    }

    private void page(Exchange ex, Inboxes.Inbox inbox) {
        long after = ex.longQuery("after", 0, Long.MAX_VALUE, ErrorCode.INVALID_CURSOR).orElse(0);
        int limit = (int) ex.longQuery("limit", 1, MAX_LIMIT, ErrorCode.INVALID_REQUEST).orElse(DEFAULT_LIMIT);
        ex.json(200, Views.inboxPage(inboxes.page(inbox, after, limit)));
    }
}
