package dev.parley.server;

import dev.parley.core.Peers;

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
            ex.json(200, Views.peers(peers.self(caller), peers.of(caller)));
        });
    }
}
