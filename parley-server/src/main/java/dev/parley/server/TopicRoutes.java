package dev.parley.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.Publication;
import dev.parley.core.Subscribed;
import dev.parley.core.TopicName;
import dev.parley.core.Topics;

/** {@code /v1/topics/{name}}: a node subscribes itself, leaves, and publishes events; the admin lists subscribers. */
final class TopicRoutes {
    private final Topics topics;
    private final Metrics metrics;

    TopicRoutes(Topics topics, Metrics metrics) {
        this.topics = topics;
        this.metrics = metrics;
    }

    void register(Routes routes) {
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
