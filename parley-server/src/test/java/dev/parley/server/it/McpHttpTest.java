package dev.parley.server.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * MCP Streamable HTTP at {@code POST /mcp} over real HTTP: sessions, credentials, the DNS
 * rebinding guard, every kind of bad input, and the tools going through the same router,
 * ACL and audit as REST. Also {@code GET /v1/peers}, which the peers tool reads.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class McpHttpTest {
    private static final String ACCEPT = "application/json, text/event-stream";

    @TempDir
    Path data;

    private HubFixture hub;
    private String lead;
    private String worker;
    private String sibling;
    private String outsider;
    private String leadToken;
    private String workerToken;
    private String outsiderToken;
    private final AtomicInteger ids = new AtomicInteger();

    @BeforeEach
    void start() {
        hub = HubFixture.start(data);
        lead = HubFixture.uid("lead");
        worker = HubFixture.uid("worker");
        sibling = HubFixture.uid("sibling");
        outsider = HubFixture.uid("outsider");
        leadToken = hub.createNode(lead, null);
        workerToken = hub.createNode(worker, lead);
        hub.createNode(sibling, lead);
        outsiderToken = hub.createNode(outsider, null);
    }

    @AfterEach
    void stop() {
        hub.close();
    }

    // ------------------------------------------------------------------ helpers

    private HubFixture.Resp mcp(String token, String session, String body, Map<String, String> extra) {
        Map<String, String> headers = new HashMap<>(Map.of("Accept", ACCEPT, "Content-Type", "application/json"));
        if (session != null) {
            headers.put("Mcp-Session-Id", session);
        }
        headers.putAll(extra);
        return hub.request("POST", "/mcp", token, body.getBytes(StandardCharsets.UTF_8), headers);
    }

    private HubFixture.Resp rpc(String token, String session, String method, Object params) {
        ObjectNode message = obj("jsonrpc", "2.0", "id", ids.incrementAndGet(), "method", method);
        if (params != null) {
            message.set("params", HubFixture.JSON.valueToTree(params));
        }
        return mcp(token, session, message.toString(), Map.of());
    }

    /** initialize + notifications/initialized; returns the session id. */
    private String open(String token) {
        HubFixture.Resp init = rpc(token, null, "initialize", Map.of("protocolVersion", "2025-06-18",
                "capabilities", Map.of(), "clientInfo", Map.of("name", "test", "version", "1")));
        assertEquals(200, init.status(), init::toString);
        String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
        HubFixture.Resp initialized = mcp(token, session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
                Map.of("MCP-Protocol-Version", "2025-06-18"));
        assertEquals(202, initialized.status(), initialized::toString);
        assertTrue(initialized.body() == null || initialized.body().isEmpty(), "202 carries no body");
        return session;
    }

    private JsonNode call(String token, String session, String tool, Object arguments) {
        HubFixture.Resp r = rpc(token, session, "tools/call", Map.of("name", tool, "arguments", arguments));
        assertEquals(200, r.status(), r::toString);
        assertNotNull(r.json().get("result"), r::toString);
        return r.json().get("result");
    }

    private static String text(JsonNode result) {
        return result.path("content").get(0).path("text").asText();
    }

    private static void assertRpcError(HubFixture.Resp r, int status, int code) {
        assertEquals(status, r.status(), r::toString);
        assertEquals("2.0", r.json().path("jsonrpc").asText(), r::toString);
        assertEquals(code, r.json().path("error").path("code").asInt(), r::toString);
        assertFalse(r.json().path("error").path("message").asText().isBlank(), r::toString);
    }

    // ------------------------------------------------------------------ tests

    @Test
    void initializeOpensASessionAndListsTheSevenTools() {
        HubFixture.Resp init = rpc(workerToken, null, "initialize", Map.of("protocolVersion", "2025-11-25",
                "capabilities", Map.of(), "clientInfo", Map.of("name", "test", "version", "1")));
        assertEquals(200, init.status(), init::toString);
        assertTrue(init.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
        assertTrue(init.headers().firstValue("Mcp-Session-Id").orElse("").matches("[0-9a-f]{32}"), init::toString);
        JsonNode result = init.json().get("result");
        assertEquals("2025-11-25", result.path("protocolVersion").asText());
        assertTrue(result.path("capabilities").has("tools"));
        assertEquals("parley", result.path("serverInfo").path("name").asText());
        assertTrue(result.path("instructions").asText().contains(worker));

        HubFixture.Resp old = rpc(workerToken, null, "initialize", Map.of("protocolVersion", "1999-01-01",
                "capabilities", Map.of(), "clientInfo", Map.of("name", "test", "version", "1")));
        assertEquals("2025-11-25", old.json().path("result").path("protocolVersion").asText(),
                "an unknown version is answered with the newest");

        String session = open(workerToken);
        HubFixture.Resp tools = rpc(workerToken, session, "tools/list", null);
        assertEquals(200, tools.status(), tools::toString);
        List<String> names = tools.json().path("result").path("tools").findValuesAsText("name");
        assertEquals(List.of("send", "reply", "ack", "inbox", "peers", "status", "permission_prompt"), names);
        for (JsonNode tool : tools.json().path("result").path("tools")) {
            assertEquals("object", tool.path("inputSchema").path("type").asText(), tool::toString);
            assertFalse(tool.path("description").asText().isBlank(), tool::toString);
        }
        assertEquals("{}", rpc(workerToken, session, "ping", null).json().path("result").toString());
        assertEquals("{}", rpc(workerToken, session, "logging/setLevel", Map.of("level", "warning")).json()
                .path("result").toString());
    }

    @Test
    void toolsGoThroughTheRouterAclAndAudit() {
        String session = open(workerToken);
        JsonNode sent = call(workerToken, session, "send", Map.of("to", lead, "text", "tests are green",
                "data", Map.of("passed", 42), "thread_id", "t-1"));
        assertFalse(sent.path("isError").asBoolean(), sent::toString);
        String id = sent.path("structuredContent").path("id").asText();
        List<JsonNode> inbox = hub.inbox(leadToken);
        assertEquals(1, inbox.size());
        JsonNode envelope = inbox.getFirst();
        assertEquals(id, envelope.path("id").asText());
        assertEquals(worker, envelope.path("from").asText());
        assertEquals("tests are green", envelope.path("text").asText());
        assertEquals(42, envelope.path("data").path("passed").asInt());
        assertEquals("t-1", envelope.path("threadId").asText());
        assertEquals("intra_group", envelope.path("trace").path("route").asText());

        JsonNode denied = call(workerToken, session, "send", Map.of("to", outsider, "text", "let me in"));
        assertTrue(denied.path("isError").asBoolean(), denied::toString);
        assertTrue(text(denied).contains("acl_denied"), denied::toString);
        assertTrue(hub.inbox(outsiderToken).isEmpty(), "a denied send leaves no envelope");
        HubFixture.Resp audit = hub.get(hub.admin(), "/v1/audit?node=" + worker + "&decision=deny");
        assertTrue(audit.items().stream().anyMatch(a -> a.path("target").asText().equals(outsider)), audit::toString);

        JsonNode nobody = call(workerToken, session, "send", Map.of("to", "no-such-node", "text", "hello?"));
        assertTrue(nobody.path("isError").asBoolean());
        assertTrue(text(nobody).contains("node_not_found"), nobody::toString);
    }

    @Test
    void inboxShowsTheStateTheCallLeavesBehind() {
        String fresh = hub.sendOk(leadToken, worker, "new to you").text("id");
        String session = open(workerToken);

        JsonNode inbox = call(workerToken, session, "inbox", Map.of());
        JsonNode item = inbox.path("structuredContent").path("items").get(0);
        assertEquals(fresh, item.path("id").asText(), inbox::toString);
        assertEquals("delivered", item.path("state").asText(), "this call delivered it: " + inbox);
        assertTrue(text(inbox).contains(", delivered: new to you"), inbox::toString);
        assertEquals("delivered", hub.status(leadToken, fresh).text("state"));
    }

    /** Claude Code's --permission-prompt-tool: the hub asks the worker's parent, whose reply decides. */
    @Test
    void thePermissionPromptToolAnswersWhatClaudeCodeReads() throws Exception {
        String session = open(workerToken);
        java.util.concurrent.CompletableFuture<JsonNode> asked = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> call(workerToken, session, "permission_prompt", Map.of("tool_name", "Bash",
                        "input", Map.of("command", "ls"), "tool_use_id", "toolu_1")));
        JsonNode question = org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
                .until(() -> hub.inbox(leadToken).stream().filter(e -> "permission_request".equals(
                        e.path("kind").asText())).findFirst(), java.util.Optional::isPresent).orElseThrow();
        assertEquals("toolu_1", question.path("data").path("request_id").asText());
        assertEquals("execute", question.path("data").path("kind").asText());
        assertEquals(202, hub.post(leadToken, "/v1/messages/" + question.path("id").asText() + "/reply",
                obj("text", "allow")).status());
        JsonNode allowed = HubFixture.JSON.readTree(asked.join().path("content").get(0).path("text").asText());
        assertEquals(HubFixture.JSON.readTree("{\"behavior\":\"allow\",\"updatedInput\":{\"command\":\"ls\"}}"), allowed);

        // outsider has no parent and names no approver: nobody to ask, so no
        String other = open(outsiderToken);
        JsonNode denied = HubFixture.JSON.readTree(call(outsiderToken, other, "permission_prompt", Map.of(
                "tool_name", "Write", "input", Map.of())).path("content").get(0).path("text").asText());
        assertEquals("deny", denied.path("behavior").asText());
        assertTrue(denied.path("message").asText().contains("nobody"), denied::toString);
    }

    @Test
    void replyAckInboxStatusAndPeers() {
        String first = hub.sendOk(leadToken, worker, "run the tests").text("id");
        String second = hub.sendOk(leadToken, worker, "and lint").text("id");
        String session = open(workerToken);

        JsonNode inbox = call(workerToken, session, "inbox", Map.of());
        assertFalse(inbox.path("isError").asBoolean(), inbox::toString);
        assertEquals(2, inbox.path("structuredContent").path("items").size());
        assertTrue(text(inbox).contains("2 not yet acked"), inbox::toString);

        JsonNode replied = call(workerToken, session, "reply", Map.of("id", first, "text", "done, all green"));
        assertFalse(replied.path("isError").asBoolean(), replied::toString);
        JsonNode reply = hub.inbox(leadToken).getFirst();
        assertEquals("reply", reply.path("kind").asText());
        assertEquals(first, reply.path("corrId").asText());
        assertEquals("replied", hub.status(leadToken, first).text("state"));

        JsonNode acked = call(workerToken, session, "ack", Map.of("id", second, "status", "processed"));
        assertFalse(acked.path("isError").asBoolean(), acked::toString);
        assertEquals("processed", acked.path("structuredContent").path("state").asText());

        JsonNode status = call(workerToken, session, "status", Map.of("id", second));
        assertTrue(text(status).contains("processed"), status::toString);
        assertTrue(status.path("structuredContent").path("timeline").size() >= 2, status::toString);

        JsonNode after = call(workerToken, session, "inbox", Map.of("after", 1, "limit", 5));
        assertEquals(1, after.path("structuredContent").path("items").size(), after::toString);
        assertEquals("processed", after.path("structuredContent").path("items").get(0).path("state").asText());

        JsonNode peers = call(workerToken, session, "peers", Map.of());
        List<String> reachable = peers.path("structuredContent").path("items").findValuesAsText("id");
        assertTrue(reachable.contains(lead) && reachable.contains(sibling), peers::toString);
        assertFalse(reachable.contains(outsider), peers::toString);
        assertTrue(text(peers).contains("your parent"), peers::toString);
    }

    @Test
    void toolErrorsAreResultsWithAClearText() {
        String session = open(workerToken);
        JsonNode missing = call(workerToken, session, "send", Map.of("to", lead));
        assertTrue(missing.path("isError").asBoolean());
        assertTrue(text(missing).contains("missing required argument 'text'"), missing::toString);

        JsonNode wrongType = call(workerToken, session, "inbox", Map.of("limit", "ten"));
        assertTrue(wrongType.path("isError").asBoolean());
        assertTrue(text(wrongType).contains("'limit' must be an integer"), wrongType::toString);

        JsonNode outOfRange = call(workerToken, session, "inbox", Map.of("limit", 5000));
        assertTrue(outOfRange.path("isError").asBoolean(), outOfRange::toString);

        JsonNode unknownArg = call(workerToken, session, "send", Map.of("to", lead, "text", "x", "threadId", "t"));
        assertTrue(text(unknownArg).contains("unknown argument 'threadId'"), unknownArg::toString);

        JsonNode badStatus = call(workerToken, session, "ack", Map.of("id", "x", "status", "done"));
        assertTrue(text(badStatus).contains("processed or failed"), badStatus::toString);

        JsonNode notFound = call(workerToken, session, "status", Map.of("id", "0000"));
        assertTrue(text(notFound).contains("message_not_found"), notFound::toString);

        HubFixture.Resp noArguments = rpc(workerToken, session, "tools/call", Map.of("name", "status"));
        assertTrue(noArguments.json().path("result").path("isError").asBoolean(), noArguments::toString);
    }

    @Test
    void aTraceparentInAToolCallsMetaIsTheSendersSpan() {
        String session = open(workerToken);
        String trace = "4bf92f3577b34da6a3ce929d0e0e4736";
        HubFixture.Resp r = rpc(workerToken, session, "tools/call", Map.of("name", "send",
                "arguments", Map.of("to", lead, "text", "traced"),
                "_meta", Map.of("traceparent", "00-" + trace + "-00f067aa0ba902b7-01")));
        assertFalse(r.json().path("result").path("isError").asBoolean(), r::toString);
        call(workerToken, session, "send", Map.of("to", lead, "text", "untraced"));
        List<JsonNode> inbox = hub.inbox(leadToken);
        assertEquals(trace, inbox.get(0).at("/trace/traceId").asText(), inbox::toString);
        assertNotEquals(trace, inbox.get(1).at("/trace/traceId").asText(), "the next call starts its own trace");
    }

    @Test
    void malformedInputGetsJsonRpcErrorsAndTheHubKeepsServing() {
        String session = open(workerToken);
        assertRpcError(mcp(workerToken, session, "{not json", Map.of()), 400, -32700);
        assertRpcError(mcp(workerToken, session, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", Map.of()), 400, -32600);
        assertRpcError(mcp(workerToken, session, "\"ping\"", Map.of()), 400, -32600);
        assertRpcError(mcp(workerToken, session, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", Map.of()), 400, -32600);
        assertRpcError(mcp(workerToken, session, "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", Map.of()), 400, -32600);
        assertRpcError(mcp(workerToken, session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", Map.of()), 400, -32600);
        assertRpcError(rpc(workerToken, session, "no/such/method", null), 200, -32601);
        assertRpcError(mcp(workerToken, session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":[1]}",
                Map.of()), 200, -32602);
        assertRpcError(rpc(workerToken, session, "tools/call", Map.of("arguments", Map.of())), 200, -32602);
        assertRpcError(rpc(workerToken, session, "tools/call", Map.of("name", "rm_rf", "arguments", Map.of())), 200, -32602);
        assertRpcError(rpc(workerToken, session, "tools/call", Map.of("name", "send", "arguments", "to=lead")), 200, -32602);
        assertRpcError(rpc(workerToken, session, "logging/setLevel", Map.of("level", "loud")), 200, -32602);

        String huge = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"send\",\"arguments\":"
                + "{\"to\":\"" + lead + "\",\"text\":\"" + "x".repeat(300 * 1024) + "\"}}}";
        assertError(mcp(workerToken, session, huge, Map.of()), 413, "payload_too_large");
        assertError(hub.request("POST", "/mcp", workerToken, "{}".getBytes(StandardCharsets.UTF_8),
                Map.of("Content-Type", "text/plain", "Accept", ACCEPT)), 415, "unsupported_media_type");
        assertEquals(406, hub.request("POST", "/mcp", workerToken, "{}".getBytes(StandardCharsets.UTF_8),
                Map.of("Content-Type", "application/json", "Accept", "text/html")).status());

        assertEquals(202, mcp(workerToken, session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                + "\"params\":{\"requestId\":1}}", Map.of()).status());
        assertEquals(202, mcp(workerToken, session, "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}", Map.of()).status());
        assertEquals("{}", rpc(workerToken, session, "ping", null).json().path("result").toString(), "still serving");
        hub.assertStillServes();
    }

    @Test
    void sessionsAreRequiredBoundToTheirNodeAndEndWithDelete() {
        String session = open(workerToken);
        assertRpcError(rpc(workerToken, null, "tools/list", null), 400, -32600);
        assertRpcError(rpc(workerToken, "feedface", "tools/list", null), 404, -32001);
        String otherSession = open(leadToken);
        assertRpcError(rpc(workerToken, otherSession, "tools/list", null), 404, -32001);
        assertRpcError(mcp(workerToken, session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
                Map.of("MCP-Protocol-Version", "2020-01-01")), 400, -32600);

        assertEquals(405, hub.get(workerToken, "/mcp").status(), "no server-to-client stream over HTTP");
        HubFixture.Resp noSession = hub.request("DELETE", "/mcp", workerToken, null, Map.of());
        assertEquals(400, noSession.status(), noSession::toString);
        assertEquals(404, hub.request("DELETE", "/mcp", leadToken, null, Map.of("Mcp-Session-Id", session)).status(),
                "another node cannot end the session");
        assertEquals(204, hub.request("DELETE", "/mcp", workerToken, null, Map.of("Mcp-Session-Id", session)).status());
        assertRpcError(rpc(workerToken, session, "tools/list", null), 404, -32001);
    }

    @Test
    void credentialsAndTheDnsRebindingGuard() {
        HubFixture.Resp anonymous = rpc(null, null, "initialize", Map.of());
        assertError(anonymous, 401, "unauthorized");
        assertTrue(anonymous.headers().firstValue("WWW-Authenticate").orElse("").startsWith("Bearer"));
        assertError(rpc("pn_wrong", null, "initialize", Map.of()), 401, "unauthorized");
        assertError(rpc(hub.admin(), null, "initialize", Map.of()), 403, "forbidden");
        assertError(mcp(workerToken, null, "{}", Map.of("Origin", "http://evil.example.com")), 403, "forbidden");
        assertEquals(200, mcp(workerToken, null, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}",
                Map.of("Origin", "http://localhost:3000")).status(), "a loopback origin is fine");
    }

    @Test
    void unauthenticatedConformanceModeIsOptInAndOnlyForRequestsWithoutAToken() {
        assertError(rpc(null, null, "initialize", Map.of()), 401, "unauthorized");
        hub.hub().allowUnauthenticatedMcp(worker);
        HubFixture.Resp init = rpc(null, null, "initialize", Map.of("protocolVersion", "2025-06-18"));
        assertEquals(200, init.status(), init::toString);
        assertTrue(init.json().path("result").path("instructions").asText().contains(worker));
        assertError(rpc("pn_wrong", null, "initialize", Map.of()), 401, "unauthorized");
        assertError(hub.get(null, "/v1/inbox"), 401, "unauthorized");
    }

    @Test
    void unauthenticatedConformanceModeObeysTheNodesRateLimitAndNeedsALiveNode() {
        try (HubFixture limited = HubFixture.start(data.resolve("limited"), c -> c.withNodeRate(1, 3))) {
            String conformance = HubFixture.uid("conformance");
            limited.createNode(conformance, null);
            limited.hub().allowUnauthenticatedMcp(conformance);
            byte[] init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}"
                    .getBytes(StandardCharsets.UTF_8);
            Map<String, String> headers = Map.of("Accept", ACCEPT, "Content-Type", "application/json");
            List<Integer> statuses = new java.util.ArrayList<>();
            for (int i = 0; i < 6; i++) {
                statuses.add(limited.request("POST", "/mcp", null, init, headers).status());
            }
            assertEquals(200, statuses.getFirst(), statuses::toString);
            assertTrue(statuses.contains(429), () -> "a burst of 3 at 1/s must be limited: " + statuses);
            IllegalArgumentException missing = org.junit.jupiter.api.Assertions.assertThrows(
                    IllegalArgumentException.class, () -> limited.hub().allowUnauthenticatedMcp("ghost"));
            assertTrue(missing.getMessage().contains("ghost") && missing.getMessage().contains("does not exist"),
                    missing::getMessage);
            assertEquals(204, limited.delete(limited.admin(), "/v1/nodes/" + conformance).status());
            assertError(limited.request("POST", "/mcp", null, init, headers), 401, "unauthorized");
        }
    }

    @Test
    void peersAnswersWhomTheRouterWouldLetTheCallerReach() {
        HubFixture.Resp peers = hub.get(workerToken, "/v1/peers");
        assertEquals(200, peers.status(), peers::toString);
        assertEquals(worker, peers.text("node"));
        List<String> reachable = peers.items().stream().map(p -> p.path("id").asText()).toList();
        assertEquals(List.of(lead, sibling).stream().sorted().toList(), reachable.stream().sorted().toList());
        assertTrue(peers.items().stream().allMatch(p -> p.path("route").asText().equals("intra_group")), peers::toString);

        HubFixture.Resp grant = hub.post(hub.admin(), "/v1/grants", obj("from", worker, "to", outsider, "note", "review"));
        assertEquals(201, grant.status(), grant::toString);
        HubFixture.Resp withGrant = hub.get(workerToken, "/v1/peers");
        JsonNode viaGrant = withGrant.items().stream().filter(p -> p.path("id").asText().equals(outsider)).findFirst()
                .orElseThrow(() -> new AssertionError(withGrant.toString()));
        assertEquals("grant", viaGrant.path("route").asText());
        assertEquals(grant.text("id"), viaGrant.path("grantId").asText());
        assertTrue(viaGrant.path("reason").asText().contains("review"));
        for (JsonNode peer : withGrant.items()) {
            assertEquals(202, hub.send(workerToken, peer.path("id").asText(), "reachable?").status(),
                    "every listed peer accepts a send: " + peer);
        }
        assertTrue(hub.get(outsiderToken, "/v1/peers").items().isEmpty(), "a grant is one-directional");
        assertError(hub.get(hub.admin(), "/v1/peers"), 403, "forbidden");
    }
}
