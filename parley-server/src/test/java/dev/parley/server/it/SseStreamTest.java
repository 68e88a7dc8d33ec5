package dev.parley.server.it;

import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.HubFixture.uid;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture.Resp;
import dev.parley.server.it.SseClient.Frame;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The SSE inbox stream: framing, replay, cursors, heartbeats, and resuming after a cut. */
class SseStreamTest {
    static final Duration WAIT = Duration.ofSeconds(5);

    @TempDir
    static Path dataDir;
    static HubFixture hub;

    @BeforeAll
    static void startHub() {
        hub = HubFixture.start(dataDir, c -> HubFixture.unthrottled(c).withHeartbeat(Duration.ofMillis(300)));
    }

    @AfterAll
    static void stopHub() {
        if (hub != null) {
            hub.close();
        }
    }

    /** A parent and a child; returns {parent, parentToken, child, childToken}. */
    static String[] pair() {
        return pair(hub);
    }

    static String[] pair(HubFixture on) {
        String a = uid("sa");
        String aToken = on.createNode(a, null);
        String b = uid("sb");
        String bToken = on.createNode(b, a);
        return new String[] {a, aToken, b, bToken};
    }

    static void assertRefused(SseClient s, int status, String code) {
        assertEquals(status, s.awaitStatus(WAIT), () -> "stream should be refused: " + s.errorBody());
        s.drainUntilEnd(WAIT);
        JsonNode body;
        try {
            body = HubFixture.JSON.readTree(s.errorBody());
        } catch (Exception e) {
            throw new AssertionError("error body is not JSON: " + s.errorBody(), e);
        }
        assertEquals(code, body.path("error").asText(), "error code: " + s.errorBody());
        assertFalse(body.path("message").asText("").isBlank(), "error message: " + s.errorBody());
    }

    /**
     * Waits until the hub has recorded {@code ids} delivered. A stream marks what it wrote in
     * a writer job of its own after the write, so a reader can see a frame before the mark is
     * committed; a test whose next step reads the mark (a cursor-less replay, a status) waits.
     */
    static void awaitDelivered(HubFixture on, String token, List<String> ids) {
        await().atMost(WAIT).until(() -> ids.stream().allMatch(id -> "delivered".equals(on.status(token, id).text("state"))));
    }

    static void awaitDelivered(String token, List<String> ids) {
        awaitDelivered(hub, token, ids);
    }

    static void awaitNoOpenStreams() {
        awaitNoOpenStreams(hub);
    }

    static void awaitNoOpenStreams(HubFixture on) {
        await().atMost(WAIT).until(() -> on.metric("parley_open_streams") == 0.0);
    }

    @Test
    void firstFrameIsReadyThenIdIsSeqEventIsKindDataIsTheEnvelope() {
        String[] p = pair();
        Resp m1 = hub.sendOk(p[1], p[2], "first");
        Resp m2 = assertStatus(202, hub.post(p[1], "/v1/messages", obj("to", p[2], "kind", "note.v1",
                "data", Map.of("n", 2), "meta", Map.of("k", "v"))));

        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream", p[3], null)) {
            s.expectReady(WAIT);
            String type = s.header("content-type");
            assertTrue(type != null && type.startsWith("text/event-stream"), "content type: " + type);

            Frame f1 = s.nextEvent(WAIT);
            assertEquals("1", f1.id());
            assertEquals("message", f1.event());
            assertFalse(f1.data().contains("\n"), "envelope JSON must be on one data line");
            JsonNode e1 = f1.json();
            assertEquals(m1.text("id"), e1.get("id").asText());
            assertEquals(1, e1.get("seq").asLong());
            assertEquals(p[0], e1.get("from").asText());
            assertEquals(p[2], e1.get("to").asText());
            assertEquals("message", e1.get("kind").asText());
            assertEquals("first", e1.get("text").asText());
            assertEquals("intra_group", e1.path("trace").path("route").asText());
            assertEquals(1, e1.path("trace").path("attempt").asInt());

            Frame f2 = s.nextEvent(WAIT);
            assertEquals("2", f2.id());
            assertEquals("note.v1", f2.event());
            JsonNode e2 = f2.json();
            assertEquals(m2.text("id"), e2.get("id").asText());
            assertEquals(2, e2.path("data").path("n").asInt());
            assertEquals("v", e2.path("meta").path("k").asText());

            // live
            Resp m3 = hub.sendOk(p[1], p[2], "live");
            Frame f3 = s.nextEvent(WAIT);
            assertEquals("3", f3.id());
            assertEquals(m3.text("id"), f3.json().get("id").asText());
            assertEquals("live", f3.json().get("text").asText());
        }
    }

    @Test
    void theReadyFrameTellsStandardClientsToReconnectAfterOneSecond() {
        String[] p = pair();
        for (String[] stream : new String[][] {{"/v1/inbox/stream", p[3]},
                {"/v1/nodes/" + p[2] + "/inbox/stream", hub.admin()}}) {
            try (SseClient s = SseClient.open(hub, stream[0], stream[1], null)) {
                assertEquals(200, s.awaitStatus(WAIT));
                Frame ready = s.next(WAIT);
                assertEquals(List.of("parley ready"), ready.comments(), ready::toString);
                assertEquals("1000", ready.retry(), "an EventSource waits this many ms before it reconnects");
                assertTrue(ready.isComment(), "the ready frame dispatches no event: " + ready);
            }
        }
    }

    @Test
    void replayWithLastEventIdAndWithAfterThenContinueLive() {
        String[] p = pair();
        for (int i = 1; i <= 5; i++) {
            hub.sendOk(p[1], p[2], "m" + i);
        }
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream", p[3], "2")) {
            s.expectReady(WAIT);
            assertEquals(List.of(3L, 4L, 5L), s.nextEvents(3, WAIT).stream().map(Frame::seq).toList());
            hub.sendOk(p[1], p[2], "m6");
            Frame live = s.nextEvent(WAIT);
            assertEquals(6, live.seq());
            assertEquals("m6", live.json().get("text").asText());
        }
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream?after=4", p[3], null)) {
            s.expectReady(WAIT);
            assertEquals(List.of(5L, 6L), s.nextEvents(2, WAIT).stream().map(Frame::seq).toList());
            hub.sendOk(p[1], p[2], "m7");
            assertEquals(7, s.nextEvent(WAIT).seq());
        }
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream", p[3], "0")) {
            s.expectReady(WAIT);
            assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L),
                    s.nextEvents(7, WAIT).stream().map(Frame::seq).toList());
            hub.sendOk(p[1], p[2], "m8");
            assertEquals(8, s.nextEvent(WAIT).seq(), "nothing may come between the replay and live frames");
        }
        // admin variant with a cursor
        try (SseClient s = SseClient.open(hub, "/v1/nodes/" + p[2] + "/inbox/stream", hub.admin(), "6")) {
            s.expectReady(WAIT);
            assertEquals(List.of(7L, 8L), s.nextEvents(2, WAIT).stream().map(Frame::seq).toList());
        }
    }

    /**
     * A backlog of several store pages (256 each; the stream reads the next page while it
     * writes one) replays in order, without a gap or a repeat, while more envelopes commit,
     * and the stream goes on live: with a cursor and without one.
     */
    @Test
    void aBacklogOfSeveralPagesReplaysInOrderWhileSendsCommitThenGoesLive() throws Exception {
        for (String cursor : new String[] {"0", null}) {
            String[] p = pair();
            int backlog = 700;
            int during = 300;
            sendBatches(p, 1, backlog, 100);
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try (SseClient s = SseClient.open(hub, "/v1/inbox/stream", p[3], cursor)) {
                s.expectReady(WAIT);
                Future<?> sender = pool.submit(() -> sendBatches(p, backlog + 1, during, 10));
                List<Frame> frames = s.nextEvents(backlog + during, Duration.ofSeconds(30));
                sender.get(30, TimeUnit.SECONDS);
                for (int i = 0; i < frames.size(); i++) {
                    Frame f = frames.get(i);
                    assertEquals(i + 1, f.seq(), "cursor " + cursor + ": frames must come in seq order, once each");
                    assertEquals("b-" + (i + 1), f.json().get("text").asText(), "cursor " + cursor);
                }
                Resp live = hub.sendOk(p[1], p[2], "after the backlog");
                Frame next = s.nextEvent(WAIT);
                assertEquals(backlog + during + 1, next.seq(), "cursor " + cursor + ": the next frame is the live one");
                assertEquals(live.text("id"), next.json().get("id").asText());
            } finally {
                pool.shutdownNow();
            }
        }
    }

    /**
     * Store pages end at {@link dev.parley.core.EventStore#PAGE_CHARS} characters as well as
     * at their limit: 13 envelopes of 200,000 characters come to a poll with limit 1000 as
     * pages of 6, 6 and 1 that {@code next} chains, and whole and in order to a stream that
     * replays them without a cursor and with one.
     */
    @Test
    void aBacklogOfLargeEnvelopesComesInPagesOfAboutAMebicharacterWholeAndInOrder() throws Exception {
        String[] p = pair();
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < 13; i++) {
            texts.add(Character.toString('a' + i).repeat(200_000));
            hub.sendOk(p[1], p[2], texts.getLast());
        }
        for (String cursor : new String[] {null, "0"}) {
            try (SseClient s = SseClient.open(hub, "/v1/inbox/stream", p[3], cursor)) {
                s.expectReady(WAIT);
                List<Frame> frames = s.nextEvents(texts.size(), Duration.ofSeconds(30));
                assertEquals(texts, frames.stream().map(f -> f.json().get("text").asText()).toList(), "cursor " + cursor);
                assertEquals(LongStream.rangeClosed(1, texts.size()).boxed().toList(),
                        frames.stream().map(Frame::seq).toList(), "cursor " + cursor);
            }
        }
        List<Integer> pages = new ArrayList<>();
        long after = 0;
        while (true) {
            JsonNode page = assertStatus(200, hub.get(p[3], "/v1/inbox?after=" + after + "&limit=1000")).json();
            if (page.get("items").isEmpty()) {
                assertEquals(after, page.get("next").asLong(), "an empty page leaves the cursor where it was");
                break;
            }
            pages.add(page.get("items").size());
            assertEquals(after + 1, page.get("items").get(0).get("seq").asLong());
            after = page.get("next").asLong();
        }
        assertEquals(List.of(6, 6, 1), pages, "5 envelopes are 1,000,000 characters, the 6th passes 1 Mi");
        assertEquals(texts.size(), after);
    }

    /** Sends "b-first" … "b-(first+count-1)" from the pair's parent to its child, {@code per} a batch request. */
    private static Void sendBatches(String[] p, int first, int count, int per) {
        for (int from = first; from < first + count; from += per) {
            List<Object> messages = new ArrayList<>();
            for (int n = from; n < Math.min(first + count, from + per); n++) {
                messages.add(obj("to", p[2], "text", "b-" + n));
            }
            Resp answer = assertStatus(200, hub.post(p[1], "/v1/messages:batch", obj("messages", messages)));
            answer.get("results").forEach(r -> assertEquals(202, r.path("httpStatus").asInt(), r::toString));
        }
        return null;
    }

    @Test
    void withoutACursorOnlyNeverDeliveredEnvelopesAreReplayed() {
        String[] p = pair();
        List<String> ids = new java.util.ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            ids.add(hub.sendOk(p[1], p[2], "m" + i).text("id"));
        }
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream", p[3], null)) {
            s.expectReady(WAIT);
            assertEquals(List.of(1L, 2L, 3L), s.nextEvents(3, WAIT).stream().map(Frame::seq).toList());
        }
        // Until the hub notices the closed socket (its next heartbeat write fails), it may still
        // write new envelopes into it and count them delivered; wait for it to let go first.
        awaitNoOpenStreams();
        awaitDelivered(p[1], ids);
        ids.add(hub.sendOk(p[1], p[2], "m4").text("id"));
        ids.add(hub.sendOk(p[1], p[2], "m5").text("id"));
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream", p[3], null)) {
            s.expectReady(WAIT);
            List<Frame> replay = s.nextEvents(2, WAIT);
            assertEquals(List.of(4L, 5L), replay.stream().map(Frame::seq).toList(),
                    "only the never-delivered envelopes may be replayed");
            assertEquals("m4", replay.get(0).json().get("text").asText());
            ids.add(hub.sendOk(p[1], p[2], "m6").text("id"));
            assertEquals(6, s.nextEvent(WAIT).seq());
        }
        awaitNoOpenStreams();
        awaitDelivered(p[1], ids);
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream", p[3], null)) {
            s.expectReady(WAIT);
            hub.sendOk(p[1], p[2], "m7");
            assertEquals(7, s.nextEvent(WAIT).seq(), "everything before 7 was delivered already");
        }
    }

    @Test
    void neverDeliveredMeansNeverWrittenEvenBelowADeliveredSeq() {
        String[] p = pair();
        List<String> ids = new java.util.ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            ids.add(hub.sendOk(p[1], p[2], "m" + i).text("id"));
        }
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream?after=3", p[3], null)) {
            s.expectReady(WAIT);
            assertEquals(List.of(4L, 5L), s.nextEvents(2, WAIT).stream().map(Frame::seq).toList());
        }
        awaitNoOpenStreams();
        // A stream records its delivery marks after the write, in a later commit of its own.
        awaitDelivered(p[1], ids.subList(3, 5));
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream", p[3], null)) {
            s.expectReady(WAIT);
            assertEquals(List.of(1L, 2L, 3L), s.nextEvents(3, WAIT).stream().map(Frame::seq).toList(),
                    "1..3 were never delivered and must be replayed; 4 and 5 were");
            hub.sendOk(p[1], p[2], "m6");
            assertEquals(6, s.nextEvent(WAIT).seq(), "4 and 5 must not be replayed again");
        }
    }

    @Test
    void multiLineAndUnicodeTextSurvivesTheFraming() {
        String[] p = pair();
        String text = "line one\nline two\r\n\ndata: not a field\nid: 999\n\n: not a comment\u2028 é 🌍 \"q\"";
        Resp sent = hub.sendOk(p[1], p[2], text);
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream", p[3], null)) {
            s.expectReady(WAIT);
            Frame f = s.nextEvent(WAIT);
            assertEquals("1", f.id());
            assertEquals(text, f.json().get("text").asText());
            assertEquals(sent.text("id"), f.json().get("id").asText());
            hub.sendOk(p[1], p[2], "next");
            Frame g = s.nextEvent(WAIT);
            assertEquals("2", g.id(), "the tricky text must not have produced extra frames");
        }
    }

    @Test
    void adminCanStreamADeletedNodesInbox() {
        String[] p = pair();
        Resp m1 = hub.sendOk(p[1], p[2], "kept");
        assertStatus(204, hub.delete(hub.admin(), "/v1/nodes/" + p[2]));
        try (SseClient s = SseClient.open(hub, "/v1/nodes/" + p[2] + "/inbox/stream?after=0", hub.admin(), null)) {
            s.expectReady(WAIT);
            Frame f = s.nextEvent(WAIT);
            assertEquals(1, f.seq());
            assertEquals(m1.text("id"), f.json().get("id").asText());
        }
    }

    @Test
    void heartbeatCommentsArriveOnAnIdleStream() {
        String[] p = pair();
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream", p[3], null)) {
            s.expectReady(WAIT);
            // Heartbeats keep coming on an idle stream, and they are comments (no event, no id,
            // so a client's cursor never moves). How fast they come is the scheduler's business:
            // the stream's 300 ms against the default 15 s shows in their arriving at all within
            // WAIT, three in a row.
            for (int beat = 0; beat < 3; beat++) {
                Frame hb = s.next(WAIT);
                assertTrue(hb.isComment(), "heartbeats are comments: " + hb);
                assertEquals(List.of("hb"), hb.comments());
            }
            // events still flow between heartbeats
            hub.sendOk(p[1], p[2], "between beats");
            assertEquals(1, s.nextEvent(WAIT).seq());
        }
    }

    /**
     * A reader that goes away is found by the stream's next write (here its heartbeats), and the
     * stream ends through its own way out: the hub's word for the failure, the stream closed and
     * counted out, nothing left for the route's error handling.
     */
    @Test
    void aReaderThatGoesAwayEndsItsStreamAtTheNextWrite() {
        String[] p = pair();
        try (LogCapture log = LogCapture.of("dev.parley.server.delivery.InboxStream")) {
            try (SseClient s = SseClient.open(hub, "/v1/inbox/stream", p[3], null)) {
                s.expectReady(WAIT);
            }
            await().atMost(WAIT).until(() -> log.messages(Level.FINE, "stream of " + p[2] + " ended: ").stream()
                    .anyMatch(line -> line.endsWith("the client's connection is gone")));
            awaitNoOpenStreams();
        }
        hub.assertStillServes();
    }

    @Test
    void badCursorsAndBadCallersAreRefused() {
        String[] p = pair();
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream", p[3], "abc")) {
            assertRefused(s, 400, "invalid_cursor");
        }
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream?after=abc", p[3], null)) {
            assertRefused(s, 400, "invalid_cursor");
        }
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream", null, null)) {
            assertRefused(s, 401, "unauthorized");
        }
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream", "pn_bogus", null)) {
            assertRefused(s, 401, "unauthorized");
        }
        try (SseClient s = SseClient.open(hub, "/v1/nodes/" + p[2] + "/inbox/stream", p[1], null)) {
            assertRefused(s, 403, "forbidden");
        }
        // the hub still serves, and the refused streams delivered nothing
        hub.sendOk(p[1], p[2], "after refusals");
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream", p[3], null)) {
            s.expectReady(WAIT);
            assertEquals(1, s.nextEvent(WAIT).seq());
        }
        hub.assertStillServes();
    }

    @Test
    void deletingTheNodeEndsItsStream() {
        String[] p = pair();
        try (SseClient s = SseClient.open(hub, "/v1/inbox/stream", p[3], null)) {
            s.expectReady(WAIT);
            hub.sendOk(p[1], p[2], "last words");
            assertEquals(1, s.nextEvent(WAIT).seq());
            assertStatus(204, hub.delete(hub.admin(), "/v1/nodes/" + p[2]));
            List<Frame> rest = s.drainUntilEnd(WAIT);
            assertTrue(rest.stream().allMatch(Frame::isComment), "no envelopes after deletion: " + rest);
        }
    }

    /**
     * A reader takes part of a live flow, its connection is cut while the sender keeps
     * going, and it resumes from the last seq it saw: it must get exactly the envelopes it
     * missed — including those the hub had already written into the dead socket.
     */
    @Test
    void reconnectMidFlowResumesWithExactlyTheMissedEnvelopes() throws Exception {
        String[] p = pair();
        int total = 120;
        int pauseAt = 50;
        int readBeforeCut = 25;
        Map<Long, String> idBySeq = new ConcurrentHashMap<>();
        CountDownLatch cut = new CountDownLatch(1);

        long lastSeen;
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            SseClient first = SseClient.open(hub, "/v1/inbox/stream", p[3], null);
            first.expectReady(WAIT);
            Future<?> sender = pool.submit(() -> {
                for (int i = 1; i <= total; i++) {
                    Resp r = hub.sendOk(p[1], p[2], "flow-" + i);
                    assertEquals(i, r.num("seq"));
                    idBySeq.put(r.num("seq"), r.text("id"));
                    if (i == pauseAt) {
                        // make sure part of the flow happens after the cut
                        assertTrue(cut.await(20, TimeUnit.SECONDS), "reader never cut its connection");
                    }
                }
                return null;
            });
            long prev = 0;
            for (int n = 0; n < readBeforeCut; n++) {
                Frame f = first.nextEvent(WAIT);
                assertEquals(prev + 1, f.seq(), "live stream must be gap-free");
                assertEquals("flow-" + f.seq(), f.json().get("text").asText());
                prev = f.seq();
            }
            lastSeen = prev;
            first.close(); // cut mid-flow
            cut.countDown();
            sender.get(60, TimeUnit.SECONDS);
        }
        assertEquals(total, idBySeq.size());

        try (SseClient resumed = SseClient.open(hub, "/v1/inbox/stream", p[3], Long.toString(lastSeen))) {
            resumed.expectReady(WAIT);
            List<Frame> missed = resumed.nextEvents((int) (total - lastSeen), Duration.ofSeconds(15));
            long expected = lastSeen + 1;
            for (Frame f : missed) {
                assertEquals(expected, f.seq(), "resumed stream must be strictly increasing and gap-free");
                JsonNode env = f.json();
                assertEquals(idBySeq.get(expected), env.get("id").asText(), "wrong envelope for seq " + expected);
                assertEquals("flow-" + expected, env.get("text").asText());
                expected++;
            }
            assertEquals(total + 1, expected);
            // nothing extra is pending: the next frame is the next live envelope
            Resp marker = hub.sendOk(p[1], p[2], "marker");
            Frame next = resumed.nextEvent(WAIT);
            assertEquals(total + 1, next.seq(), "unexpected frame after the replay: " + next);
            assertEquals(marker.text("id"), next.json().get("id").asText());
        }
    }

    /**
     * A stream that waits holds a virtual thread of its own, not the edge's request thread with
     * Jetty's and the route's frames beneath it: those were a third of a parked stream's stack,
     * 18 MB of heap with 10,000 idle streams (BENCHMARKS.md, stop 57). In a dump of the hub's
     * threads, none serving an inbox stream or the message flow has a Jetty frame.
     */
    @Test
    void aWaitingStreamIsServedOnAThreadOfItsOwn() throws Exception {
        String[] p = pair();
        try (SseClient inbox = SseClient.open(hub, "/v1/inbox/stream", p[3], null);
             SseClient flow = SseClient.open(hub, "/v1/messages/stream", p[1], null)) {
            inbox.expectReady(WAIT);
            flow.expectReady(WAIT);
            ThreadDumps.assertServedOffTheEdge(dataDir, "delivery.InboxStream.serve");
            ThreadDumps.assertServedOffTheEdge(dataDir, "delivery.MessageFlow.serve");
        }
    }
}
