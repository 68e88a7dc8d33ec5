package dev.parley.server.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.DeliveryPolicies;
import dev.parley.core.DeliveryPolicy;
import dev.parley.core.NodeId;
import dev.parley.core.RetryPolicy;
import dev.parley.core.Webhook;
import dev.parley.server.delivery.Dispatcher;
import dev.parley.server.delivery.InboxFeeds;
import dev.parley.server.http.Body;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.wire.Json;

import java.time.Duration;
import java.util.Optional;

/**
 * {@code /v1/nodes/{id}/delivery}: how a node is reached (webhook, retries, redelivery); a read
 * also shows how it stands now ({@code live}): its open streams and its webhook's failures and
 * waiting pushes.
 */
public final class DeliveryRoutes {
    private final DeliveryPolicies policies;
    private final Dispatcher dispatcher;
    private final InboxFeeds feeds;

    public DeliveryRoutes(DeliveryPolicies policies, Dispatcher dispatcher, InboxFeeds feeds) {
        this.policies = policies;
        this.dispatcher = dispatcher;
        this.feeds = feeds;
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
        NodeId node = ex.pathNode();
        DeliveryPolicy policy = policies.read(caller, node); // first: it decides whether the caller may see the node
        ObjectNode out = view(policy);
        Dispatcher.WebhookState webhook = dispatcher.webhookState(node);
        // a run of failures ends at the next delivery; one of a webhook since removed is not shown
        Optional<Dispatcher.Failing> failing = webhook.failing().filter(f -> policy.webhook().isPresent());
        ObjectNode live = out.putObject("live");
        live.put("streams", feeds.streams(node));
        live.put("failing", failing.isPresent());
        live.put("failingSince", failing.map(f -> Json.time(f.since())).orElse(null));
        live.put("failedAttempts", failing.map(Dispatcher.Failing::attempts).orElse(0));
        live.put("lastError", failing.map(Dispatcher.Failing::lastError).orElse(null));
        live.put("pushesWaiting", webhook.waiting().count());
        live.put("nextAttemptAt", webhook.waiting().nextAt().map(Json::time).orElse(null));
        ex.json(200, out);
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
