package dev.parley.server.rest;

import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.permission.Permissions;

/** {@code POST /v1/permissions}: the caller's node asks whether it may call a tool; held until decided. */
public final class PermissionRoutes {
    private final Permissions permissions;

    public PermissionRoutes(Permissions permissions) {
        this.permissions = permissions;
    }

    public void register(Routes routes) {
        routes.post("/v1/permissions", this::decide);
    }

    private void decide(Exchange ex) throws InterruptedException {
        ex.json(200, permissions.decide(ex.caller(), ex.body()));
    }
}
