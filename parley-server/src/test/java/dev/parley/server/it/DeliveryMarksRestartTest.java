package dev.parley.server.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.HubConfig;
import dev.parley.server.it.SseClient.Frame;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the delivery marks say, over real HTTP on a real store, as docs/delivered-marks.md asks
 * before the marks' storage changes: the instant an envelope was delivered is the same after a
 * restart and after the side file ({@code side-indexes.db}) is built again, undelivered envelopes
 * stay undelivered through both, and a stream from a cursor marks what it writes and nothing
 * before its cursor.
 */
class DeliveryMarksRestartTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    /** A closed client is seen at the next write at the latest: a heartbeat comes soon. */
    private static final UnaryOperator<HubConfig> QUICK_HEARTBEAT = c -> c.withHeartbeat(Duration.ofMillis(300));

    @TempDir
    Path dataDir;

    private static List<Long> seqs(List<Frame> frames) {
        return frames.stream().map(Frame::seq).toList();
    }

    /** The instant of the {@code delivered} entry of the envelope's timeline, if it has one. */
    private static Optional<String> deliveredAt(HubFixture hub, String token, String id) {
        JsonNode timeline = hub.status(token, id).get("timeline");
        return StreamSupport.stream(timeline.spliterator(), false)
                .filter(entry -> entry.path("state").asText().equals("delivered"))
                .map(entry -> entry.path("at").asText())
                .findFirst();
    }

    /** Each envelope's state and delivery instant, and the inbox's newest delivery, as the hub says them. */
    private static Map<String, String> marks(HubFixture hub, String senderToken, String readerToken, List<String> ids) {
        Map<String, String> marks = new LinkedHashMap<>();
        for (String id : ids) {
            marks.put(id, hub.status(senderToken, id).text("state") + " " + deliveredAt(hub, senderToken, id).orElse("-"));
        }
        marks.put("lastDeliveredAt", hub.get(readerToken, "/v1/inbox/summary").json().path("lastDeliveredAt").asText());
        return marks;
    }

    @Test
    void deliveryInstantsAndUndeliveredEnvelopesSurviveARestartAndASideFileRebuild() throws Exception {
        String[] p;
        List<String> ids = new ArrayList<>();
        Map<String, String> before;
        try (HubFixture one = HubFixture.start(dataDir, QUICK_HEARTBEAT)) {
            p = SseStreamTest.pair(one);
            for (int i = 1; i <= 4; i++) {
                ids.add(one.sendOk(p[1], p[2], "read " + i).text("id"));
            }
            try (SseClient stream = SseClient.open(one, "/v1/inbox/stream", p[3], null)) {
                stream.expectReady(WAIT);
                assertEquals(List.of(1L, 2L, 3L, 4L), seqs(stream.nextEvents(4, WAIT)));
            }
            await().atMost(WAIT).until(() -> ids.stream().allMatch(id -> deliveredAt(one, p[1], id).isPresent()));
            // a frame written to a stream the client closed but the hub has not yet seen close is delivered
            await().atMost(WAIT).until(() -> one.metric("parley_open_streams") == 0.0);
            ids.add(one.sendOk(p[1], p[2], "unread 5").text("id"));
            ids.add(one.sendOk(p[1], p[2], "unread 6").text("id"));
            before = marks(one, p[1], p[3], ids);
        }
        assertEquals("accepted -", before.get(ids.get(4)), before::toString);
        assertEquals("accepted -", before.get(ids.get(5)), before::toString);
        assertTrue(before.get(ids.get(0)).startsWith("delivered "), before::toString);

        try (HubFixture two = HubFixture.start(dataDir, QUICK_HEARTBEAT)) {
            assertEquals(before, marks(two, p[1], p[3], ids), "after a restart");
        }
        Path side = dataDir.resolve("side-indexes.db");
        assertTrue(Files.exists(side), "the store keeps its side indexes in " + side);
        for (String name : List.of("side-indexes.db", "side-indexes.db-wal", "side-indexes.db-shm")) {
            Files.deleteIfExists(dataDir.resolve(name));
        }
        try (HubFixture three = HubFixture.start(dataDir, QUICK_HEARTBEAT)) {
            assertEquals(before, marks(three, p[1], p[3], ids), "after the side file was built again");
            try (SseClient stream = SseClient.open(three, "/v1/inbox/stream", p[3], null)) {
                stream.expectReady(WAIT);
                assertEquals(List.of(5L, 6L), seqs(stream.nextEvents(2, WAIT)),
                        "a stream without a cursor replays the undelivered ones, and only them");
                three.sendOk(p[1], p[2], "live 7");
                assertEquals(7, stream.nextEvent(WAIT).seq(), "then goes live");
            }
        }
    }

    @Test
    void aStreamFromACursorMarksWhatItWritesAndLeavesWhatItSkippedUndelivered() {
        try (HubFixture hub = HubFixture.start(dataDir, QUICK_HEARTBEAT)) {
            String[] p = SseStreamTest.pair(hub);
            List<String> ids = new ArrayList<>();
            for (int i = 1; i <= 5; i++) {
                ids.add(hub.sendOk(p[1], p[2], "m" + i).text("id"));
            }
            try (SseClient resumed = SseClient.open(hub, "/v1/inbox/stream", p[3], "3")) {
                resumed.expectReady(WAIT);
                assertEquals(List.of(4L, 5L), seqs(resumed.nextEvents(2, WAIT)));
            }
            await().atMost(WAIT).until(() -> deliveredAt(hub, p[1], ids.get(3)).isPresent()
                    && deliveredAt(hub, p[1], ids.get(4)).isPresent());
            for (String skipped : ids.subList(0, 3)) {
                assertEquals("accepted", hub.status(p[1], skipped).text("state"), "before the cursor: not written");
            }
            try (SseClient fresh = SseClient.open(hub, "/v1/inbox/stream", p[3], null)) {
                fresh.expectReady(WAIT);
                assertEquals(List.of(1L, 2L, 3L), seqs(fresh.nextEvents(3, WAIT)),
                        "a stream without a cursor replays the envelopes the cursor skipped");
                hub.sendOk(p[1], p[2], "m6");
                assertEquals(6, fresh.nextEvent(WAIT).seq(), "and not those the resumed stream wrote");
            }
        }
    }
}
