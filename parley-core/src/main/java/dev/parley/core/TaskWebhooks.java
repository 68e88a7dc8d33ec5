package dev.parley.core;

import java.time.InstantSource;
import java.util.List;
import java.util.Optional;

/**
 * Setting and removing the webhooks that follow tasks (A2A push-notification configs). A
 * webhook is kept with its task, and its URL becomes the delivery policy of its relay
 * address, with the owner's retries, so that its pushes are scheduled, retried, signed and
 * dead-lettered like any push. Both writes are audited under the policy version in force.
 */
public final class TaskWebhooks {
    private static final String SET = "a2a.push.set";
    private static final String DELETE = "a2a.push.delete";

    private final TaskWebhookStore store;
    private final DeliveryPolicies policies;
    private final PolicyRules rules;
    private final InstantSource clock;

    public TaskWebhooks(TaskWebhookStore store, DeliveryPolicies policies, PolicyRules rules, InstantSource clock) {
        this.store = store;
        this.policies = policies;
        this.rules = rules;
        this.clock = clock;
    }

    /** Every webhook kept, for the hub's view at start. */
    public List<TaskWebhook> all() {
        return store.all();
    }

    /** Keeps {@code webhook} (replacing one of the same task and id) and points its relay at {@code target}. */
    public void put(TaskWebhook webhook, Webhook target) {
        Actor actor = new Actor(webhook.owner().value(), SET, clock.instant());
        policies.relay(webhook.relay(), new DeliveryPolicy(Optional.of(target), policies.of(webhook.owner()).retry(),
                Optional.empty()), allow(actor, webhook.relay().value(), "push config " + webhook.id() + " of task "
                + webhook.taskId() + " to " + target.url()));
        store.put(webhook, allow(actor, webhook.taskId(), "push config " + webhook.id()));
    }

    /** Removes {@code webhook}, by {@code caller}; pushes still scheduled to its relay are forgotten when due. */
    public void remove(NodeId caller, TaskWebhook webhook) {
        Actor actor = new Actor(caller.value(), DELETE, clock.instant());
        store.remove(webhook.taskId(), webhook.id(), allow(actor, webhook.taskId(), "push config " + webhook.id()));
        policies.unrelay(webhook.relay(), allow(actor, webhook.relay().value(), "push config " + webhook.id()
                + " of task " + webhook.taskId()));
    }

    private AuditEntry allow(Actor actor, String target, String reason) {
        return actor.allow(target, reason, Optional.empty(), rules.version(), Optional.empty());
    }
}
