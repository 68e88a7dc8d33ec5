package dev.parley.server.a2a;

import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import dev.parley.server.it.LogCapture;
import dev.parley.server.it.SseClient;
import dev.parley.server.it.SseClient.Frame;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An A2A stream whose client stopped reading is cut after the slow-reader timeout, like an
 * inbox stream: the task's other subscribers and the assignee moving the task carry on at
 * full speed meanwhile, and the cut client sees its connection end.
 */
class A2aSlowReaderTest {
    private static final Map<String, String> V1 = Map.of("A2A-Version", "1.0");
    private static final int PROGRESS_BYTES = 120 * 1024; // each update is a status event this large
    /** 70 MiB: far beyond any socket buffer, so the stuck subscriber's write is blocked for good after them. */
    private static final int BLOCKING_UPDATES = 600;
    private static final Duration SLOW_READER_TIMEOUT = Duration.ofSeconds(5);
    /** Below the timeout: what waited on the stuck subscriber would take at least that long. */
    private static final long MAX_HEALTHY_MS = 4000;
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    @Test
    void aSubscriberThatStopsReadingIsCutWhileTheOthersCarryOn() {
        try (LogCapture jetty = LogCapture.of("org.eclipse.jetty");
             HubFixture hub = HubFixture.start(dir,
                c -> HubFixture.unthrottled(c.withSlowReaderTimeout(SLOW_READER_TIMEOUT)))) { // 600 updates, at full speed
            String lead = hub.createNode("lead", null);
            String worker = hub.createNode("worker", "lead");
            Resp sent = hub.request("POST", "/a2a/worker", lead, rpc("SendMessage", "{\"message\":{\"messageId\":\""
                    + UUID.randomUUID() + "\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"long job\"}]},"
                    + "\"configuration\":{\"returnImmediately\":true}}"), V1);
            String task = sent.json().path("result").path("task").path("id").asText();
            assertEquals(200, hub.post(worker, "/v1/tasks/" + task + "/events", obj("type", "accept")).status());

            byte[] subscribe = rpc("SubscribeToTask", "{\"id\":\"" + task + "\"}");
            SseClient stuck = SseClient.post(hub.port(), "/a2a/worker", lead, V1, subscribe, 4096, false);
            SseClient healthy = SseClient.post(hub.port(), "/a2a/worker", lead, V1, subscribe, 0, true);
            assertEquals(200, healthy.awaitStatus(WAIT));
            assertTrue(healthy.nextEvent(WAIT).json().path("result").has("task"), "the snapshot comes first");

            // The assignee reports large progress until the stuck subscriber is cut, or until so much
            // went out that its write is blocked for good; the cut then comes within the timeout. How
            // many updates fit before the cut depends on the machine's speed, so the bound is on bytes.
            String pad = "p".repeat(PROGRESS_BYTES);
            List<Long> sentAt = new ArrayList<>();
            long slowestUpdate = 0;
            int updates = 0;
            while (hub.metric("parley_slow_readers_disconnected_total") < 1 && updates < BLOCKING_UPDATES) {
                for (int burst = 0; burst < 5; burst++, updates++) {
                    long start = System.nanoTime();
                    sentAt.add(start);
                    Resp moved = hub.post(worker, "/v1/tasks/" + task + "/events", obj("type", "update",
                            "progress", Map.of("n", updates, "pad", pad)));
                    assertEquals(200, moved.status(), moved::toString);
                    slowestUpdate = Math.max(slowestUpdate, (System.nanoTime() - start) / 1_000_000);
                }
            }
            await().atMost(SLOW_READER_TIMEOUT.plus(WAIT)).until(
                    () -> hub.metric("parley_slow_readers_disconnected_total") >= 1);
            assertTrue(slowestUpdate < MAX_HEALTHY_MS, "the stuck subscriber held up the assignee: " + slowestUpdate
                    + " ms");

            // The healthy subscriber got every update, in order and promptly.
            long slowestDelivery = 0;
            for (int n = 0; n < updates; n++) {
                Frame frame = healthy.nextEvent(WAIT);
                JsonNode data = frame.json().path("result").path("statusUpdate").path("status").path("message")
                        .path("parts").path(0).path("data");
                assertEquals(n, data.path("n").asInt(-1), () -> "update out of order: " + frame.data().length());
                slowestDelivery = Math.max(slowestDelivery, (frame.receivedNanos() - sentAt.get(n)) / 1_000_000);
            }
            assertTrue(slowestDelivery < MAX_HEALTHY_MS, "the stuck subscriber held up the healthy one: "
                    + slowestDelivery + " ms");

            // The cut subscriber's connection ends; the healthy one still follows the task to its end.
            stuck.startReading();
            stuck.drainUntilEnd(Duration.ofSeconds(30));
            assertNotNull(stuck.end(), "the stuck connection must see EOF or a reset");
            assertEquals(200, hub.post(worker, "/v1/tasks/" + task + "/events", obj("type", "complete")).status());
            List<Frame> last = healthy.drainUntilEnd(WAIT);
            assertEquals("TASK_STATE_COMPLETED", last.getLast().json().path("result").path("statusUpdate")
                    .path("status").path("state").asText(), () -> last.getLast().data());
            System.out.printf("a2a slow reader: cut after %d updates of %d KiB; slowest update %d ms, slowest"
                    + " healthy delivery %d ms%n", updates, PROGRESS_BYTES / 1024, slowestUpdate, slowestDelivery);
            // the cut failed the stuck write: Jetty saw no blocking write interrupted ("Blocking.Shared incomplete")
            assertEquals(List.of(), jetty.messages(Level.WARNING, ""));
            stuck.close();
            healthy.close();
        }
    }

    private static byte[] rpc(String method, String params) {
        return ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" + method + "\",\"params\":" + params + "}")
                .getBytes(StandardCharsets.UTF_8);
    }
}
