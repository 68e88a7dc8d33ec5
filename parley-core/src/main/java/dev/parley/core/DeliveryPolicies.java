package dev.parley.core;

import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How each node is reached: read on every delivery, so kept in memory, and changed only
 * through the store. The admin or the node itself may set its policy.
 */
public final class DeliveryPolicies {
    private final Map<NodeId, DeliveryPolicy> byNode = new ConcurrentHashMap<>();
    private final DeliveryStore store;
    private final PolicyRules rules;
    private final Graph graph;
    private final InstantSource clock;

    public DeliveryPolicies(DeliveryStore store, Graph graph, PolicyRules rules, InstantSource clock) {
        this.store = store;
        this.graph = graph;
        this.rules = rules;
        this.clock = clock;
        byNode.putAll(store.policies());
    }

    /** The node's policy; stream-only with default retries when none was set. */
    public DeliveryPolicy of(NodeId node) {
        return byNode.getOrDefault(node, DeliveryPolicy.STREAM_ONLY);
    }

    public Optional<Webhook> webhookOf(NodeId node) {
        return of(node).webhook();
    }

    public DeliveryPolicy read(Principal caller, NodeId node) {
        authorize(caller, node);
        return of(node);
    }

    public DeliveryPolicy put(Principal caller, NodeId node, DeliveryPolicy policy) {
        authorize(caller, node);
        store.putPolicy(node, policy, new AuditEntry(clock.instant(), caller.name(), "delivery.set", node.value(),
                AuditEntry.Decision.ALLOW, policy.webhook().map(w -> "webhook " + w.url()).orElse("stream only"),
                Optional.empty(), rules.version()));
        byNode.put(node, policy);
        return policy;
    }

    /**
     * Sets the policy of a relay: an address that is no node and only carries pushes the hub
     * composes (the webhooks that follow tasks). The hub itself decides; no caller is checked.
     */
    public void relay(NodeId relay, DeliveryPolicy policy, AuditEntry audit) {
        store.putPolicy(relay, policy, audit);
        byNode.put(relay, policy);
    }

    /** Drops a relay's policy: pushes still scheduled to it are forgotten when they come due. */
    public void unrelay(NodeId relay, AuditEntry audit) {
        store.removePolicy(relay, audit);
        byNode.remove(relay);
    }

    private void authorize(Principal caller, NodeId node) {
        graph.node(node).orElseThrow(() -> Registry.notFound(node));
        if (caller instanceof Principal.Caller c && !c.id().equals(node)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the admin or the node itself may set its delivery");
        }
    }
}
