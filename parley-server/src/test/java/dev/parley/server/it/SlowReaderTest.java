package dev.parley.server.it;

import static dev.parley.server.it.HubFixture.uid;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.parley.server.it.HubFixture.Resp;
import dev.parley.server.it.SseClient.Frame;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reader that never reads must not hold up the hub: while its stream is stuck (its TCP
 * window full), senders and other readers carry on; its stream is cut after the
 * slow-reader timeout, and resuming from the last seq it parsed loses nothing. Nothing here
 * is timed: that the stream is stuck is what the hub records (the last envelope written to
 * it stays undelivered), and the cut is what the hub counts.
 */
class SlowReaderTest {
    static final int BIG_MESSAGES = 512;          // 512 x 16 KiB = 8 MiB, far beyond the TCP buffers
    static final int HEALTHY_SENDS = 200;
    static final Duration WAIT = Duration.ofSeconds(30);
    static final String CHUNK = "s".repeat(16 * 1024);

    @TempDir
    Path dataDir;

    /** The nodes of one run: a root, the stuck reader, a healthy reader, and senders (all siblings). */
    private record Nodes(String slowToken, String healthyToken, String slow, String healthy, String[] fillers,
                         String[] pingers) {
        static Nodes create(HubFixture hub) {
            String root = uid("sr-root");
            hub.createNode(root, null);
            String slow = uid("sr-slow");
            String slowToken = hub.createNode(slow, root);
            String healthy = uid("sr-ok");
            String healthyToken = hub.createNode(healthy, root);
            // several senders, so no single node sends at a high rate
            String[] fillers = new String[4];
            for (int t = 0; t < fillers.length; t++) {
                fillers[t] = hub.createNode(uid("sr-fill"), root);
            }
            String[] pingers = new String[8];
            for (int t = 0; t < pingers.length; t++) {
                pingers[t] = hub.createNode(uid("sr-ping"), root);
            }
            return new Nodes(slowToken, healthyToken, slow, healthy, fillers, pingers);
        }
    }

    /** Sends the big envelopes to the stuck reader from every filler at once; returns their ids by seq. */
    private static Future<Map<Long, String>> fill(ExecutorService pool, HubFixture hub, Nodes nodes) {
        return pool.submit(() -> {
            Map<Long, String> ids = new ConcurrentHashMap<>();
            List<Future<?>> filling = new ArrayList<>();
            for (String filler : nodes.fillers()) {
                filling.add(pool.submit(() -> {
                    for (int i = 0; i < BIG_MESSAGES / nodes.fillers().length; i++) {
                        Resp r = hub.sendOk(filler, nodes.slow(), CHUNK);
                        ids.put(r.num("seq"), r.text("id"));
                    }
                    return null;
                }));
            }
            for (Future<?> f : filling) {
                f.get();
            }
            return ids;
        });
    }

    /** The events among {@code frames} run gap-free from seq {@code after + 1}, each the envelope {@code ids} names. */
    private static void assertFrames(List<Frame> frames, long after, Map<Long, String> ids, String what) {
        long expected = after + 1;
        for (Frame f : frames) {
            if (f.isComment()) {
                continue;
            }
            assertEquals(expected, f.seq(), what + " must be gap-free");
            assertEquals(ids.get(expected), f.json().get("id").asText(), what + ": wrong envelope at seq " + expected);
            expected++;
        }
    }

    @Test
    void aStuckReaderHoldsUpNoSenderAndNoOtherReader() throws Exception {
        // the watchdog would cut the stuck stream only after ten minutes: it stays stuck throughout
        try (HubFixture hub = HubFixture.start(dataDir, c -> c.withSlowReaderTimeout(Duration.ofMinutes(10)))) {
            Nodes nodes = Nodes.create(hub);
            SseClient stuck = SseClient.open(hub.port(), "/v1/inbox/stream", nodes.slowToken(), null, 4096, false);
            SseClient reader = SseClient.open(hub, "/v1/inbox/stream", nodes.healthyToken(), null);
            reader.expectReady(WAIT);
            await().atMost(WAIT).until(() -> hub.metric("parley_open_streams") == 2.0);

            // healthy traffic through the fill and after it, when the stuck stream can write no more
            Map<Long, String> healthyIds = new ConcurrentHashMap<>();
            Map<Long, String> slowIds;
            try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                Future<Map<Long, String>> filled = fill(pool, hub, nodes);
                int i = 0;
                while (!filled.isDone() || i < HEALTHY_SENDS) {
                    Resp r = hub.sendOk(nodes.pingers()[i % nodes.pingers().length], nodes.healthy(), "ping-" + i);
                    healthyIds.put(r.num("seq"), r.text("id"));
                    i++;
                }
                slowIds = filled.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            assertEquals(BIG_MESSAGES, slowIds.size(), "every big send is accepted");
            assertFrames(reader.nextEvents(healthyIds.size(), WAIT), 0, healthyIds, "the healthy stream");

            // All that happened while the stuck stream was stuck: its reader read nothing, so it
            // cannot have written the last envelope, and it is still open.
            String lastBig = slowIds.get((long) BIG_MESSAGES);
            assertEquals("accepted", hub.status(hub.admin(), lastBig).text("state"),
                    "the stuck stream wrote the last envelope: these TCP buffers take 8 MiB, nothing was stuck");
            assertEquals(2.0, hub.metric("parley_open_streams"));
            assertEquals(0.0, hub.metric("parley_slow_readers_disconnected_total"));
            assertNull(reader.end(), "the healthy stream stays open");

            // once its reader reads, the stuck stream goes on where it stood: everything, in order
            stuck.startReading();
            stuck.expectReady(WAIT);
            assertFrames(stuck.nextEvents(BIG_MESSAGES, WAIT), 0, slowIds, "the unstuck stream");
            stuck.close();
            reader.close();
        }
    }

    @Test
    void aStuckReaderIsCutAndResumingFromItsLastSeqLosesNothing() throws Exception {
        try (LogCapture jetty = LogCapture.of("org.eclipse.jetty");
             HubFixture hub = HubFixture.start(dataDir, c -> c.withSlowReaderTimeout(Duration.ofSeconds(2)))) {
            Nodes nodes = Nodes.create(hub);
            SseClient stuck = SseClient.open(hub.port(), "/v1/inbox/stream", nodes.slowToken(), null, 4096, false);
            await().atMost(WAIT).until(() -> hub.metric("parley_open_streams") == 1.0);
            Map<Long, String> slowIds;
            try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                slowIds = fill(pool, hub, nodes).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            assertEquals(BIG_MESSAGES, slowIds.size(), "every big send is accepted");

            // the hub cuts the stream whose write stayed blocked past the timeout
            await().atMost(WAIT).until(() -> hub.metric("parley_slow_readers_disconnected_total") == 1.0);
            await().atMost(WAIT).until(() -> hub.metric("parley_open_streams") == 0.0);

            assertEquals(List.of(), jetty.messages(Level.WARNING, ""), "the cut failed the stuck write, not interrupted it");

            // what the stuck socket holds ends (EOF or reset), gap-free up to the cut
            stuck.startReading();
            List<Frame> got = stuck.drainUntilEnd(WAIT);
            assertNotNull(stuck.end(), "the stuck socket must see EOF or a reset");
            List<Frame> events = got.stream().filter(f -> !f.isComment()).toList();
            assertFrames(events, 0, slowIds, "the stuck stream up to the cut");
            long lastSeq = events.isEmpty() ? 0 : events.getLast().seq();
            assertTrue(lastSeq < BIG_MESSAGES,
                    "the stuck reader cannot have received all " + BIG_MESSAGES + " envelopes (got " + lastSeq + ")");
            stuck.close();

            // a fresh stream resumed from the last parsed seq gets everything after it
            try (SseClient resumed = SseClient.open(hub, "/v1/inbox/stream", nodes.slowToken(), Long.toString(lastSeq))) {
                resumed.expectReady(WAIT);
                List<Frame> rest = resumed.nextEvents((int) (BIG_MESSAGES - lastSeq), WAIT);
                assertFrames(rest, lastSeq, slowIds, "the resumed stream");
                assertEquals(BIG_MESSAGES, rest.getLast().seq());
                assertEquals(CHUNK.length(), rest.getLast().json().get("text").asText().length());
                Resp marker = hub.sendOk(nodes.fillers()[0], nodes.slow(), "marker");
                assertEquals(marker.text("id"), resumed.nextEvent(WAIT).json().get("id").asText(),
                        "nothing extra after the replay");
            }
        }
    }
}
