package dev.parley.server.rest;

import dev.parley.core.Peers;
import dev.parley.server.http.Routes;
import dev.parley.server.wire.Views;

/**
 * {@code GET /v1/peers}: the nodes the caller may send to and why, decided by the same
 * access policy the router enforces on every send.
 */
public final class PeerRoutes {
    private final Peers peers;

    public PeerRoutes(Peers peers) {
        this.peers = peers;
    }

    public void register(Routes routes) {
        routes.get("/v1/peers", ex -> {
            var caller = ex.caller();
            ex.json(200, Views.peers(peers.self(caller), peers.of(caller)));
        });
    }
}
