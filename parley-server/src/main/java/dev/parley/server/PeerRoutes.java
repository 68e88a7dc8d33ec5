package dev.parley.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.Node;
import dev.parley.core.NodeId;
import dev.parley.core.Peers;

import java.util.List;

/**
 * {@code GET /v1/peers}: the nodes the caller may send to and why, decided by the same
 * access policy the router enforces on every send.
 */
final class PeerRoutes {
    private final Peers peers;

    PeerRoutes(Peers peers) {
        this.peers = peers;
    }

    void register(Routes routes) {
        routes.get("/v1/peers", ex -> {
            var caller = ex.caller();
            ex.json(200, view(peers.self(caller), peers.of(caller)));
        });
    }

    /** {@code {"node": me, "items": [{"id","kind","parent","labels","route","grantId","reason"}]}}. */
    static ObjectNode view(Node self, List<Peers.Peer> reachable) {
        ObjectNode out = Json.object();
        out.put("node", self.id().value());
        var items = out.putArray("items");
        for (Peers.Peer peer : reachable) {
            ObjectNode item = items.addObject();
            item.put("id", peer.node().id().value());
            item.put("kind", peer.node().kind().wire());
            item.put("parent", peer.node().parent().map(NodeId::value).orElse(null));
            var labels = item.putObject("labels");
            peer.node().labels().forEach(labels::put);
            item.put("route", peer.route().wire());
            item.put("grantId", peer.grant().map(g -> g.id()).orElse(null));
            item.put("reason", peer.reason());
        }
        return out;
    }
}
