package dev.parley.server.it;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.parley.server.it.HubFixture.Resp;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code parley_sends_denied_total} counts every send refused for its target (the access
 * decision denied it, or the target does not exist), whichever surface carried it: REST
 * messages, tasks, A2A in both versions and MCP.
 */
class DeniedSendsCountedTest {
    private static final String METRIC = "parley_sends_denied_total";

    @TempDir
    static Path dir;
    static HubFixture hub;
    static String strangerToken;

    @BeforeAll
    static void start() {
        hub = HubFixture.start(dir);
        hub.createNode("lead", null);
        hub.createNode("worker", "lead");
        strangerToken = hub.createNode("stranger", null);
    }

    @AfterAll
    static void stop() {
        hub.close();
    }

    @Test
    void everyRefusedSendCountsOnceWhateverSurfaceCarriedIt() {
        counts("a REST send the ACL denies", () -> assertError(hub.send(strangerToken, "worker", "hi"), 403,
                "acl_denied"));
        counts("a REST send to no one", () -> assertError(hub.send(strangerToken, "nobody", "hi"), 404,
                "node_not_found"));
        counts("a task the ACL denies", () -> assertError(hub.post(strangerToken, "/v1/tasks",
                obj("to", "worker", "title", "let me in")), 403, "acl_denied"));
        counts("a task for no one", () -> assertError(hub.post(strangerToken, "/v1/tasks",
                obj("to", "nobody", "title", "anyone?")), 404, "node_not_found"));
        counts("an A2A 1.0 message the ACL denies", () -> assertEquals("acl_denied", a2a(Map.of("A2A-Version", "1.0"),
                "SendMessage", "{\"messageId\":\"" + UUID.randomUUID() + "\",\"role\":\"ROLE_USER\",\"parts\":"
                        + "[{\"text\":\"hi\"}]}").json().path("error").path("data").get(0).path("metadata")
                .path("parleyError").asText()));
        counts("an A2A 0.3 message the ACL denies", () -> assertEquals("acl_denied", a2a(Map.of(), "message/send",
                "{\"messageId\":\"" + UUID.randomUUID() + "\",\"role\":\"user\",\"kind\":\"message\",\"parts\":"
                        + "[{\"kind\":\"text\",\"text\":\"hi\"}]}").json().path("error").path("data")
                .path("parleyError").asText()));
        Map<String, String> mcp = Map.of("Content-Type", "application/json", "Accept",
                "application/json, text/event-stream");
        Resp init = hub.request("POST", "/mcp", strangerToken, ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                + "\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\"}}").getBytes(StandardCharsets.UTF_8), mcp);
        Map<String, String> session = new java.util.HashMap<>(mcp);
        session.put("Mcp-Session-Id", init.headers().firstValue("Mcp-Session-Id").orElseThrow());
        counts("an MCP send the ACL denies", () -> assertEquals(true, hub.request("POST", "/mcp", strangerToken,
                ("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"send\","
                        + "\"arguments\":{\"to\":\"worker\",\"text\":\"hi\"}}}").getBytes(StandardCharsets.UTF_8),
                session).json().path("result").path("isError").asBoolean()));
    }

    private static Resp a2a(Map<String, String> headers, String method, String message) {
        Map<String, String> all = new java.util.HashMap<>(headers);
        all.put("Content-Type", "application/json");
        return hub.request("POST", "/a2a/worker", strangerToken, ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\""
                + method + "\",\"params\":{\"message\":" + message + "}}").getBytes(StandardCharsets.UTF_8), all);
    }

    /** Runs {@code refusal} and checks it moved the counter by exactly one. */
    private static void counts(String what, Runnable refusal) {
        double before = hub.metric(METRIC);
        refusal.run();
        double after = hub.metric(METRIC);
        assertEquals(before + 1, after, what + " must count once in " + METRIC);
    }
}
