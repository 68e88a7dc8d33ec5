package dev.parley.server;

import dev.parley.core.BroadcastFilter;
import dev.parley.core.Broadcasts;
import dev.parley.core.NodeKind;

import java.util.Map;
import java.util.Optional;

/** {@code /v1/broadcasts}: one payload to every node a filter selects (the admin: anyone; a node: its own groups). */
final class BroadcastRoutes {
    private static final BroadcastFilter EVERYONE = new BroadcastFilter(Optional.empty(), Map.of(), Optional.empty());

    private final Broadcasts broadcasts;
    private final Metrics metrics;

    BroadcastRoutes(Broadcasts broadcasts, Metrics metrics) {
        this.broadcasts = broadcasts;
        this.metrics = metrics;
    }

    void register(Routes routes) {
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
