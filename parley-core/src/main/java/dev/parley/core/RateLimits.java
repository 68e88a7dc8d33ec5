package dev.parley.core;

import java.time.Duration;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Token buckets: one per node (the default rate, or the node's override set by the admin)
 * and one per key for callers without a node (a client address on the admission routes).
 * {@code take*} answer how long to wait when a request is over its rate.
 */
public final class RateLimits {
    /** Past this many keyed buckets, idle (full) ones are dropped; they would start full again anyway. */
    private static final int MAX_KEYED = 10_000;

    private final Graph graph;
    private final LimitStore store;
    private final PolicyRules rules;
    private final InstantSource clock;
    private final LongSupplier nanos;
    private final Rate nodeDefault;
    private final Map<NodeId, Rate> overrides = new ConcurrentHashMap<>();
    private final Map<NodeId, TokenBucket> nodeBuckets = new ConcurrentHashMap<>();
    private final Map<String, TokenBucket> keyed = new ConcurrentHashMap<>();

    public RateLimits(Graph graph, LimitStore store, PolicyRules rules, InstantSource clock, LongSupplier nanos,
                      Rate nodeDefault) {
        this.graph = graph;
        this.store = store;
        this.rules = rules;
        this.clock = clock;
        this.nanos = nanos;
        this.nodeDefault = nodeDefault;
        overrides.putAll(store.limits());
    }

    /** Takes a token from {@code node}'s bucket; the wait when there was none. */
    public Optional<Duration> takeForNode(NodeId node) {
        TokenBucket bucket = nodeBuckets.computeIfAbsent(node, n -> new TokenBucket(rateOf(n), nanos));
        return waitOf(bucket.take());
    }

    /** Takes a token from the bucket of {@code key} (created at {@code rate}); the wait when there was none. */
    public Optional<Duration> takeForKey(String key, Rate rate) {
        if (keyed.size() > MAX_KEYED) {
            keyed.values().removeIf(TokenBucket::full);
        }
        return waitOf(keyed.computeIfAbsent(key, k -> new TokenBucket(rate, nanos)).take());
    }

    public Rate rateOf(NodeId node) {
        return overrides.getOrDefault(node, nodeDefault);
    }

    public boolean overridden(NodeId node) {
        return overrides.containsKey(node);
    }

    /** The admin sets a node's rate; it takes effect at once and is kept across restarts. */
    public Rate set(Principal caller, NodeId node, Rate rate) {
        Registry.requireAdmin(caller, "set rate limits");
        graph.node(node).orElseThrow(() -> Registry.notFound(node));
        store.putLimit(node, rate, audit(caller, "limits.set", node, rate.perSecond() + "/s, burst " + rate.burst()));
        overrides.put(node, rate);
        nodeBuckets.computeIfPresent(node, (n, bucket) -> bucket.withRate(rate));
        return rate;
    }

    /** The admin puts a node back on the default rate. */
    public Rate reset(Principal caller, NodeId node) {
        Registry.requireAdmin(caller, "reset rate limits");
        graph.node(node).orElseThrow(() -> Registry.notFound(node));
        store.deleteLimit(node, audit(caller, "limits.reset", node, "back to the default"));
        overrides.remove(node);
        nodeBuckets.computeIfPresent(node, (n, bucket) -> bucket.withRate(nodeDefault));
        return nodeDefault;
    }

    /** A node's rate, shown to the admin and to the node itself. */
    public Rate read(Principal caller, NodeId node) {
        if (caller instanceof Principal.Caller c && !c.id().equals(node)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "a node may only read its own limits");
        }
        graph.node(node).orElseThrow(() -> Registry.notFound(node));
        return rateOf(node);
    }

    private AuditEntry audit(Principal caller, String action, NodeId node, String reason) {
        return new AuditEntry(clock.instant(), caller.name(), action, node.value(),
                AuditEntry.Decision.ALLOW, reason, Optional.empty(), rules.version());
    }

    private static Optional<Duration> waitOf(long nanos) {
        return nanos == 0 ? Optional.empty() : Optional.of(Duration.ofNanos(nanos));
    }
}
