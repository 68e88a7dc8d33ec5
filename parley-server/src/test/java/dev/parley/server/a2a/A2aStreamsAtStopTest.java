package dev.parley.server.a2a;

import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import dev.parley.server.it.SseClient;
import dev.parley.server.it.SseClient.Frame;
import dev.parley.server.it.ThreadDumps;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A2A task streams wait on a thread of their own, as inbox streams do, and a stopping hub ends
 * each of them cleanly: its last event is an error that says the hub is shutting down (the
 * task is not over; the client subscribes again), then the response's end, before the listener
 * closes the connection.
 */
class A2aStreamsAtStopTest {
    private static final Map<String, String> V1 = Map.of("A2A-Version", "1.0");
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String AWAIT_END = "a2a.A2aAgent.awaitEnd";

    @TempDir
    Path dir;

    @Test
    void aStopEndsEveryKindOfA2aStreamWithAnErrorThatSaysWhy() {
        HubFixture hub = HubFixture.start(dir);
        List<SseClient> streams = new ArrayList<>();
        try {
            String lead = hub.createNode("lead", null);
            hub.createNode("worker", "lead");
            SseClient jsonRpc = SseClient.post(hub.port(), "/a2a/worker", lead, V1,
                    rpc("SendStreamingMessage", Map.of("message", v1Message("over JSON-RPC"))), 0, true);
            SseClient rest = SseClient.post(hub.port(), "/a2a/worker/message:stream", lead, V1,
                    json(Map.of("message", v1Message("over HTTP+JSON"))), 0, true);
            SseClient v03 = SseClient.post(hub.port(), "/a2a/worker", lead, Map.of(),
                    rpc("message/stream", Map.of("message", A2aProtocolTest.v03Message("over 0.3"))), 0, true);
            streams.addAll(List.of(jsonRpc, rest, v03));
            for (SseClient stream : streams) {
                assertEquals(200, stream.awaitStatus(WAIT));
                stream.nextEvent(WAIT); // the task as it stands: the stream now waits for its changes
            }

            hub.close();
            hub = null;

            JsonNode rpcEnd = lastEvent(jsonRpc);
            assertEquals(-32603, rpcEnd.path("error").path("code").asInt(), rpcEnd::toString);
            assertShuttingDown(rpcEnd.path("error").path("message").asText(), rpcEnd);
            JsonNode restEnd = lastEvent(rest);
            assertEquals("INTERNAL", restEnd.path("error").path("status").asText(), restEnd::toString);
            assertShuttingDown(restEnd.path("error").path("message").asText(), restEnd);
            JsonNode v03End = lastEvent(v03);
            assertEquals(-32603, v03End.path("error").path("code").asInt(), v03End::toString);
            assertShuttingDown(v03End.path("error").path("message").asText(), v03End);
        } finally {
            streams.forEach(SseClient::close);
            if (hub != null) {
                hub.close();
            }
        }
    }

    /**
     * A blocking send waits for its task to end (at most 30 s); a stop ends that wait at once: the
     * call is answered with the task as it stands, or its connection closes with the listener, and
     * no thread of the stopped hub is left waiting.
     */
    @Test
    void aStopEndsTheWaitOfABlockingSend() throws Exception {
        HubFixture hub = HubFixture.start(dir);
        try {
            String lead = hub.createNode("lead", null);
            hub.createNode("worker", "lead");
            HubFixture on = hub;
            CompletableFuture<Object> answered = CompletableFuture.supplyAsync(() -> {
                try {
                    return on.request("POST", "/a2a/worker", lead, rpc("SendMessage",
                            Map.of("message", v1Message("wait for me"))), V1);
                } catch (RuntimeException | AssertionError connectionClosed) {
                    return connectionClosed;
                }
            }, Executors.newVirtualThreadPerTaskExecutor());
            await().atMost(WAIT).until(() -> !ThreadDumps.stacksThrough(dir, AWAIT_END).isEmpty());

            hub.close();
            hub = null;

            await().atMost(WAIT).until(() -> ThreadDumps.stacksThrough(dir, AWAIT_END).isEmpty());
            Object answer = answered.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            if (answer instanceof Resp resp) {
                assertEquals("TASK_STATE_SUBMITTED", resp.json().path("result").path("task").path("status")
                        .path("state").asText(), resp::toString);
            }
        } finally {
            if (hub != null) {
                hub.close();
            }
        }
    }

    /**
     * A waiting task stream holds a virtual thread of its own, not the edge's request thread with
     * Jetty's frames beneath it (an idle stream's stack is what it costs, BENCHMARKS.md stop 57).
     */
    @Test
    void aWaitingA2aStreamIsServedOnAThreadOfItsOwn() throws Exception {
        try (HubFixture hub = HubFixture.start(dir)) {
            String lead = hub.createNode("lead", null);
            String worker = hub.createNode("worker", "lead");
            Resp sent = hub.request("POST", "/a2a/worker", lead, rpc("SendMessage", Map.of("message",
                    v1Message("a long job"), "configuration", Map.of("returnImmediately", true))), V1);
            String task = sent.json().path("result").path("task").path("id").asText();
            assertEquals(200, hub.post(worker, "/v1/tasks/" + task + "/events", obj("type", "accept")).status());
            try (SseClient subscribed = SseClient.post(hub.port(), "/a2a/worker", lead, V1,
                    rpc("SubscribeToTask", Map.of("id", task)), 0, true)) {
                assertEquals(200, subscribed.awaitStatus(WAIT));
                assertTrue(subscribed.nextEvent(WAIT).json().path("result").has("task"), "the snapshot comes first");
                ThreadDumps.assertServedOffTheEdge(dir, "a2a.A2aAgent.stream");
            }
        }
    }

    /** The last event of a stream that must end cleanly (the end of its chunked response, no reset) after it. */
    private static JsonNode lastEvent(SseClient stream) {
        List<Frame> frames = stream.drainUntilEnd(WAIT);
        assertNull(stream.end().cause(), "a stop must end the stream cleanly, got " + stream.end().cause());
        List<Frame> events = frames.stream().filter(f -> !f.isComment()).toList();
        assertTrue(!events.isEmpty(), "the stream ended without a last event");
        Frame last = events.getLast();
        assertEquals("error", last.event(), last::data);
        return last.json();
    }

    private static void assertShuttingDown(String message, JsonNode event) {
        assertTrue(message.contains("the hub is shutting down"), event::toString);
    }

    private static Map<String, Object> v1Message(String text) {
        return Map.of("messageId", UUID.randomUUID().toString(), "role", "ROLE_USER", "parts",
                List.of(Map.of("text", text)));
    }

    private static byte[] rpc(String method, Map<String, Object> params) {
        return json(Map.of("jsonrpc", "2.0", "id", 1, "method", method, "params", params));
    }

    private static byte[] json(Object body) {
        try {
            return HubFixture.JSON.writeValueAsString(body).getBytes(StandardCharsets.UTF_8);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new AssertionError(e);
        }
    }
}
