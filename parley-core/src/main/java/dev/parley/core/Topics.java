package dev.parley.core;

import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;

/**
 * Topics: nodes subscribe themselves, and a node's event on a topic reaches every
 * subscriber that its ACL lets the publisher reach, or every subscriber when the publisher
 * holds a grant to {@code topic:<name>}. All deliveries of one event, and the decision for
 * each subscriber, are committed in one transaction.
 */
public final class Topics {
    /** The kind of the envelopes a publication produces. */
    public static final String EVENT_KIND = "event";

    private final Graph graph;
    private final AccessPolicy policy;
    private final PostOffice office;
    private final TopicStore store;
    private final InstantSource clock;
    private final Federation federation;

    public Topics(Graph graph, AccessPolicy policy, PayloadSchemas schemas, TopicStore store, InstantSource clock,
                  IdGenerator ids) {
        this(graph, policy, schemas, store, clock, ids, Federation.NONE);
    }

    /** On a gateway: subscriptions are shared in the state room, so that publishers on any gateway reach them. */
    public Topics(Graph graph, AccessPolicy policy, PayloadSchemas schemas, TopicStore store, InstantSource clock,
                  IdGenerator ids, Federation federation) {
        this.graph = graph;
        this.federation = federation;
        this.policy = policy;
        this.office = new PostOffice(graph, policy, schemas, ids);
        this.store = store;
        this.clock = clock;
    }

    /**
     * Subscribes the caller itself; subscribing again returns the first subscription. On a
     * gateway the subscription is shared first: should the local commit then fail, what other
     * gateways publish for it is refused by this gateway's own check, never delivered.
     */
    public Subscribed subscribe(Principal caller, TopicName topic) {
        Node node = caller.actingNode(graph, "subscribe to topics");
        Instant now = clock.instant();
        Subscription wanted = new Subscription(topic, node.id(), now);
        federation.subscribed(wanted);
        return store.subscribe(wanted,
                Actor.of(caller, "topic.subscribe", now).allow(topicTarget(topic), "subscribed", Optional.empty(),
                        policy.version(), Optional.empty()));
    }

    /**
     * Unsubscribes the caller itself. On a gateway the state room is told first (deleting is
     * idempotent there), so that a retry after a 503 still reaches it; events already on their
     * way meanwhile are delivered, as they would be to a local subscriber.
     */
    public void unsubscribe(Principal caller, TopicName topic) {
        Node node = caller.actingNode(graph, "unsubscribe from topics");
        federation.unsubscribed(topic, node.id());
        store.unsubscribe(topic, node.id(),
                Actor.of(caller, "topic.unsubscribe", clock.instant()).allow(topicTarget(topic), "unsubscribed",
                        Optional.empty(), policy.version(), Optional.empty()));
    }

    /**
     * How a topic event reaches a subscriber: the built-in ACL, or else an active grant to the
     * topic (policy rules apply around it as around any send). The receiving gateway of a
     * federation re-checks an event from another gateway the same way.
     */
    static AclDecision reach(AccessPolicy.Check check, Node publisher, Node subscriber, TopicName topic,
                             Optional<Grant> topicGrant) {
        return switch (check.acl(publisher, subscriber)) {
            case AclDecision.Allowed allowed -> allowed;
            case AclDecision.Denied denied -> topicGrant.<AclDecision>map(g -> check.allowed(Route.GRANT, g.id()))
                    .orElseGet(() -> new AclDecision.Denied(denied.reason() + ", and no active grant to "
                            + topicTarget(topic), denied.rule(), denied.policyVersion()));
        };
    }

    /** The subscribers of a topic, for the admin. */
    public List<Subscription> subscribers(Principal caller, TopicName topic) {
        Registry.requireAdmin(caller, "list the subscribers of a topic");
        return store.subscribers(topic);
    }

    /**
     * Publishes {@code payload} as the caller. The publisher never receives its own event;
     * subscribers that were deleted are passed over; subscribers the access policy refuses
     * get nothing, and the refusal is audited with the publication. A grant to the topic
     * stands in for the ACL; policy rules apply around it as around any send. Every
     * subscriber is decided under the same policy version.
     */
    public Publication publish(Principal caller, TopicName topic, Payload payload) {
        Node publisher = caller.actingNode(graph, "publish topic events");
        Actor actor = Actor.of(caller, "topic.publish", clock.instant());
        List<Node> subscribers = store.subscribers(topic).stream()
                .flatMap(s -> graph.node(s.node()).stream())
                .filter(n -> !n.id().equals(publisher.id()))
                .toList();
        Optional<Grant> topicGrant = graph.activeGrant(publisher.id(), new GrantTarget.Topic(topic), actor.at());
        PostOffice.Reach reach = (check, subscriber) -> reach(check, publisher, subscriber, topic, topicGrant);
        Draft draft = new Draft(publisher.id(), EVENT_KIND, Optional.of(Route.TOPIC), Optional.of(topic.value()), payload,
                Optional.empty());
        return office.publish(actor, topicTarget(topic), RuleInput.Party.of(publisher, graph), subscribers, draft, reach,
                Optional.empty(), store);
    }

    private static String topicTarget(TopicName topic) {
        return new GrantTarget.Topic(topic).wire();
    }
}
