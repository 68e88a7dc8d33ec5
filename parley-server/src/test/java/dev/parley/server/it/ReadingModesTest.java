package dev.parley.server.it;

import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.SseStreamTest.assertRefused;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.parley.server.it.SseClient.Frame;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How an inbox is read, over real HTTP. {@code ?replay=unacked}: a cursor-less stream that
 * first sends everything not yet acked, replied to or dead-lettered — also what an earlier
 * reader was written and never acked — so a reader that dies with frames in flight loses
 * nothing. And only a node's own reads take delivery: the admin may read any inbox, by poll
 * or stream, but that leaves the envelopes as they were, and redeliveries go to the node's
 * streams, not to the admin's; the node's own poll is delivered by the time it is answered.
 */
class ReadingModesTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    static Path dataDir;
    static HubFixture hub;

    @BeforeAll
    static void startHub() {
        // one sender makes 900 sends and one reader 600 acks, as fast as they go
        hub = HubFixture.start(dataDir, c -> HubFixture.unthrottled(c.withHeartbeat(Duration.ofMillis(300))));
    }

    @AfterAll
    static void stopHub() {
        if (hub != null) {
            hub.close();
        }
    }

    private static List<Long> seqs(List<Frame> frames) {
        return frames.stream().map(Frame::seq).toList();
    }

    private static void ack(String token, String id, String status) {
        assertStatus(200, hub.post(token, "/v1/messages/" + id + "/ack", obj("status", status)));
    }

    @Test
    void framesReadButNeverAckedComeAgainOnAStreamThatReplaysUnacked() {
        String[] p = SseStreamTest.pair(hub);
        List<String> ids = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            ids.add(hub.sendOk(p[1], p[2], "m" + i).text("id"));
        }
        try (SseClient reader = SseClient.open(hub, "/v1/inbox/stream", p[3], null)) {
            reader.expectReady(WAIT);
            assertEquals(List.of(1L, 2L, 3L, 4L), seqs(reader.nextEvents(4, WAIT)));
        } // gone without acking anything
        SseStreamTest.awaitNoOpenStreams(hub);
        SseStreamTest.awaitDelivered(hub, p[1], ids); // written frames count as delivered
        try (SseClient plain = SseClient.open(hub, "/v1/inbox/stream", p[3], null)) {
            plain.expectReady(WAIT);
            hub.sendOk(p[1], p[2], "m5");
            assertEquals(5, plain.nextEvent(WAIT).seq(), "a plain cursor-less stream replays none of them");
        }
        SseStreamTest.awaitNoOpenStreams(hub);

        ack(p[3], ids.get(0), "processed");
        ack(p[3], ids.get(2), "failed");
        assertStatus(202, hub.post(p[3], "/v1/messages/" + ids.get(3) + "/reply", obj("text", "done")));
        hub.sendOk(p[1], p[2], "m6"); // never delivered

        try (SseClient again = SseClient.open(hub, "/v1/inbox/stream?replay=unacked", p[3], null)) {
            again.expectReady(WAIT);
            List<Frame> replay = again.nextEvents(3, WAIT);
            assertEquals(List.of(2L, 5L, 6L), seqs(replay), "everything not acked, replied to or failed, in order");
            assertEquals(ids.get(1), replay.getFirst().json().get("id").asText());
            assertEquals("m2", replay.getFirst().json().get("text").asText());
            hub.sendOk(p[1], p[2], "m7");
            assertEquals(7, again.nextEvent(WAIT).seq(), "then live, with nothing sent twice");
        }
        SseStreamTest.awaitNoOpenStreams(hub);
        try (SseClient later = SseClient.open(hub, "/v1/inbox/stream?replay=unacked", p[3], null)) {
            later.expectReady(WAIT);
            assertEquals(List.of(2L, 5L, 6L, 7L), seqs(later.nextEvents(4, WAIT)),
                    "until they are acked, every such stream gets them");
        }
    }

    /**
     * More unacked envelopes than one replay page, acked ones between them, and a sender
     * that keeps going while the replay runs: the stream sends each unacked envelope exactly
     * once, in seq order, and passes from replay to live without a gap or a repeat.
     */
    @Test
    void replayThenLiveIsInOrderWithoutDuplicatesWhileSendsContinue() throws Exception {
        String[] p = SseStreamTest.pair(hub);
        int before = 600;
        int during = 300;
        List<String> ids = new ArrayList<>();
        for (int i = 1; i <= before; i++) {
            ids.add(hub.sendOk(p[1], p[2], "old-" + i).text("id"));
        }
        Set<String> expected = new LinkedHashSet<>();
        for (int i = 0; i < before; i++) {
            switch (i % 4) {
                case 0 -> ack(p[3], ids.get(i), "processed");
                case 1 -> ack(p[3], ids.get(i), "failed");
                default -> expected.add(ids.get(i));
            }
        }
        // half of what stays unacked was delivered (and its reader went away), half never was
        try (SseClient reader = SseClient.open(hub, "/v1/inbox/stream?after=" + before / 2, p[3], null)) {
            reader.expectReady(WAIT);
            assertEquals(before / 2 + 1, reader.nextEvent(WAIT).seq());
        }
        SseStreamTest.awaitNoOpenStreams(hub);

        List<Frame> frames = new ArrayList<>();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();
             SseClient stream = SseClient.open(hub, "/v1/inbox/stream?replay=unacked", p[3], null)) {
            Future<List<String>> sender = pool.submit(() -> {
                List<String> sent = new ArrayList<>();
                for (int i = 1; i <= during; i++) {
                    sent.add(hub.sendOk(p[1], p[2], "new-" + i).text("id"));
                }
                return sent;
            });
            stream.expectReady(WAIT);
            expected.addAll(sender.get(60, TimeUnit.SECONDS));
            frames.addAll(stream.nextEvents(expected.size(), Duration.ofSeconds(30)));
            String marker = hub.sendOk(p[1], p[2], "marker").text("id");
            Frame next = stream.nextEvent(WAIT);
            assertEquals(marker, next.json().get("id").asText(), "nothing beyond the expected frames came");
        }

        List<Long> seqs = seqs(frames);
        for (int i = 1; i < seqs.size(); i++) {
            assertTrue(seqs.get(i) > seqs.get(i - 1), "seqs strictly increase: " + seqs.get(i - 1) + " then "
                    + seqs.get(i));
        }
        List<String> got = frames.stream().map(f -> f.json().get("id").asText()).toList();
        assertEquals(got.size(), new HashSet<>(got).size(), "no envelope twice");
        Set<String> missing = new LinkedHashSet<>(expected);
        got.forEach(missing::remove);
        List<String> extra = got.stream().filter(id -> !expected.contains(id)).toList();
        assertEquals(List.of(), List.copyOf(missing), "unacked envelopes the stream did not send");
        assertEquals(List.of(), extra, "envelopes sent though acked");
    }

    @Test
    void aCursorWinsOverTheReplay() {
        String[] p = SseStreamTest.pair(hub);
        for (int i = 1; i <= 4; i++) {
            hub.sendOk(p[1], p[2], "m" + i);
        }
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream?replay=unacked", p[3], "2")) {
            s.expectReady(WAIT);
            assertEquals(List.of(3L, 4L), seqs(s.nextEvents(2, WAIT)), "an EventSource resuming with Last-Event-ID");
        }
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream?after=3&replay=unacked", p[3], null)) {
            s.expectReady(WAIT);
            assertEquals(4, s.nextEvent(WAIT).seq());
        }
    }

    @Test
    void anUnknownReplayIsRefused() {
        String[] p = SseStreamTest.pair(hub);
        for (String bad : List.of("everything", "", "UNACKED", "unacked,undelivered")) {
            try (SseClient s = SseClient.open(hub, "/v1/inbox/stream?replay=" + bad, p[3], null)) {
                assertRefused(s, 400, "invalid_replay");
                assertTrue(s.errorBody().contains("undelivered, unacked"), s.errorBody());
            }
        }
        try (SseClient s = SseClient.open(hub, "/v1/nodes/" + p[2] + "/inbox/stream?replay=all", hub.admin(), null)) {
            assertRefused(s, 400, "invalid_replay");
        }
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream?replay=undelivered", p[3], null)) {
            s.expectReady(WAIT);
            hub.sendOk(p[1], p[2], "the default, named");
            assertEquals(1, s.nextEvent(WAIT).seq());
        }
        assertFalse(hub.get(p[3], "/v1/inbox").items().isEmpty());
    }

    // ------------------------------------------------------------------ only the node takes delivery

    private static String state(String token, String id) {
        return hub.status(token, id).text("state");
    }

    @Test
    void theAdminsPollLeavesTheNodesEnvelopesUndelivered() {
        String[] p = SseStreamTest.pair(hub);
        String first = hub.sendOk(p[1], p[2], "one").text("id");
        String second = hub.sendOk(p[1], p[2], "two").text("id");

        List<Long> seen = hub.get(hub.admin(), "/v1/nodes/" + p[2] + "/inbox").items().stream()
                .map(e -> e.get("seq").asLong()).toList();
        assertEquals(List.of(1L, 2L), seen);
        hub.sendOk(p[1], p[2], "three"); // committed after anything the poll may have queued
        assertEquals("accepted", state(p[1], first), "the admin looked; the node has not received it");
        assertEquals("accepted", state(p[1], second));

        try (SseClient own = SseClient.open(hub, "/v1/inbox/stream", p[3], null)) {
            own.expectReady(WAIT);
            assertEquals(List.of(1L, 2L, 3L), own.nextEvents(3, WAIT).stream().map(Frame::seq).toList(),
                    "the node's cursor-less stream replays what the admin read");
        }
    }

    @Test
    void theAdminsStreamLeavesTheNodesEnvelopesUndelivered() {
        String[] p = SseStreamTest.pair(hub);
        String first = hub.sendOk(p[1], p[2], "one").text("id");
        try (SseClient admin = SseClient.open(hub, "/v1/nodes/" + p[2] + "/inbox/stream", hub.admin(), null)) {
            admin.expectReady(WAIT);
            assertEquals(1, admin.nextEvent(WAIT).seq());
            String second = hub.sendOk(p[1], p[2], "two").text("id");
            assertEquals(2, admin.nextEvent(WAIT).seq(), "the admin sees live envelopes too");
            hub.sendOk(p[1], p[2], "three"); // committed after anything the stream may have queued
            assertEquals("accepted", state(p[1], first));
            assertEquals("accepted", state(p[1], second));
        }
        try (SseClient own = SseClient.open(hub, "/v1/inbox/stream", p[3], null)) {
            own.expectReady(WAIT);
            assertEquals(List.of(1L, 2L, 3L), own.nextEvents(3, WAIT).stream().map(Frame::seq).toList());
        }
    }

    @Test
    void theNodesOwnPollIsDeliveredWhenItIsAnswered() {
        String[] p = SseStreamTest.pair(hub);
        String id = hub.sendOk(p[1], p[2], "poll me").text("id");
        assertEquals(1, hub.get(p[3], "/v1/inbox").items().size());
        assertEquals("delivered", state(p[1], id), "the poll answered it, so it is delivered now");
    }

    @Test
    void aRedeliveryGoesToTheNodesNextStreamNotToTheAdminsStream() {
        String[] p = SseStreamTest.pair(hub);
        assertStatus(200, hub.request("PUT", "/v1/nodes/" + p[2] + "/delivery", hub.admin(),
                "{\"redeliverAfterMs\":400,\"retry\":{\"maxAttempts\":10}}".getBytes(), Map.of()));
        String id = hub.sendOk(p[1], p[2], "ack me").text("id");
        try (SseClient admin = SseClient.open(hub, "/v1/nodes/" + p[2] + "/inbox/stream?after=1", hub.admin(), null)) {
            admin.expectReady(WAIT);
            assertEquals(1, hub.get(p[3], "/v1/inbox").items().size()); // delivered; not acked within 400 ms
            await().atMost(WAIT).until(() -> hub.status(p[1], id).json().get("timeline").toString()
                    .contains("redelivering as attempt 2"));

            try (SseClient own = SseClient.open(hub, "/v1/inbox/stream", p[3], null)) {
                own.expectReady(WAIT);
                Frame again = own.nextEvent(WAIT);
                assertEquals(id, again.json().get("id").asText());
                assertEquals(2, again.json().get("trace").get("attempt").asInt(),
                        "the node gets the redelivery the admin's stream did not take");
            }
        }
    }
}
