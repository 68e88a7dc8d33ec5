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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reader that never reads must not hold up the hub: its stream is cut after the
 * slow-reader timeout, other readers and senders carry on meanwhile, and resuming from
 * the last seq it parsed loses nothing.
 */
class SlowReaderTest {
    static final int BIG_MESSAGES = 512;          // 512 x 16 KiB = 8 MiB, far beyond the TCP buffers
    static final int MIN_HEALTHY_SENDS = 200;
    static final long MAX_HEALTHY_LATENCY_MS = 1500; // below the 2 s slow-reader timeout

    @TempDir
    Path dataDir;

    @Test
    void aStuckReaderIsCutWhileOthersCarryOnAndResumingLosesNothing() throws Exception {
        try (HubFixture hub = HubFixture.start(dataDir, c -> c.withSlowReaderTimeout(Duration.ofSeconds(2)))) {
            String root = uid("sr-root");
            hub.createNode(root, null);
            String slow = uid("sr-slow");
            String slowToken = hub.createNode(slow, root);
            String healthy = uid("sr-ok");
            String healthyToken = hub.createNode(healthy, root);
            // several senders (siblings of both readers), so no single node sends at a high rate
            String[] fillers = new String[4];
            for (int t = 0; t < fillers.length; t++) {
                fillers[t] = hub.createNode(uid("sr-fill"), root);
            }
            String[] pingers = new String[8];
            for (int t = 0; t < pingers.length; t++) {
                pingers[t] = hub.createNode(uid("sr-ping"), root);
            }

            SseClient stuck = SseClient.open(hub.port(), "/v1/inbox/stream", slowToken, null, 4096, false);
            SseClient reader = SseClient.open(hub, "/v1/inbox/stream", healthyToken, null);
            reader.expectReady(Duration.ofSeconds(5));
            await().atMost(Duration.ofSeconds(5)).until(() -> hub.metric("parley_open_streams") == 2.0);

            String chunk = "s".repeat(16 * 1024);
            Map<Long, String> slowIds = new ConcurrentHashMap<>();
            Map<Long, Long> healthySentAt = new ConcurrentHashMap<>();
            List<Long> sendMillis = java.util.Collections.synchronizedList(new ArrayList<>());
            AtomicBoolean fillDone = new AtomicBoolean();
            AtomicInteger healthySends = new AtomicInteger();

            try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                List<Future<?>> filling = new ArrayList<>();
                for (String filler : fillers) {
                    filling.add(pool.submit(() -> {
                        for (int i = 0; i < BIG_MESSAGES / fillers.length; i++) {
                            Resp r = hub.sendOk(filler, slow, chunk);
                            slowIds.put(r.num("seq"), r.text("id"));
                        }
                        return null;
                    }));
                }
                // healthy traffic runs through the fill and until the stuck stream is cut
                Future<?> healthyTraffic = pool.submit(() -> {
                    int i = 0;
                    while (true) {
                        if (i >= MIN_HEALTHY_SENDS && fillDone.get() && i % 10 == 0
                                && hub.metric("parley_open_streams") <= 1.0) {
                            break; // the stuck stream is gone
                        }
                        if (i >= 5000) {
                            throw new AssertionError("the stuck stream was never cut (parley_open_streams = "
                                    + hub.metric("parley_open_streams") + ")");
                        }
                        long start = System.nanoTime();
                        Resp r = hub.sendOk(pingers[i % pingers.length], healthy, "ping-" + i);
                        long took = (System.nanoTime() - start) / 1_000_000;
                        sendMillis.add(took);
                        healthySentAt.put(r.num("seq"), start);
                        i++;
                        healthySends.set(i);
                    }
                    return null;
                });
                for (Future<?> f : filling) {
                    f.get(60, TimeUnit.SECONDS);
                }
                fillDone.set(true);
                healthyTraffic.get(60, TimeUnit.SECONDS);
            }
            assertEquals(BIG_MESSAGES, slowIds.size(), "every big send must be accepted");

            // the slow stream was disconnected by the hub, the healthy one is still open
            await().atMost(Duration.ofSeconds(10)).until(() -> hub.metric("parley_open_streams") == 1.0);
            assertNull(reader.end(), "the healthy stream must stay open");

            // the healthy reader saw every one of its envelopes, promptly
            int n = healthySends.get();
            assertTrue(n >= MIN_HEALTHY_SENDS);
            List<Frame> seen = reader.nextEvents(n, Duration.ofSeconds(10));
            long maxLatency = 0;
            for (int i = 0; i < n; i++) {
                Frame f = seen.get(i);
                assertEquals(i + 1, f.seq(), "healthy stream must be gap-free");
                Long sentAt = healthySentAt.get(f.seq());
                assertNotNull(sentAt);
                maxLatency = Math.max(maxLatency, (f.receivedNanos() - sentAt) / 1_000_000);
            }
            long maxSend = sendMillis.stream().mapToLong(Long::longValue).max().orElse(0);
            assertTrue(maxSend < MAX_HEALTHY_LATENCY_MS,
                    "a send was held up by the stuck reader: " + maxSend + " ms");
            assertTrue(maxLatency < MAX_HEALTHY_LATENCY_MS,
                    "the healthy reader was held up by the stuck reader: " + maxLatency + " ms");

            // finally read what the stuck socket holds: it must end (EOF or reset)
            stuck.startReading();
            List<Frame> got = stuck.drainUntilEnd(Duration.ofSeconds(30));
            assertNotNull(stuck.end(), "the stuck socket must see EOF or a reset");
            long lastSeq = 0;
            for (Frame f : got) {
                if (f.isComment()) {
                    continue;
                }
                assertEquals(lastSeq + 1, f.seq(), "the stuck stream must be gap-free up to the cut");
                assertEquals(slowIds.get(f.seq()), f.json().get("id").asText());
                lastSeq = f.seq();
            }
            assertTrue(lastSeq < BIG_MESSAGES,
                    "the stuck reader cannot have received all " + BIG_MESSAGES + " envelopes (got " + lastSeq + ")");
            stuck.close();
            System.out.printf("slow-reader: healthy sends=%d, max send=%d ms, max healthy latency=%d ms, "
                    + "stuck reader parsed up to seq %d of %d, end=%s%n", n, maxSend, maxLatency, lastSeq,
                    BIG_MESSAGES, stuck.end());

            // a fresh stream resumed from the last parsed seq gets everything after it
            try (SseClient resumed = SseClient.open(hub, "/v1/inbox/stream", slowToken, Long.toString(lastSeq))) {
                resumed.expectReady(Duration.ofSeconds(5));
                int missing = (int) (BIG_MESSAGES - lastSeq);
                List<Frame> rest = resumed.nextEvents(missing, Duration.ofSeconds(30));
                long expected = lastSeq + 1;
                for (Frame f : rest) {
                    assertEquals(expected, f.seq(), "resume must be gap-free");
                    assertEquals(slowIds.get(expected), f.json().get("id").asText());
                    assertEquals(chunk.length(), f.json().get("text").asText().length());
                    expected++;
                }
                assertEquals(BIG_MESSAGES + 1, expected);
                Resp marker = hub.sendOk(fillers[0], slow, "marker");
                assertEquals(marker.text("id"), resumed.nextEvent(Duration.ofSeconds(5)).json().get("id").asText(),
                        "nothing extra after the replay");
            }
            reader.close();
        }
    }
}
