package dev.parley.core;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The core of one hub on in-memory ports: the live graph, the registry, the access policy
 * with policy rules, and a clock that moves only when told. Nodes and grants are made as the
 * admin makes them, through the registry.
 */
final class MemoryHub {
    static final Instant START = Instant.parse("2026-11-22T10:00:00Z");
    static final Principal ADMIN = new Principal.Admin();

    private final AtomicReference<Instant> now = new AtomicReference<>(START);
    /** How many times the policy rules in force were asked for; each answer is a new version. */
    private final AtomicInteger versions = new AtomicInteger();

    final InstantSource clock = now::get;
    final Graph graph = new Graph();
    final MemoryStore store = new MemoryStore();
    /** Policy rules whose version changes every time they are asked for, as if reloaded between any two decisions. */
    final TestRules rules = new TestRules(() -> "p-" + versions.incrementAndGet());
    final AccessPolicy policy = new AccessPolicy(graph, rules);
    final IdGenerator ids = new UuidV7(clock);
    final Tokens tokens = new Tokens("pa_admin-token", Map.of());
    final Registry registry = new Registry(graph, tokens, store, rules, clock, ids, 3);

    void advance(Duration by) {
        now.updateAndGet(t -> t.plus(by));
    }

    /** The policy version the next decision will be taken under. */
    String nextVersion() {
        return "p-" + (versions.get() + 1);
    }

    /** A node made by the admin: a root when {@code parent} is null. */
    Node node(String id, String parent) {
        return node(id, parent, Map.of());
    }

    Node node(String id, String parent, Map<String, String> labels) {
        return registry.create(ADMIN, new NewNode(NodeId.of(id), NodeKind.EXTERNAL,
                Optional.ofNullable(parent).map(NodeId::of), labels)).node();
    }

    Grant grant(String from, GrantTarget to) {
        return registry.grant(ADMIN, new NewGrant(NodeId.of(from), to, Optional.empty(), ""));
    }

    static Principal.Caller as(String node) {
        return new Principal.Caller(NodeId.of(node));
    }

    static Payload text(String text) {
        return new Payload(Optional.of(text), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                Map.of());
    }
}
