package dev.parley.server.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.Publication;
import dev.parley.core.Subscribed;
import dev.parley.core.TopicName;
import dev.parley.core.Topics;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.metrics.Metrics;
import dev.parley.server.wire.Json;
import dev.parley.server.wire.Views;

/** {@code /v1/topics/{name}}: a node subscribes itself, leaves, and publishes events; the admin lists subscribers. */
public final class TopicRoutes {
    private final Topics topics;
    private final Metrics metrics;

    public TopicRoutes(Topics topics, Metrics metrics) {
        this.topics = topics;
        this.metrics = metrics;
    }

    public void register(Routes routes) {
        routes.post("/v1/topics/{name}/subscriptions", this::subscribe)
                .delete("/v1/topics/{name}/subscriptions", this::unsubscribe)
                .get("/v1/topics/{name}/subscriptions", this::subscribers)
                .post("/v1/topics/{name}/events", this::publish);
    }

    private void subscribe(Exchange ex) {
        var caller = ex.caller();
        Subscribed subscribed = topics.subscribe(caller, topic(ex));
        ex.json(subscribed.created() ? 201 : 200, Views.subscription(subscribed.subscription()));
    }

    private void unsubscribe(Exchange ex) {
        var caller = ex.caller();
        topics.unsubscribe(caller, topic(ex));
        ex.noContent();
    }

    private void subscribers(Exchange ex) {
        var caller = ex.caller();
        ObjectNode out = Json.object();
        var items = out.putArray("items");
        topics.subscribers(caller, topic(ex)).forEach(s -> items.add(Views.subscription(s)));
        ex.json(200, out);
    }

    private void publish(Exchange ex) {
        var caller = ex.caller();
        TopicName topic = topic(ex);
        Publication publication = topics.publish(caller, topic, ex.body().content());
        metrics.topicEvents.increment();
        ex.json(202, Views.publication(publication));
    }

    private static TopicName topic(Exchange ex) {
        return TopicName.of(ex.path("name"));
    }
}
