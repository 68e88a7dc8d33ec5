package dev.parley.server.policy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.Hub;
import dev.parley.server.HubConfig;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.policy.PolicyFiles.allow;
import static dev.parley.server.policy.PolicyFiles.deny;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Policy rules over HTTP against a real hub: deny rules refine the ACL, allow rules widen it,
 * every surface obeys them, bad files are refused whole, changed files are reloaded, and
 * dry-run checks write nothing.
 */
class PolicyRulesTest {
    /** Quarantined nodes receive nothing; x1 may reach coders outside its group. */
    private static final String QUARANTINE = "target.labels.?quarantine.orValue('') == 'true'";
    private static final String EXT_TO_CODERS = "sender.id == 'x1' && target.labels.?role.orValue('') == 'coder'";

    @TempDir
    Path dir;
    private HubFixture hub;
    private Path file;

    @AfterEach
    void stop() {
        if (hub != null) {
            hub.close();
        }
    }

    /** lead leads w1 (a coder) and w2 (quarantined); ext leads x1. */
    private void start(String rules, String fileName) {
        file = dir.resolve(fileName);
        PolicyFiles.write(file, rules);
        hub = HubFixture.start(dir.resolve("data"), c -> c.withPolicy(Optional.of(file))
                .withPolicyReloadInterval(Duration.ofMillis(20)));
        hub.createNode("lead", null);
        node("w1", "lead", Map.of("role", "coder"));
        node("w2", "lead", Map.of("quarantine", "true"));
        hub.createNode("ext", null);
        hub.createNode("x1", "ext");
    }

    private String node(String id, String parent, Map<String, String> labels) {
        Resp r = hub.post(hub.admin(), "/v1/nodes", obj("id", id, "kind", "external", "parent", parent, "labels", labels));
        assertStatus(201, r);
        return r.text("token");
    }

    private String token(String id) {
        return assertStatus(200, hub.post(hub.admin(), "/v1/nodes/" + id + "/token", null)).text("token");
    }

    @Test
    void aDenyRuleRefinesTheAclAndEveryDecisionRecordsTheRuleAndVersion() {
        start(PolicyFiles.json(List.of(deny("quarantine", QUARANTINE))), "policy.json");
        String lead = token("lead");
        JsonNode policy = PolicyFiles.policy(hub);
        String version = policy.get("version").asText();
        assertTrue(version.matches("p-[0-9a-f]{12}"), version);
        assertEquals(1, policy.get("rules").size());
        assertEquals("quarantine", policy.get("rules").get(0).get("name").asText());
        assertEquals("deny", policy.get("rules").get(0).get("effect").asText());
        assertEquals(QUARANTINE, policy.get("rules").get(0).get("when").asText());
        assertEquals(file.toAbsolutePath().toString(), policy.get("source").asText());
        assertTrue(policy.get("loadedAt").isTextual());
        assertTrue(policy.get("lastError").isNull());

        // Intra-group, so the ACL alone would allow it: the rule refuses, and says so.
        Resp denied = assertError(hub.send(lead, "w2", "hello"), 403, "acl_denied");
        assertTrue(denied.text("reason").contains("quarantine"), denied.body());
        assertEquals("quarantine", denied.text("rule"));
        assertEquals(version, denied.text("policyVersion"));
        assertTrue(hub.inbox(token("w2")).isEmpty(), "nothing reaches a quarantined node");

        List<JsonNode> audit = hub.get(hub.admin(), "/v1/audit?rule=quarantine").items();
        assertEquals(1, audit.size(), audit::toString);
        JsonNode entry = audit.getFirst();
        assertEquals("deny", entry.get("decision").asText());
        assertEquals("lead", entry.get("actor").asText());
        assertEquals("w2", entry.get("target").asText());
        assertEquals("quarantine", entry.get("rule").asText());
        assertEquals(version, entry.get("policyVersion").asText());

        // What the rule does not match goes as before, under the same version and no rule.
        String sent = hub.sendOk(lead, "w1", "run the tests").text("id");
        JsonNode envelope = hub.inbox(token("w1")).getFirst();
        assertEquals(sent, envelope.get("id").asText());
        assertEquals("intra_group", envelope.at("/trace/route").asText());
        assertEquals(version, envelope.at("/trace/policyVersion").asText());
        assertTrue(envelope.at("/trace/rule").isMissingNode(), "the ACL decided: " + envelope);
        JsonNode allowed = hub.get(hub.admin(), "/v1/audit?node=w1&action=send").items().getFirst();
        assertEquals(version, allowed.get("policyVersion").asText());
        assertTrue(allowed.get("rule").isNull());
        assertEquals(1.0, hub.metric("parley_policy_decisions_total"));
    }

    @Test
    void anAllowRuleReachesBeyondTheAclWithRoutePolicyAndDenyStillWins() {
        start(PolicyFiles.json(List.of(allow("ext-to-coders", EXT_TO_CODERS), deny("quarantine", QUARANTINE))),
                "policy.json");
        String version = PolicyFiles.version(hub);
        String x1 = token("x1");

        String id = hub.sendOk(x1, "w1", "cross-group, by the rule").text("id");
        JsonNode envelope = hub.inbox(token("w1")).getFirst();
        assertEquals(id, envelope.get("id").asText());
        assertEquals("policy", envelope.at("/trace/route").asText());
        assertEquals("ext-to-coders", envelope.at("/trace/rule").asText());
        assertEquals(version, envelope.at("/trace/policyVersion").asText());
        JsonNode entry = hub.get(hub.admin(), "/v1/audit?rule=ext-to-coders").items().getFirst();
        assertEquals("allow", entry.get("decision").asText());
        assertEquals(id, entry.get("envelopeId").asText());
        assertEquals(version, entry.get("policyVersion").asText());

        // Not a coder: the ACL's refusal stands, no rule named.
        Resp acl = assertError(hub.send(x1, "lead", "no rule lets this"), 403, "acl_denied");
        assertEquals(null, acl.text("rule"));
        assertEquals(version, acl.text("policyVersion"));
        assertTrue(acl.text("reason").contains("different groups"), acl.body());

        // A coder in quarantine: the allow rule matches, the deny rule wins.
        hub.post(hub.admin(), "/v1/nodes", obj("id", "w3", "kind", "external", "parent", "lead",
                "labels", Map.of("role", "coder", "quarantine", "true")));
        assertEquals("quarantine", assertError(hub.send(x1, "w3", "x"), 403, "acl_denied").text("rule"));
    }

    /**
     * The rules' outcomes are kept by the facts they read ({@link RuleOutcomeReuseTest}): a node
     * joining or leaving the target's group and a grant still change the decision at once, and
     * every send is audited and counted as before, whether its outcome was kept or not.
     */
    @Test
    void decisionsFollowTheGraphWhileRuleOutcomesAreReused() {
        start(PolicyFiles.json(List.of(deny("crowded", "size(target.group) > 3"), allow("ext-to-coders", EXT_TO_CODERS))),
                "policy.json");
        String lead = token("lead");
        hub.sendOk(lead, "w1", "one");
        hub.sendOk(lead, "w1", "two");

        node("w3", "lead", Map.of()); // w1's group: lead, w1, w2 and now w3
        for (int i = 0; i < 2; i++) {
            assertEquals("crowded", assertError(hub.send(lead, "w1", "x"), 403, "acl_denied").text("rule"));
        }
        assertEquals(2.0, hub.metric("parley_policy_decisions_total"), "each decision counted");
        assertStatus(204, hub.delete(hub.admin(), "/v1/nodes/w3"));
        hub.sendOk(lead, "w1", "three");

        String x1 = token("x1"); // another group, not a coder: the ACL refuses until a grant
        assertTrue(assertError(hub.send(x1, "w2", "x"), 403, "acl_denied").text("reason").contains("different groups"));
        assertStatus(201, hub.post(hub.admin(), "/v1/grants", obj("from", "x1", "to", "w2")));
        hub.sendOk(x1, "w2", "granted");
        assertEquals("grant", hub.inbox(token("w2")).getLast().at("/trace/route").asText());

        List<JsonNode> audit = hub.get(hub.admin(), "/v1/audit?node=w1&action=send").items();
        assertEquals(List.of("allow", "allow", "allow", "deny", "deny"),
                audit.stream().map(e -> e.get("decision").asText()).sorted().toList(), audit::toString);
    }

    /**
     * matches() in rules: the hub keeps a regex compiled after its first use, so the same rule
     * must decide alike on every send; a regex that does not compile fails a deny rule closed,
     * every time (it is never kept).
     */
    @Test
    void rulesWithRegularExpressionsDecideEverySendAlikeAndABadOneFailsClosed() {
        start(PolicyFiles.json(List.of(deny("debug-kinds", "envelope.kind.matches('^debug[.].*')"),
                deny("meta-pattern", "matches(target.id, envelope.meta.?deny.orValue('^$'))"))), "policy.json");
        String lead = token("lead");
        for (int i = 0; i < 3; i++) {
            Resp debug = assertError(hub.post(lead, "/v1/messages", obj("to", "w1", "kind", "debug.trace",
                    "text", "x")), 403, "acl_denied");
            assertEquals("debug-kinds", debug.text("rule"));
            hub.sendOk(lead, "w1", "not a debug kind " + i);
            assertStatus(202, hub.post(lead, "/v1/messages", obj("to", "w1", "kind", "debugger", "text", "x")));
            Resp meta = assertError(hub.post(lead, "/v1/messages", obj("to", "w1", "text", "x",
                    "meta", Map.of("deny", "w[0-9]"))), 403, "acl_denied");
            assertEquals("meta-pattern", meta.text("rule"));
            assertStatus(202, hub.post(lead, "/v1/messages", obj("to", "w1", "text", "x", "meta", Map.of("deny", "x.*"))));
            Resp bad = assertError(hub.post(lead, "/v1/messages", obj("to", "w1", "text", "x",
                    "meta", Map.of("deny", "w("))), 403, "acl_denied");
            assertEquals("meta-pattern", bad.text("rule"));
            assertTrue(bad.text("reason").contains("could not be evaluated"), bad.body());
        }
        assertEquals(9, hub.inbox(token("w1")).size(), "three sends a round pass every rule");
    }

    @Test
    void topicsBroadcastsAndTasksObeyTheSameRules() {
        start(PolicyFiles.json(List.of(deny("quarantine", QUARANTINE))), "policy.json");
        String version = PolicyFiles.version(hub);
        String lead = token("lead");
        String w1 = token("w1");
        String w2 = token("w2");
        assertStatus(201, hub.post(w1, "/v1/topics/builds/subscriptions", null));
        assertStatus(201, hub.post(w2, "/v1/topics/builds/subscriptions", null));

        Resp published = assertStatus(202, hub.post(lead, "/v1/topics/builds/events", obj("text", "green")));
        assertEquals(1, published.num("delivered"));
        JsonNode event = hub.inbox(w1).getFirst();
        assertEquals("event", event.get("kind").asText());
        assertEquals(version, event.at("/trace/policyVersion").asText());
        assertTrue(hub.inbox(w2).isEmpty());
        JsonNode refusal = hub.get(hub.admin(), "/v1/audit?action=topic.publish&decision=deny").items().getFirst();
        assertEquals("w2", refusal.get("target").asText());
        assertEquals("quarantine", refusal.get("rule").asText());

        Resp broadcast = assertStatus(202, hub.post(lead, "/v1/broadcasts", obj("text", "all hands")));
        assertEquals(1, broadcast.num("delivered"), "w2 is refused by the rule: " + broadcast);
        assertEquals("broadcast", hub.inbox(w1).getLast().get("kind").asText());
        assertTrue(hub.inbox(w2).isEmpty());
        Resp admin = assertStatus(202, hub.post(hub.admin(), "/v1/broadcasts", obj("filter", Map.of("group", "lead"),
                "text", "from the hub")));
        assertEquals(2, admin.num("delivered"), "lead and w1, not w2: " + admin);

        Resp task = assertError(hub.post(lead, "/v1/tasks", obj("to", "w2", "title", "fix it")), 403, "acl_denied");
        assertEquals("quarantine", task.text("rule"));
        assertEquals(version, task.text("policyVersion"));
        assertStatus(201, hub.post(lead, "/v1/tasks", obj("to", "w1", "title", "fix it")));
        assertEquals(version, hub.inbox(w1).getLast().at("/trace/policyVersion").asText());
    }

    @Test
    void aFileThatDoesNotCompileIsRefusedWholeAndTheRulesInForceStay() {
        start("rules:\n  - name: quarantine\n    effect: deny\n    when: \"" + QUARANTINE + "\"\n", "policy.yaml");
        String version = PolicyFiles.version(hub);
        String lead = token("lead");
        assertError(hub.send(lead, "w2", "x"), 403, "acl_denied");

        String good = "  - name: open\n    effect: allow\n    when: \"true\"\n";
        refused(version, "rules:\n" + good + "  - name: broken\n    effect: deny\n    when: \"sender.id ==\"\n",
                "broken", "mismatched input");
        refused(version, "rules:\n" + good + "  - name: not-bool\n    effect: deny\n    when: \"sender.id\"\n",
                "not-bool", "must be bool");
        refused(version, "rules:\n" + good + "  - name: unknown\n    effect: deny\n    when: \"foo == 1\"\n",
                "unknown", "undeclared reference to 'foo'");
        refused(version, "rules:\n" + good + "  - name: no-field\n    effect: deny\n    when: \"sender.nope == 'x'\"\n",
                "no-field", "undefined field 'nope'");
        refused(version, "rules:\n" + good + "  - name: open\n    effect: deny\n    when: \"true\"\n",
                "open", "used by an earlier rule");

        // The old rules still decide: the quarantine holds, and "open" never took effect.
        assertEquals("quarantine", assertError(hub.send(lead, "w2", "x"), 403, "acl_denied").text("rule"));
        assertError(hub.send(token("x1"), "lead", "x"), 403, "acl_denied");
        assertTrue(hub.metric("parley_policy_reload_failures_total") >= 5);

        // A good file clears the error.
        PolicyFiles.write(file, "rules: []\n");
        String empty = PolicyFiles.awaitNewVersion(hub, version);
        assertTrue(PolicyFiles.policy(hub).get("lastError").isNull());
        assertEquals(0, PolicyFiles.policy(hub).get("rules").size());
        assertNotEquals("builtin-acl-1", empty, "an empty file is still a file of rules");
        hub.sendOk(lead, "w2", "no rules, the ACL allows it");
    }

    private void refused(String version, String content, String rule, String error) {
        PolicyFiles.write(file, content);
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10)).until(() -> {
            JsonNode lastError = PolicyFiles.policy(hub).get("lastError");
            return lastError.isObject() && lastError.get("problems").toString().contains(error);
        });
        JsonNode policy = PolicyFiles.policy(hub);
        assertEquals(version, policy.get("version").asText(), "the previous rules stay in force");
        assertEquals("quarantine", policy.get("rules").get(0).get("name").asText());
        JsonNode problem = policy.at("/lastError/problems/0");
        assertEquals(rule, problem.get("rule").asText(), policy::toString);
        assertEquals(1, problem.get("index").asInt(), "the second rule is the bad one: " + policy);
        assertTrue(policy.at("/lastError/message").asText().contains("refused"), policy::toString);
        assertEquals(1, policy.at("/lastError/problems").size(), "the good rule has no problem: " + policy);
    }

    @Test
    void aChangedFileIsReloadedAndDecisionsFollowIt() {
        start(PolicyFiles.json(List.of(deny("quarantine", QUARANTINE))), "policy.json");
        String first = PolicyFiles.version(hub);
        String lead = token("lead");
        String x1 = token("x1");
        assertError(hub.send(lead, "w2", "x"), 403, "acl_denied");
        assertError(hub.send(x1, "w1", "x"), 403, "acl_denied");

        PolicyFiles.write(file, PolicyFiles.json(List.of(allow("ext-to-coders", EXT_TO_CODERS))));
        String second = PolicyFiles.awaitNewVersion(hub, first);
        assertEquals("ext-to-coders", PolicyFiles.policy(hub).at("/rules/0/name").asText());
        hub.sendOk(lead, "w2", "the quarantine is lifted");
        hub.sendOk(x1, "w1", "the coders are open");
        JsonNode envelope = hub.inbox(token("w1")).getLast();
        assertEquals(second, envelope.at("/trace/policyVersion").asText());
        assertTrue(hub.metric("parley_policy_reloads_total") >= 1);
        assertTrue(hub.get(hub.admin(), "/metrics").body().contains("parley_policy_info{version=\"" + second + "\"} 1"));

        // The first rules again, laid out otherwise: the version is a hash of the rules, not of the file.
        PolicyFiles.write(file, "{\n  \"rules\" : [\n    {\"when\": \"" + QUARANTINE
                + "\", \"effect\": \"deny\", \"name\": \"quarantine\"}\n  ]\n}\n");
        assertEquals(first, PolicyFiles.awaitNewVersion(hub, second), "the version is a hash of the rules");
    }

    @Test
    void policyCheckIsADryRunThatWritesNothing() {
        start(PolicyFiles.json(List.of(allow("ext-to-coders", EXT_TO_CODERS), deny("quarantine", QUARANTINE))),
                "policy.json");
        String version = PolicyFiles.version(hub);
        String x1 = token("x1");
        long auditBefore = hub.get(hub.admin(), "/v1/audit?limit=1000").items().size();
        double decisionsBefore = hub.metric("parley_policy_decisions_total");

        JsonNode widened = assertStatus(200, hub.post(hub.admin(), "/v1/policy/check",
                obj("from", "x1", "to", "w1", "kind", "message"))).json();
        assertEquals("allow", widened.get("decision").asText());
        assertEquals("ext-to-coders", widened.get("rule").asText());
        assertEquals("policy", widened.get("route").asText());
        assertEquals(version, widened.get("policyVersion").asText());
        assertTrue(widened.get("reason").asText().contains("ext-to-coders"));

        JsonNode denied = assertStatus(200, hub.post(x1, "/v1/policy/check", obj("from", "x1", "to", "w2"))).json();
        assertEquals("deny", denied.get("decision").asText());
        assertEquals("quarantine", denied.get("rule").asText());
        assertTrue(denied.get("route").isNull());
        assertEquals(version, denied.get("policyVersion").asText());

        JsonNode acl = assertStatus(200, hub.post(x1, "/v1/policy/check", obj("from", "x1", "to", "x1"))).json();
        assertEquals("allow", acl.get("decision").asText());
        assertEquals("self", acl.get("route").asText());
        assertTrue(acl.get("rule").isNull());
        JsonNode refused = assertStatus(200, hub.post(hub.admin(), "/v1/policy/check",
                obj("from", "lead", "to", "x1"))).json();
        assertEquals("deny", refused.get("decision").asText());
        assertTrue(refused.get("rule").isNull());

        assertError(hub.post(x1, "/v1/policy/check", obj("from", "lead", "to", "w1")), 403, "forbidden");
        assertError(hub.post(hub.admin(), "/v1/policy/check", obj("from", "nobody", "to", "w1")), 404, "node_not_found");
        assertError(hub.post(hub.admin(), "/v1/policy/check", obj("from", "x1")), 400, "invalid_request");
        assertError(hub.post(hub.admin(), "/v1/policy/check", obj("from", "x1", "to", "w1", "kind", "Bad Kind")), 400,
                "invalid_request");
        assertError(hub.get(x1, "/v1/policy"), 403, "forbidden");

        assertEquals(auditBefore, hub.get(hub.admin(), "/v1/audit?limit=1000").items().size(), "a check writes no audit");
        assertTrue(hub.inbox(token("w1")).isEmpty(), "a check sends nothing");
        assertEquals(decisionsBefore, hub.metric("parley_policy_decisions_total"), "a check is not a decision");
    }

    @Test
    void withoutAFileTheBuiltInAclDecidesUnderItsOwnVersion() {
        hub = HubFixture.start(dir.resolve("data"));
        hub.createNode("lead", null);
        String w1 = hub.createNode("w1", "lead");
        JsonNode policy = PolicyFiles.policy(hub);
        assertEquals("builtin-acl-1", policy.get("version").asText());
        assertEquals(0, policy.get("rules").size());
        assertTrue(policy.get("source").isNull());
        assertTrue(policy.get("lastError").isNull());
        hub.sendOk(w1, "lead", "hi");
        assertEquals("builtin-acl-1", hub.get(hub.admin(), "/v1/audit?action=send").items().getFirst()
                .get("policyVersion").asText());
    }

    @Test
    void aHubDoesNotStartOnAMissingOrBrokenFile() throws Exception {
        Path broken = dir.resolve("broken.json");
        Files.writeString(broken, "{\"rules\": [{\"name\": \"r\", \"effect\": \"deny\", \"when\": \"1 + 1\"}]}",
                StandardCharsets.UTF_8);
        HubConfig config = HubConfig.defaults(dir.resolve("data")).withPort(0).withPolicy(Optional.of(broken));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Hub.start(config).close());
        assertTrue(e.getMessage().contains("must be bool"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Hub.start(config.withPolicy(Optional.of(dir.resolve("none"))))
                .close());
        // The store was closed again: a hub starts on the same data afterwards.
        hub = HubFixture.start(dir.resolve("data"));
        assertFalse(PolicyFiles.version(hub).isEmpty());
    }
}
