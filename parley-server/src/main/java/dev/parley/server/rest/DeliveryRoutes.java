package dev.parley.server.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.DeliveryPolicies;
import dev.parley.core.DeliveryPolicy;
import dev.parley.core.RetryPolicy;
import dev.parley.core.Webhook;
import dev.parley.server.http.Body;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.wire.Json;

import java.time.Duration;
import java.util.Optional;

/** {@code /v1/nodes/{id}/delivery}: how a node is reached (webhook, retries, redelivery). */
public final class DeliveryRoutes {
    private final DeliveryPolicies policies;

    public DeliveryRoutes(DeliveryPolicies policies) {
        this.policies = policies;
    }

    public void register(Routes routes) {
        routes.put("/v1/nodes/{id}/delivery", this::put)
                .get("/v1/nodes/{id}/delivery", this::get);
    }

    private void put(Exchange ex) {
        var caller = ex.caller();
        var node = ex.pathNode();
        Body body = ex.body();
        Optional<Webhook> webhook = body.object("webhook").map(w -> Webhook.of(w.requiredString("url"),
                w.requiredString("secret")));
        RetryPolicy retry = body.object("retry").map(r -> new RetryPolicy(
                Math.toIntExact(Math.min(Integer.MAX_VALUE, r.longValue("maxAttempts")
                        .orElse((long) RetryPolicy.DEFAULT.maxAttempts()))),
                r.longValue("baseMs").orElse(RetryPolicy.DEFAULT.baseMs()),
                r.longValue("capMs").orElse(RetryPolicy.DEFAULT.capMs()))).orElse(RetryPolicy.DEFAULT);
        Optional<Duration> redeliverAfter = body.longValue("redeliverAfterMs").map(Duration::ofMillis);
        ex.json(200, view(policies.put(caller, node, new DeliveryPolicy(webhook, retry, redeliverAfter))));
    }

    private void get(Exchange ex) {
        var caller = ex.caller();
        ex.json(200, view(policies.read(caller, ex.pathNode())));
    }

    /** The policy as set, with the secret withheld: it is shown to no one after it is set. */
    private static ObjectNode view(DeliveryPolicy policy) {
        ObjectNode out = Json.object();
        if (policy.webhook().isPresent()) {
            ObjectNode webhook = out.putObject("webhook");
            webhook.put("url", policy.webhook().get().url().toString());
            webhook.put("secret", "********");
        } else {
            out.set("webhook", null);
        }
        ObjectNode retry = out.putObject("retry");
        retry.put("maxAttempts", policy.retry().maxAttempts());
        retry.put("baseMs", policy.retry().baseMs());
        retry.put("capMs", policy.retry().capMs());
        out.set("redeliverAfterMs", policy.redeliverAfter()
                .<JsonNode>map(d -> Json.MAPPER.getNodeFactory().numberNode(d.toMillis()))
                .orElse(Json.MAPPER.getNodeFactory().nullNode()));
        return out;
    }
}
