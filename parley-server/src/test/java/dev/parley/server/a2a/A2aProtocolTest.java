package dev.parley.server.a2a;

import static dev.parley.server.it.HubFixture.obj;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The A2A wire without a client library: agent cards in both versions, the v1.0 JSON-RPC and
 * HTTP+JSON bindings, and bad input answered with the specification's error codes.
 */
class A2aProtocolTest {
    private static final Map<String, String> V1 = Map.of("A2A-Version", "1.0");

    @TempDir
    static Path dir;
    static HubFixture hub;
    static String lead;
    static String worker;

    @BeforeAll
    static void start() {
        hub = HubFixture.start(dir);
        lead = hub.createNode("lead", null);
        HubFixture.Resp r = hub.post(hub.admin(), "/v1/nodes", obj("id", "worker", "kind", "managed", "parent", "lead",
                "labels", Map.of("a2a.description", "Runs the test suites",
                        "a2a.skills", "[{\"id\":\"test\",\"name\":\"Run tests\",\"description\":\"Runs a suite\","
                                + "\"tags\":[\"ci\"],\"examples\":[\"run core\"]}]")));
        assertEquals(201, r.status(), r::toString);
        worker = r.text("token");
    }

    @AfterAll
    static void stop() {
        hub.close();
    }

    private static Resp rpc(String token, Map<String, String> headers, String body) {
        return hub.request("POST", "/a2a/worker", token, body.getBytes(StandardCharsets.UTF_8), headers);
    }

    private static Resp rpc(String token, Map<String, String> headers, String method, Object params) {
        return hub.request("POST", "/a2a/worker", token, json(obj("jsonrpc", "2.0", "id", 7, "method", method,
                "params", params)), headers);
    }

    private static byte[] json(Object o) {
        try {
            return HubFixture.JSON.writeValueAsBytes(o);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static int errorCode(Resp r) {
        assertTrue(r.json() != null && r.json().has("error"), () -> "not a JSON-RPC error: " + r);
        assertEquals("2.0", r.json().get("jsonrpc").asText());
        assertFalse(r.json().get("error").get("message").asText().isBlank());
        return r.json().get("error").get("code").asInt();
    }

    private static Map<String, Object> v1Message(String text) {
        return Map.of("messageId", UUID.randomUUID().toString(), "role", "ROLE_USER",
                "parts", List.of(Map.of("text", text)));
    }

    @Test
    void everyNodeHasACardForTokenHoldersWithTheRequiredFieldsInBothVersions() {
        Resp v1 = hub.request("GET", "/a2a/worker/.well-known/agent-card.json", lead, null, V1);
        assertEquals(200, v1.status(), v1::toString);
        JsonNode card = v1.json();
        for (String field : List.of("name", "description", "supportedInterfaces", "version", "capabilities",
                "defaultInputModes", "defaultOutputModes", "skills")) {
            assertTrue(card.has(field), () -> "card lacks " + field + ": " + card);
        }
        assertEquals("Runs the test suites", card.get("description").asText());
        assertEquals("test", card.get("skills").get(0).get("id").asText());
        List<String> bindings = new java.util.ArrayList<>();
        card.get("supportedInterfaces").forEach(i -> bindings.add(i.get("protocolBinding").asText() + "@"
                + i.get("protocolVersion").asText()));
        assertTrue(bindings.containsAll(List.of("JSONRPC@1.0", "HTTP+JSON@1.0")), bindings::toString);
        assertTrue(card.get("supportedInterfaces").get(0).get("url").asText().endsWith("/a2a/worker"));
        assertTrue(card.get("capabilities").get("streaming").asBoolean());
        assertTrue(card.get("capabilities").get("pushNotifications").asBoolean());
        assertEquals("Bearer", card.get("securitySchemes").get("parleyBearer").get("httpAuthSecurityScheme")
                .get("scheme").asText());
        assertTrue(card.get("securityRequirements").get(0).get("schemes").has("parleyBearer"));
        JsonNode ext = card.get("capabilities").get("extensions").get(0);
        assertEquals("https://parley.dev/ext/node-kind/v1", ext.get("uri").asText());
        assertEquals("managed", ext.get("params").get("kind").asText());

        Resp legacy = hub.get(lead, "/a2a/worker/.well-known/agent-card.json");
        assertEquals(200, legacy.status());
        assertEquals("http", legacy.json().get("securitySchemes").get("parleyBearer").get("type").asText());
        assertTrue(legacy.json().has("supportedInterfaces"), "the v0.3 card carries the v1.0 interfaces too");

        assertEquals(404, hub.get(lead, "/a2a/nobody/.well-known/agent-card.json").status());
        assertEquals(401, hub.get(null, "/a2a/worker/.well-known/agent-card.json").status(), "no token, no card");
        Resp hubCard = hub.get(null, "/.well-known/agent-card.json");
        assertEquals(200, hubCard.status());
        assertEquals("Parley hub", hubCard.json().get("name").asText());
    }

    @Test
    void aTraceparentInTheMessagesMetadataIsTheCallersSpan() {
        String trace = "5bf92f3577b34da6a3ce929d0e0e4736";
        Map<String, Object> message = new java.util.HashMap<>(v1Message("traced"));
        message.put("metadata", Map.of("traceparent", "00-" + trace + "-00f067aa0ba902b7-01"));
        Resp sent = rpc(lead, V1, "SendMessage", Map.of("message", message, "configuration",
                Map.of("returnImmediately", true)));
        assertEquals(200, sent.status(), sent::toString);
        String task = sent.json().at("/result/task/id").asText();
        JsonNode assignment = hub.inboxAll(worker, "/v1/inbox").stream()
                .filter(e -> e.path("corrId").asText().equals(task)).findFirst().orElseThrow();
        assertEquals(trace, assignment.at("/trace/traceId").asText(), assignment::toString);
    }

    @Test
    void v1JsonRpcAndHttpJsonDriveTheSameTask() {
        Resp sent = rpc(lead, V1, "SendMessage", Map.of("message", v1Message("hello"),
                "configuration", Map.of("returnImmediately", true)));
        assertEquals(200, sent.status(), sent::toString);
        JsonNode task = sent.json().get("result").get("task");
        assertEquals("TASK_STATE_SUBMITTED", task.get("status").get("state").asText());
        String id = task.get("id").asText();

        Resp got = hub.request("GET", "/a2a/worker/tasks/" + id, lead, null, V1);
        assertEquals(200, got.status(), got::toString);
        assertEquals(id, got.json().get("id").asText());
        assertEquals("hello", got.json().get("history").get(0).get("parts").get(0).get("text").asText());

        Resp listed = hub.request("GET", "/a2a/worker/tasks?status=TASK_STATE_SUBMITTED&pageSize=10", lead, null, V1);
        assertEquals(200, listed.status(), listed::toString);
        assertTrue(listed.json().get("tasks").size() >= 1);
        assertFalse(listed.json().get("tasks").get(0).has("artifacts"), "ListTasks leaves artifacts out by default");
        assertTrue(listed.json().has("nextPageToken"));

        Resp canceled = hub.request("POST", "/a2a/worker/tasks/" + id + ":cancel", lead, new byte[0], V1);
        assertEquals(200, canceled.status(), canceled::toString);
        assertEquals("TASK_STATE_CANCELED", canceled.json().get("status").get("state").asText());

        Resp missing = hub.request("GET", "/a2a/worker/tasks/nope", lead, null, V1);
        assertEquals(404, missing.status());
        assertEquals("TASK_NOT_FOUND", missing.json().get("error").get("details").get(0).get("reason").asText());

        Resp subscribeEnded = rpc(lead, V1, "SubscribeToTask", Map.of("id", id));
        assertEquals(-32004, errorCode(subscribeEnded), "a finished task has nothing to subscribe to");
        Resp noRest03 = hub.request("GET", "/a2a/worker/tasks/" + id, lead, null, Map.of());
        assertEquals(400, noRest03.status(), noRest03::toString);
        assertEquals("VERSION_NOT_SUPPORTED", noRest03.json().get("error").get("details").get(0).get("reason").asText());
    }

    @Test
    void aPushThatKeepsFailingIsRetriedThenDeadLetteredWithANoticeToItsOwner() throws Exception {
        java.util.concurrent.atomic.AtomicInteger hits = new java.util.concurrent.atomic.AtomicInteger();
        com.sun.net.httpserver.HttpServer down = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress("127.0.0.1", 0), 8);
        down.createContext("/hook", exchange -> {
            hits.incrementAndGet();
            exchange.sendResponseHeaders(503, -1);
            exchange.close();
        });
        down.start();
        try {
            Resp policy = hub.request("PUT", "/v1/nodes/lead/delivery", lead, json(obj("retry",
                    Map.of("maxAttempts", 2, "baseMs", 10, "capMs", 20))), Map.of());
            assertEquals(200, policy.status(), policy::toString);
            Resp sent = rpc(lead, V1, "SendMessage", Map.of("message", v1Message("push me"), "configuration",
                    Map.of("returnImmediately", true, "taskPushNotificationConfig", Map.of("url",
                            "http://127.0.0.1:" + down.getAddress().getPort() + "/hook", "token", "tok"))));
            String id = sent.json().get("result").get("task").get("id").asText();
            Resp configs = rpc(lead, V1, "ListTaskPushNotificationConfigs", Map.of("taskId", id));
            assertEquals(1, configs.json().get("result").get("configs").size(), configs::toString);
            assertEquals(200, hub.post(worker, "/v1/tasks/" + id + "/events", obj("type", "accept")).status());
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(15)).until(() -> hub.inbox(lead)
                    .stream().anyMatch(e -> e.get("kind").asText().equals("dead_letter")));
            assertEquals(2, hits.get(), "two attempts, then the dead letter");
            Resp letters = hub.get(hub.admin(), "/v1/dead-letters");
            assertTrue(letters.body().contains("a2a_push"), letters::toString);
        } finally {
            down.stop(0);
            hub.request("PUT", "/v1/nodes/lead/delivery", lead, json(obj()), Map.of());
        }
    }

    @Test
    void badInputGetsTheSpecificationsCodesAndTheHubKeepsServing() {
        assertEquals(-32700, errorCode(rpc(lead, V1, "{not json")));
        Resp batch = rpc(lead, V1, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":{\"id\":\"x\"}}]");
        assertEquals(-32600, errorCode(batch));
        assertTrue(batch.json().get("error").get("message").asText().contains("batch"));
        assertEquals(-32600, errorCode(rpc(lead, V1, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"GetTask\"}")));
        assertEquals(-32600, errorCode(rpc(lead, V1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":42}")));
        assertEquals(-32601, errorCode(rpc(lead, V1, "tasks/fly", Map.of())));
        Resp wrongVersion = rpc(lead, Map.of(), "SendMessage", Map.of("message", v1Message("x")));
        assertEquals(-32601, errorCode(wrongVersion), "without A2A-Version the request is 0.3");
        assertTrue(wrongVersion.json().get("error").get("message").asText().contains("A2A-Version: 1.0"));
        assertEquals(-32009, errorCode(rpc(lead, Map.of("A2A-Version", "0.5"), "GetTask", Map.of("id", "x"))));
        assertEquals(-32602, errorCode(rpc(lead, V1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\","
                + "\"params\":\"x\"}")));
        assertEquals(-32602, errorCode(rpc(lead, V1, "GetTask", Map.of("id", 42))));
        assertEquals(-32602, errorCode(rpc(lead, V1, "SendMessage", Map.of("message", Map.of("messageId", "m1",
                "role", "ROLE_USER", "parts", "text")))));
        assertEquals(-32602, errorCode(rpc(lead, V1, "SendMessage", Map.of("message", Map.of("messageId", "m2",
                "role", "ROLE_USER", "parts", List.of(Map.of("video", "x")))))));
        assertEquals(-32602, errorCode(rpc(lead, Map.of(), "message/send", Map.of("message", Map.of("kind", "message",
                "messageId", "m3", "role", "user", "parts", List.of(Map.of("kind", "video", "uri", "x")))))));
        assertEquals(-32602, errorCode(rpc(lead, V1, "SendMessage", Map.of("message", v1Message("x"),
                "configuration", Map.of("returnImmediately", "yes")))));

        String big = "x".repeat(300 * 1024);
        Resp oversized = rpc(lead, V1, "SendMessage", Map.of("message", v1Message(big)));
        assertEquals(413, oversized.status());
        assertEquals(-32600, errorCode(oversized));

        Resp anonymous = rpc(null, V1, "GetTask", Map.of("id", "x"));
        assertEquals(401, anonymous.status());
        assertEquals(-32000, errorCode(anonymous));
        Resp nobody = hub.request("POST", "/a2a/nobody", lead, json(obj("jsonrpc", "2.0", "id", 1, "method",
                "GetTask", "params", Map.of("id", "x"))), V1);
        assertEquals(404, nobody.status());
        assertEquals(-32001, errorCode(rpc(lead, V1, "GetTask", Map.of("id", "no-such-task"))));
        hub.assertStillServes();
    }

    /**
     * A refused A2A 0.3 streaming call answers as the 0.3 reference servers do (a2a-python 0.3,
     * a2a-js 0.3): an event stream whose one event is the JSON-RPC error, since 0.3 clients read
     * nothing else. 1.0 streaming calls refused before their first event answer a JSON-RPC error
     * as plain JSON, as the 1.0 reference servers do; HTTP-level refusals keep their status.
     */
    @Test
    void refusedV03StreamsAnswerAnEventStreamCarryingTheJsonRpcError() throws Exception {
        String stranger = hub.createNode(HubFixture.uid("stranger"), null);
        Resp sent = rpc(lead, Map.of(), "message/send", Map.of("message", v03Message("finish me")));
        String finished = sent.json().path("result").path("id").asText();
        assertEquals(200, hub.post(worker, "/v1/tasks/" + finished + "/events", obj("type", "accept")).status());
        assertEquals(200, hub.post(worker, "/v1/tasks/" + finished + "/events", obj("type", "fail", "reason", "no"))
                .status());

        assertStreamedError(rpc(stranger, Map.of(), "message/stream", Map.of("message", v03Message("let me in"))),
                -32000, "acl denied");
        assertStreamedError(rpc(lead, Map.of(), "tasks/resubscribe", Map.of("id", "no-such-task")), -32001,
                "does not exist");
        assertStreamedError(rpc(lead, Map.of(), "tasks/resubscribe", Map.of("id", finished)), -32004,
                "nothing left to subscribe to");
        assertStreamedError(rpc(lead, Map.of(), "message/stream", Map.of("message", Map.of("kind", "message"))),
                -32602, "message");

        Resp v1 = rpc(lead, V1, "SubscribeToTask", Map.of("id", "no-such-task"));
        assertEquals(200, v1.status(), v1::toString);
        assertTrue(v1.headers().firstValue("Content-Type").orElse("").startsWith("application/json"), v1::toString);
        assertEquals(-32001, errorCode(v1));
        Resp anonymous = rpc(null, Map.of(), "tasks/resubscribe", Map.of("id", finished));
        assertEquals(401, anonymous.status(), anonymous::toString);
        assertEquals(-32000, errorCode(anonymous));
    }

    static Map<String, Object> v03Message(String text) {
        return Map.of("kind", "message", "messageId", UUID.randomUUID().toString(), "role", "user",
                "parts", List.of(Map.of("kind", "text", "text", text)));
    }

    /** One SSE event whose data is the JSON-RPC error response to request 7. */
    private static void assertStreamedError(Resp r, int code, String words) throws Exception {
        assertEquals(200, r.status(), r::toString);
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream"), r::toString);
        List<String> data = r.body().lines().filter(l -> l.startsWith("data:")).toList();
        assertEquals(1, data.size(), r::toString);
        JsonNode error = HubFixture.JSON.readTree(data.getFirst().substring("data:".length()));
        assertEquals("2.0", error.path("jsonrpc").asText(), r::toString);
        assertEquals(7, error.path("id").asInt(), r::toString);
        assertEquals(code, error.path("error").path("code").asInt(), r::toString);
        assertTrue(error.path("error").path("message").asText().contains(words), r::toString);
    }
}
