package dev.parley.core;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static dev.parley.core.MemoryHub.ADMIN;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** A webhook that follows a task is kept with the task and becomes its relay's delivery policy, audited both ways. */
class TaskWebhooksTest {
    private static final RetryPolicy OWNERS_RETRIES = new RetryPolicy(3, 1_000, 10_000);

    private final MemoryHub hub = new MemoryHub();
    private final MemoryStore store = hub.store;
    private final DeliveryPolicies policies = new DeliveryPolicies(store, hub.graph, hub.rules, hub.clock);
    private final TaskWebhooks webhooks = new TaskWebhooks(store, policies, hub.rules, hub.clock);
    private final Webhook target = Webhook.of("https://example.test/push", "s3cret-s3cret-s3cret");
    private final TaskWebhook webhook = new TaskWebhook("task-1", "cfg-1", NodeId.of("lead"),
            NodeId.of("a2a-push.relay-1"), target.url().toString(), Optional.empty(), Optional.empty(),
            Optional.empty(), "1.0", MemoryHub.START);

    @BeforeEach
    void owner() {
        hub.node("lead", null);
        policies.put(ADMIN, NodeId.of("lead"), new DeliveryPolicy(Optional.empty(), OWNERS_RETRIES, Optional.empty()));
    }

    @Test
    void aWebhookIsKeptAndItsRelayPushesWithTheOwnersRetries() {
        String version = hub.nextVersion();
        webhooks.put(webhook, target);

        assertEquals(List.of(webhook), webhooks.all());
        assertEquals(new DeliveryPolicy(Optional.of(target), OWNERS_RETRIES, Optional.empty()),
                policies.of(webhook.relay()));
        assertEquals(List.of(
                allow("a2a.push.set", "a2a-push.relay-1", "push config cfg-1 of task task-1 to " + target.url(), version),
                allow("a2a.push.set", "task-1", "push config cfg-1", next(version))), store.audit("a2a.push.set"));
    }

    @Test
    void aRemovedWebhookTakesItsRelayPolicyWithIt() {
        webhooks.put(webhook, target);
        String version = hub.nextVersion();
        webhooks.remove(NodeId.of("lead"), webhook);

        assertEquals(List.of(), webhooks.all());
        assertEquals(DeliveryPolicy.STREAM_ONLY, policies.of(webhook.relay()));
        assertEquals(List.of(allow("a2a.push.delete", "task-1", "push config cfg-1", version),
                allow("a2a.push.delete", "a2a-push.relay-1", "push config cfg-1 of task task-1", next(version))),
                store.audit("a2a.push.delete"));
    }

    private static AuditEntry allow(String action, String target, String reason, String version) {
        return new AuditEntry(MemoryHub.START, "lead", action, target, AuditEntry.Decision.ALLOW, reason,
                Optional.empty(), version);
    }

    /** Each audit entry asks the rules for their version, and every ask is a new one here. */
    private static String next(String version) {
        return "p-" + (Integer.parseInt(version.substring(2)) + 1);
    }
}
