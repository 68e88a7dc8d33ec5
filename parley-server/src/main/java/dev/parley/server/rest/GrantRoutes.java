package dev.parley.server.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.GrantTarget;
import dev.parley.core.NewGrant;
import dev.parley.core.NodeId;
import dev.parley.core.Registry;
import dev.parley.server.http.Body;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.wire.Json;
import dev.parley.server.wire.Views;

/** {@code /v1/grants}: one-directional permissions across groups. */
public final class GrantRoutes {
    private final Registry registry;

    public GrantRoutes(Registry registry) {
        this.registry = registry;
    }

    public void register(Routes routes) {
        routes.post("/v1/grants", this::create)
                .get("/v1/grants", this::list)
                .delete("/v1/grants/{gid}", this::delete);
    }

    private void create(Exchange ex) {
        var caller = ex.caller();
        Body body = ex.body();
        NewGrant request = new NewGrant(NodeId.of(body.requiredString("from")), GrantTarget.parse(body.requiredString("to")),
                body.instant("expiresAt"), body.string("note").orElse(""));
        ex.json(201, Views.grant(registry.grant(caller, request)));
    }

    private void list(Exchange ex) {
        var caller = ex.caller();
        ObjectNode out = Json.object();
        var items = out.putArray("items");
        registry.grants(caller).forEach(g -> items.add(Views.grant(g)));
        ex.json(200, out);
    }

    private void delete(Exchange ex) {
        var caller = ex.caller();
        registry.revokeGrant(caller, ex.path("gid"));
        ex.noContent();
    }
}
