package dev.parley.server.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.policy.JsonSchemas;
import dev.parley.server.wire.Json;
import dev.parley.server.wire.Views;

/** {@code /v1/schemas}: the admin sets, reads, lists and removes the JSON Schema of each kind's data. */
public final class SchemaRoutes {
    private final JsonSchemas schemas;

    public SchemaRoutes(JsonSchemas schemas) {
        this.schemas = schemas;
    }

    public void register(Routes routes) {
        routes.get("/v1/schemas", this::list)
                .put("/v1/schemas/{kind}", this::put)
                .get("/v1/schemas/{kind}", this::get)
                .delete("/v1/schemas/{kind}", this::delete);
    }

    private void list(Exchange ex) {
        var caller = ex.caller();
        ObjectNode out = Json.object();
        var items = out.putArray("items");
        schemas.list(caller).forEach(s -> items.add(Views.schema(s)));
        ex.json(200, out);
    }

    private void put(Exchange ex) {
        var caller = ex.caller();
        if (!(caller instanceof dev.parley.core.Principal.Admin)) { // before reading a body it would refuse anyway
            throw new dev.parley.core.ParleyException(dev.parley.core.ErrorCode.FORBIDDEN,
                    "only the admin may set payload schemas");
        }
        String kind = ex.path("kind");
        ObjectNode document = ex.body().json();
        ex.json(200, Views.schema(schemas.put(caller, kind, document)));
    }

    private void get(Exchange ex) {
        var caller = ex.caller();
        ex.json(200, Views.schema(schemas.get(caller, ex.path("kind"))));
    }

    private void delete(Exchange ex) {
        var caller = ex.caller();
        schemas.delete(caller, ex.path("kind"));
        ex.noContent();
    }
}
