package dev.parley.core;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

class AccessPolicyTest {
    private static final Instant NOW = Instant.parse("2026-11-22T10:00:00Z");
    private static final RuleInput.EnvelopeFacts MESSAGE = RuleInput.EnvelopeFacts.ofKind("message");
    private final Graph graph = new Graph();
    private final AccessPolicy policy = new AccessPolicy(graph);

    /** Three levels: root → lead-a, lead-b → a1, a2 (under lead-a), b1 (under lead-b) → a1x (under a1). */
    @BeforeEach
    void lineage() {
        node("root", null, 0);
        node("lead-a", "root", 1);
        node("lead-b", "root", 1);
        node("a1", "lead-a", 2);
        node("a2", "lead-a", 2);
        node("b1", "lead-b", 2);
        node("a1x", "a1", 3);
    }

    @Test
    void selfIsAllowed() {
        assertRoute("a1", "a1", Route.SELF);
    }

    @Test
    void parentAndChildReachEachOther() {
        assertRoute("lead-a", "a1", Route.INTRA_GROUP);
        assertRoute("a1", "lead-a", Route.INTRA_GROUP);
        assertRoute("a1", "a1x", Route.INTRA_GROUP);
    }

    @Test
    void siblingsReachEachOther() {
        assertRoute("a1", "a2", Route.INTRA_GROUP);
        assertRoute("lead-a", "lead-b", Route.INTRA_GROUP);
    }

    @Test
    void otherGroupsAreDeniedWithAReason() {
        for (String[] pair : new String[][]{{"a1", "b1"}, {"root", "a1"}, {"a1x", "lead-a"}, {"a1x", "a2"}}) {
            AclDecision.Denied denied = assertInstanceOf(AclDecision.Denied.class, decide(pair[0], pair[1]));
            assertEquals(true, denied.reason().contains(pair[0]) && denied.reason().contains(pair[1]), denied.reason());
        }
    }

    @Test
    void grantsAreOneDirectionalAndExpire() {
        graph.putGrant(new Grant("g1", NodeId.of("a1"), new GrantTarget.Node(NodeId.of("b1")), Optional.of(NOW.plusSeconds(60)), "", NOW));
        AclDecision.Allowed allowed = assertInstanceOf(AclDecision.Allowed.class, decide("a1", "b1"));
        assertEquals(new AclDecision.Allowed(Route.GRANT, "g1", Optional.empty(), AccessPolicy.VERSION), allowed);
        assertInstanceOf(AclDecision.Denied.class, decide("b1", "a1"));
        assertInstanceOf(AclDecision.Denied.class,
                policy.decide(node("a1"), node("b1"), MESSAGE, NOW.plusSeconds(60)));
    }

    @Test
    void deletedParentKeepsSiblingsInOneGroup() {
        graph.retire(NodeId.of("lead-a"));
        assertRoute("a1", "a2", Route.INTRA_GROUP);
        assertEquals(true, graph.isRetired(NodeId.of("lead-a")));
    }

    private void assertRoute(String from, String to, Route route) {
        AclDecision.Allowed allowed = assertInstanceOf(AclDecision.Allowed.class, decide(from, to));
        assertEquals(route, allowed.route());
    }

    private AclDecision decide(String from, String to) {
        return policy.decide(node(from), node(to), MESSAGE, NOW);
    }

    private Node node(String id) {
        return graph.node(NodeId.of(id)).orElseThrow();
    }

    private void node(String id, String parent, int depth) {
        graph.put(new Node(NodeId.of(id), NodeKind.EXTERNAL, Optional.ofNullable(parent).map(NodeId::of), Map.of(),
                depth, NOW));
    }
}
