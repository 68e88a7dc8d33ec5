package dev.parley.server.permission;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code POST /v1/permissions} against a real hub over HTTP: each decider in its order (the
 * agent's blocklist, the policy's permission rules, the approver asked with an envelope and
 * answering by reply, or not in time), an approver out of reach, and bad requests.
 */
class PermissionsTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String POLICY = """
            rules: []
            permissions:
              - name: reads-are-fine
                effect: allow
                when: kind == 'read' && node.parent == 'lead'
              - name: no-rm
                effect: deny
                when: tool == 'Bash' && input.?command.orValue('').startsWith('rm ')
            """;

    @TempDir
    Path dir;
    private HubFixture hub;
    private String lead;
    private String w1;

    @AfterEach
    void stop() {
        if (hub != null) {
            hub.close();
        }
    }

    /** lead leads w1 (external) and agent (managed, blocking Bash and mcp__github__*); ext is in no group of theirs. */
    private void start() throws IOException {
        Path policy = dir.resolve("policy.yaml");
        Files.writeString(policy, POLICY);
        hub = HubFixture.start(dir.resolve("data"), c -> c.withPolicy(Optional.of(policy)));
        lead = hub.createNode("lead", null);
        w1 = hub.createNode("w1", "lead");
        hub.createNode("ext", null);
        assertStatus(201, hub.post(hub.admin(), "/v1/agents", obj("spec", """
                id: agent
                parent: lead
                command: [sh, -c, 'true']
                toolBlocklist: [Bash, "mcp__github__*"]
                """)));
    }

    private String token(String id) {
        return assertStatus(200, hub.post(hub.admin(), "/v1/nodes/" + id + "/token", null)).text("token");
    }

    private Resp ask(String token, Object... more) {
        Map<String, Object> body = new java.util.LinkedHashMap<>(Map.of("requestId", HubFixture.uid("r"),
                "tool", "Bash", "input", Map.of("command", "ls")));
        for (int i = 0; i < more.length; i += 2) {
            body.put((String) more[i], more[i + 1]);
        }
        return hub.post(token, "/v1/permissions", body);
    }

    private static void decided(Resp r, String verdict, String decidedBy) {
        assertStatus(200, r);
        assertEquals(verdict, r.text("verdict"), r::toString);
        assertEquals(decidedBy, r.text("decidedBy"), r::toString);
    }

    /** The permission_request envelope waiting in lead's inbox for {@code requestId}. */
    private JsonNode question(String requestId) {
        return await().atMost(WAIT).until(() -> hub.inbox(lead).stream()
                .filter(e -> "permission_request".equals(e.path("kind").asText()))
                .filter(e -> requestId.equals(e.path("data").path("request_id").asText()))
                .findFirst(), Optional::isPresent).orElseThrow();
    }

    @Test
    void theAgentsBlocklistDeniesFirstEvenWhatTheRulesAllow() throws IOException {
        start();
        String agent = token("agent");
        decided(ask(agent, "tool", "mcp__github__create_issue"), "deny", "blocklist");
        decided(ask(agent, "tool", "Bash", "kind", "read"), "deny", "blocklist");
        decided(ask(agent, "tool", "Read", "adapter", "claude-code"), "allow", "policy:reads-are-fine");
    }

    @Test
    void permissionRulesAllowAndDenyOverToolKindInputAndNode() throws IOException {
        start();
        Resp read = ask(w1, "tool", "Read", "adapter", "claude-code", "input", Map.of("file_path", "/etc/hosts"));
        decided(read, "allow", "policy:reads-are-fine");
        assertEquals("read", read.text("kind"));
        decided(ask(w1, "input", Map.of("command", "rm -rf /")), "deny", "policy:no-rm");
        JsonNode policy = hub.get(hub.admin(), "/v1/policy").json();
        assertEquals(List.of("reads-are-fine", "no-rm"), policy.path("permissions").findValuesAsText("name"));
    }

    @Test
    void theParentIsAskedAndItsReplyDecides() throws IOException {
        start();
        CompletableFuture<Resp> allowed = CompletableFuture.supplyAsync(() -> ask(w1, "requestId", "ask-1"));
        JsonNode q = question("ask-1");
        assertEquals("w1", q.path("from").asText());
        assertEquals("Bash", q.path("data").path("tool_name").asText());
        assertEquals("ls", q.path("data").path("input").path("command").asText());
        assertStatus(202, hub.post(lead, "/v1/messages/" + q.path("id").asText() + "/reply", obj("text", "Allow.")));
        decided(allowed.join(), "allow", "node:lead");

        CompletableFuture<Resp> denied = CompletableFuture.supplyAsync(() -> ask(w1, "requestId", "ask-2"));
        String q2 = question("ask-2").path("id").asText();
        assertStatus(202, hub.post(lead, "/v1/messages/" + q2 + "/reply", obj("data", Map.of("behavior", "deny"))));
        decided(denied.join(), "deny", "node:lead");

        // Asked again with the same request id (a client retrying after a hub restart): the answer given stands.
        decided(ask(w1, "requestId", "ask-1", "timeoutMs", 1), "allow", "node:lead");
        // The same request id for another input (Claude Code's short ids repeat) is a new question: never the old answer.
        decided(ask(w1, "requestId", "ask-1", "input", Map.of("command", "make deploy"), "timeoutMs", 300), "deny",
                "timeout");
    }

    @Test
    void whatTheHubKnowsOfAToolWinsOverTheKindTheCallerNamesAndNoNodeApprovesItself() throws IOException {
        start();
        Resp named = ask(w1, "tool", "Bash", "adapter", "claude-code", "kind", "read", "timeoutMs", 300);
        assertEquals("execute", named.text("kind"), named::toString);
        decided(named, "deny", "timeout"); // not allowed by reads-are-fine: lead was asked and said nothing
        Resp unknown = ask(w1, "tool", "mcp__notes__lookup", "adapter", "claude-code", "kind", "read");
        decided(unknown, "allow", "policy:reads-are-fine"); // a tool the hub does not know: the caller's kind
        assertError(ask(w1, "approver", "w1"), 400, "invalid_request");
    }

    @Test
    void noAnswerInTimeIsADenialByTimeout() throws IOException {
        start();
        CompletableFuture<Resp> pending = CompletableFuture.supplyAsync(() -> ask(w1, "requestId", "late",
                "timeoutMs", 300));
        question("late");
        Resp r = await().atMost(WAIT).until(pending::join, resp -> resp.status() == 200);
        decided(r, "deny", "timeout");
    }

    @Test
    void aNamedApproverOutOfReachIsRefusedLikeAnySend() throws IOException {
        start();
        assertError(ask(w1, "approver", "ext"), 403, "acl_denied");
        assertTrue(hub.inbox(token("ext")).isEmpty());
    }

    @Test
    void badRequestsAreRefusedWithTheirReason() throws IOException {
        start();
        assertError(hub.post(w1, "/v1/permissions", obj("requestId", "x", "tool", "Bash")), 400, "invalid_request");
        assertError(ask(w1, "input", List.of("ls")), 400, "invalid_request");
        assertError(ask(w1, "requestId", "../etc"), 400, "invalid_request");
        assertError(ask(w1, "kind", "launch"), 400, "invalid_request");
        assertError(ask(w1, "adapter", "nope"), 400, "invalid_request");
        assertError(ask(w1, "timeoutMs", 0), 400, "invalid_request");
        assertError(ask(w1, "timeoutMs", 600_001), 400, "invalid_request");
        assertError(ask(w1, "input", Map.of("command", "x".repeat(20_000))), 413, "payload_too_large");
        assertError(ask(hub.admin()), 403, "forbidden");
        Resp noTool = ask(w1, "tool", "");
        assertError(noTool, 400, "invalid_request");
        assertTrue(noTool.text("message").contains("tool"), noTool::toString);
    }
}
