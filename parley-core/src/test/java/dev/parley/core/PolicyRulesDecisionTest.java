package dev.parley.core;

import dev.parley.core.TestRules.Rule;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The one decision function: deny rules, then the ACL (or a surface's own reach), then allow rules. */
class PolicyRulesDecisionTest {
    private static final Instant NOW = Instant.parse("2026-11-22T10:00:00Z");
    private static final RuleInput.EnvelopeFacts MESSAGE = RuleInput.EnvelopeFacts.ofKind("message");

    private final Graph graph = new Graph();
    private final TestRules rules = new TestRules(() -> "p-test");
    private final AccessPolicy policy = new AccessPolicy(graph, rules);

    @BeforeEach
    void lineage() {
        node("lead-a", null);
        node("a1", "lead-a");
        node("a2", "lead-a");
        node("lead-b", null);
        node("b1", "lead-b");
    }

    @Test
    void aDenyRuleRefinesTheAclAndNamesItself() {
        rules.add(new Rule("no-a2", PolicyRules.Effect.DENY, in -> in.target().id().equals("a2")));
        AclDecision.Denied denied = assertInstanceOf(AclDecision.Denied.class, decide("a1", "a2"));
        assertEquals(Optional.of("no-a2"), denied.rule());
        assertEquals("p-test", denied.policyVersion());
        assertTrue(denied.reason().contains("no-a2"), denied.reason());
        AclDecision.Allowed allowed = assertInstanceOf(AclDecision.Allowed.class, decide("a2", "a1"));
        assertEquals(new AclDecision.Allowed(Route.INTRA_GROUP, null, Optional.empty(), "p-test"), allowed);
    }

    @Test
    void denyWinsOverAnAllowRuleAndOverAGrant() {
        graph.putGrant(new Grant("g1", NodeId.of("a1"), new GrantTarget.Node(NodeId.of("b1")), Optional.empty(), "", NOW));
        rules.add(new Rule("let-all", PolicyRules.Effect.ALLOW, in -> true));
        rules.add(new Rule("no-b1", PolicyRules.Effect.DENY, in -> in.target().id().equals("b1")));
        assertEquals(Optional.of("no-b1"), decide("a1", "b1").rule());
        assertInstanceOf(AclDecision.Denied.class, decide("a1", "b1"));
    }

    @Test
    void anAllowRuleWidensOnlyWhereTheAclRefuses() {
        rules.add(new Rule("coders", PolicyRules.Effect.ALLOW, in -> "coder".equals(in.sender().labels().get("role"))));
        graph.put(new Node(NodeId.of("c1"), NodeKind.EXTERNAL, Optional.of(NodeId.of("lead-a")), Map.of("role", "coder"),
                1, NOW));
        AclDecision.Allowed widened = assertInstanceOf(AclDecision.Allowed.class, decide("c1", "b1"));
        assertEquals(Route.POLICY, widened.route());
        assertEquals(Optional.of("coders"), widened.rule());
        assertEquals("policy rule coders", widened.why());
        AclDecision.Allowed acl = assertInstanceOf(AclDecision.Allowed.class, decide("c1", "a1"));
        assertEquals(Route.INTRA_GROUP, acl.route());
        assertEquals(Optional.empty(), acl.rule(), "the ACL decided, not the rule");
        AclDecision.Denied denied = assertInstanceOf(AclDecision.Denied.class, decide("a1", "b1"));
        assertEquals(Optional.empty(), denied.rule());
        assertEquals("p-test", denied.policyVersion());
    }

    @Test
    void aRuleThatCannotBeEvaluatedFailsClosedForDenyAndOpenForNothing() {
        rules.add(new Rule("broken-allow", PolicyRules.Effect.ALLOW, in -> {
            throw new IllegalStateException("no such key");
        }));
        assertInstanceOf(AclDecision.Denied.class, decide("a1", "b1"));
        rules.add(new Rule("broken-deny", PolicyRules.Effect.DENY, in -> {
            throw new IllegalStateException("no such key");
        }));
        AclDecision.Denied denied = assertInstanceOf(AclDecision.Denied.class, decide("a1", "a2"));
        assertEquals(Optional.of("broken-deny"), denied.rule());
        assertTrue(denied.reason().contains("no such key"), denied.reason());
    }

    @Test
    void aSurfaceWithItsOwnReachKeepsItsRouteAndRulesStillDeny() {
        rules.add(new Rule("quiet-b1", PolicyRules.Effect.DENY, in -> in.target().id().equals("b1")
                && in.sender().kind().equals("hub")));
        AccessPolicy.Check check = policy.check(NOW);
        AclDecision allowed = check.decide(RuleInput.Party.hub(), node("a1"), MESSAGE,
                () -> check.allowed(Route.BROADCAST, null));
        assertEquals(Route.BROADCAST, assertInstanceOf(AclDecision.Allowed.class, allowed).route());
        assertInstanceOf(AclDecision.Denied.class, check.decide(RuleInput.Party.hub(), node("b1"), MESSAGE,
                () -> check.allowed(Route.BROADCAST, null)));
    }

    @Test
    void rulesSeeTheGroupParentAndEnvelopeFacts() {
        List<RuleInput> seen = new ArrayList<>();
        rules.add(new Rule("spy", PolicyRules.Effect.DENY, in -> {
            seen.add(in);
            return false;
        }));
        Payload payload = new Payload(Optional.of("héllo"), Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.empty(), Map.of("k", "v"));
        policy.decide(node("a1"), node("lead-b"), RuleInput.EnvelopeFacts.of("note", payload, Optional.empty()), NOW);
        RuleInput in = seen.getFirst();
        assertEquals(new RuleInput.Party("a1", "external", Map.of(), "lead-a", List.of("lead-a", "a1", "a2")), in.sender());
        assertEquals(new RuleInput.Party("lead-b", "external", Map.of(), "", List.of("lead-b", "b1")), in.target());
        assertEquals(new RuleInput.EnvelopeFacts("note", 6, Map.of("k", "v"), ""), in.envelope());
    }

    @Test
    void textSizeCountsUtf8BytesWithoutEncoding() {
        for (String text : List.of("", "abc", "héllo", "日本", "a😀b", "\uD800x")) {
            assertEquals(text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length,
                    RuleInput.EnvelopeFacts.utf8Length(text), text);
        }
    }

    private AclDecision decide(String from, String to) {
        return policy.decide(node(from), node(to), MESSAGE, NOW);
    }

    private Node node(String id) {
        return graph.node(NodeId.of(id)).orElseThrow();
    }

    private void node(String id, String parent) {
        graph.put(new Node(NodeId.of(id), NodeKind.EXTERNAL, Optional.ofNullable(parent).map(NodeId::of), Map.of(),
                parent == null ? 0 : 1, NOW));
    }
}
