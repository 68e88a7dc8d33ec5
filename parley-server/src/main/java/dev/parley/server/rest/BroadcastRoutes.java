package dev.parley.server.rest;

import dev.parley.core.BroadcastFilter;
import dev.parley.core.Broadcasts;
import dev.parley.core.NodeKind;
import dev.parley.server.http.Body;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.metrics.Metrics;
import dev.parley.server.wire.Views;

import java.util.Map;
import java.util.Optional;

/** {@code /v1/broadcasts}: one payload to every node a filter selects (the admin: anyone; a node: its own groups). */
public final class BroadcastRoutes {
    private static final BroadcastFilter EVERYONE = new BroadcastFilter(Optional.empty(), Map.of(), Optional.empty());

    private final Broadcasts broadcasts;
    private final Metrics metrics;

    public BroadcastRoutes(Broadcasts broadcasts, Metrics metrics) {
        this.broadcasts = broadcasts;
        this.metrics = metrics;
    }

    public void register(Routes routes) {
        routes.post("/v1/broadcasts", this::broadcast);
    }

    private void broadcast(Exchange ex) {
        var caller = ex.caller();
        Body body = ex.body();
        BroadcastFilter filter = body.object("filter").map(f -> new BroadcastFilter(f.nodeId("group"),
                f.stringMap("labels"), f.string("kind").map(NodeKind::parse))).orElse(EVERYONE);
        var publication = broadcasts.broadcast(caller, filter, body.content());
        metrics.broadcasts.increment();
        ex.json(202, Views.publication(publication));
    }
}
