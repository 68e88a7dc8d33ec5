package dev.parley.server.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.ErrorCode;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Principal;
import dev.parley.core.Rate;
import dev.parley.core.RateLimits;
import dev.parley.server.http.Body;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.wire.Json;

/**
 * {@code /v1/nodes/{id}/limits}: a node's token bucket. {@code PUT {"rate","burst"}} (admin)
 * overrides the hub's default for that node and is kept across restarts; {@code GET} (admin
 * or the node) reads it; {@code DELETE} (admin) puts the node back on the default.
 */
public final class LimitRoutes {
    private final RateLimits limits;

    public LimitRoutes(RateLimits limits) {
        this.limits = limits;
    }

    public void register(Routes routes) {
        routes.put("/v1/nodes/{id}/limits", this::put)
                .get("/v1/nodes/{id}/limits", this::get)
                .delete("/v1/nodes/{id}/limits", this::reset);
    }

    private void put(Exchange ex) {
        var caller = ex.caller();
        if (!(caller instanceof Principal.Admin)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the admin token may set rate limits");
        }
        NodeId node = ex.pathNode();
        Body body = ex.body();
        JsonNode rate = body.json().get("rate");
        if (rate == null || !rate.isNumber()) {
            throw Body.invalid("field 'rate' is required: requests per second, a number above 0");
        }
        long burst = body.longValue("burst").orElseThrow(() -> Body.invalid(
                "field 'burst' is required: how many requests may come at once, an integer of at least 1"));
        limits.set(caller, node, new Rate(rate.doubleValue(), burst));
        ex.json(200, view(node));
    }

    private void get(Exchange ex) {
        var caller = ex.caller();
        NodeId node = ex.pathNode();
        limits.read(caller, node);
        ex.json(200, view(node));
    }

    private void reset(Exchange ex) {
        var caller = ex.caller();
        NodeId node = ex.pathNode();
        limits.reset(caller, node);
        ex.json(200, view(node));
    }

    private ObjectNode view(NodeId node) {
        Rate rate = limits.rateOf(node);
        ObjectNode out = Json.object();
        out.put("node", node.value());
        out.put("rate", rate.perSecond());
        out.put("burst", rate.burst());
        out.put("default", !limits.overridden(node));
        return out;
    }
}
