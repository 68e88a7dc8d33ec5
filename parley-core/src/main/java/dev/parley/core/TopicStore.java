package dev.parley.core;

import java.util.List;

/** Topic subscriptions, and the fan-out of topic events to the subscribers' inboxes. */
public interface TopicStore extends FanoutStore {

    /**
     * Records {@code wanted} with its audit entry, unless the node is already subscribed;
     * then the earlier subscription comes back and nothing is written.
     */
    Subscribed subscribe(Subscription wanted, AuditEntry audit);

    /** Removes the subscription; {@link ErrorCode#NOT_SUBSCRIBED} when there is none, and nothing is written. */
    void unsubscribe(TopicName topic, NodeId node, AuditEntry audit);

    /** The topic's subscriptions, oldest first. */
    List<Subscription> subscribers(TopicName topic);
}
