package dev.parley.server.delivery;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.parley.core.Envelope;
import dev.parley.core.InboxReader;
import dev.parley.core.JsonText;
import dev.parley.core.NodeId;
import dev.parley.core.Route;
import dev.parley.core.Trace;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * The feed's ring starts small and grows as envelopes come; what it answers must not change with
 * its size. A stream's wait on the feed ends with news, or when the watchdog finds its heartbeat due.
 */
class InboxFeedsTest {
    private static final NodeId WORKER = NodeId.of("worker");

    private static Envelope envelope(long seq) {
        return envelope(seq, "m" + seq, Optional.empty());
    }

    private static Envelope envelope(long seq, String text, Optional<JsonText> data) {
        return new Envelope("e" + seq, seq, NodeId.of("lead"), WORKER, "message", Optional.of(text),
                data, Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Map.of(),
                Instant.parse("2026-11-28T08:00:00Z"), new Trace(1, Route.INTRA_GROUP, "p"));
    }

    private static List<Long> seqs(List<Envelope> envelopes) {
        return envelopes == null ? null : envelopes.stream().map(Envelope::seq).toList();
    }

    private static List<Long> range(long from, long to) {
        return LongStream.rangeClosed(from, to).boxed().toList();
    }

    @Test
    void whileTheRingGrowsEveryEnvelopeStaysInItsPlaceAndAFullRingKeepsTheLast512() {
        InboxFeeds feeds = new InboxFeeds();
        InboxFeeds.Feed feed = feeds.acquire(WORKER, InboxReader.OWNER);
        assertNull(feed.after(0, 10), "an empty ring proves nothing: the reader asks the store");

        for (long seq = 1; seq <= 700; seq++) {
            feeds.committed(envelope(seq));
            // across each doubling (8, 16, ... 512) and then the wrap, the ring holds every seq since the first
            long first = Math.max(1, seq - 511);
            assertEquals(range(first, seq), seqs(feed.after(first - 1, 1000)), "after " + seq + " commits");
        }
        assertNull(feed.after(187, 10), "seq 188 left the ring: the reader asks the store");
        assertEquals(range(189, 198), seqs(feed.after(188, 10)));
    }

    @Test
    void aGapEmptiesTheRingAndItFillsAgainFromTheNextSeq() {
        InboxFeeds feeds = new InboxFeeds();
        InboxFeeds.Feed feed = feeds.acquire(WORKER, InboxReader.OWNER);
        for (long seq = 1; seq <= 20; seq++) {
            feeds.committed(envelope(seq));
        }
        feeds.committed(envelope(30));
        assertNull(feed.after(20, 10), "21..29 were never in the ring");
        assertEquals(List.of(30L), seqs(feed.after(29, 10)));
        for (long seq = 31; seq <= 60; seq++) {
            feeds.committed(envelope(seq));
        }
        assertEquals(range(30, 60), seqs(feed.after(29, 100)));
    }

    @Test
    void largeEnvelopesKeepTheRingWithinItsCharactersButTheNewestIsAlwaysThere() {
        InboxFeeds feeds = new InboxFeeds();
        InboxFeeds.Feed feed = feeds.acquire(WORKER, InboxReader.OWNER);
        int quarter = (int) (InboxFeeds.RING_CHARS / 4);
        for (long seq = 1; seq <= 10; seq++) {
            JsonText data = new JsonText("\"" + "d".repeat(quarter / 2 - 2) + "\"");
            feeds.committed(envelope(seq, "t".repeat(quarter / 2), Optional.of(data)));
        }
        assertEquals(range(7, 10), seqs(feed.after(6, 100)), "four quarters of the budget: the last four stay");
        assertNull(seqs(feed.after(5, 100)), "seq 6 left the ring for the budget: the reader asks the store");

        feeds.committed(envelope(11, "x".repeat((int) InboxFeeds.RING_CHARS * 2), Optional.empty()));
        assertEquals(List.of(11L), seqs(feed.after(10, 100)), "one envelope over the budget is kept alone");
        assertNull(seqs(feed.after(9, 100)), "seq 10 left the ring for the large one");

        for (long seq = 12; seq <= 600; seq++) {
            feeds.committed(envelope(seq));
        }
        assertEquals(range(89, 600), seqs(feed.after(88, 1000)), "small envelopes fill the ring up to 512 again");
    }

    @Test
    void theSizesOfEnvelopesHeldAcrossTheRingsGrowthStillCountAgainstItsCharacters() {
        InboxFeeds feeds = new InboxFeeds();
        InboxFeeds.Feed feed = feeds.acquire(WORKER, InboxReader.OWNER);
        for (long seq = 1; seq <= 100; seq++) { // 100 chars each, while the ring doubles from 8 to 128
            feeds.committed(envelope(seq, "s".repeat(100), Optional.empty()));
        }
        assertEquals(range(1, 100), seqs(feed.after(0, 1000)));

        feeds.committed(envelope(101, "l".repeat((int) InboxFeeds.RING_CHARS - 50 * 100), Optional.empty()));
        assertEquals(range(51, 101), seqs(feed.after(50, 1000)), "exactly the 50 oldest make room for the large one");
        assertNull(feed.after(49, 1000), "seq 50 left the ring for its characters");
    }

    @Test
    void redeliveriesAreHeldOnlyUntilEveryStreamOfTheOwnerHasTakenThem() {
        InboxFeeds feeds = new InboxFeeds();
        InboxFeeds.Feed feed = feeds.acquire(WORKER, InboxReader.OWNER);
        feeds.acquire(WORKER, InboxReader.OWNER);
        feeds.acquire(WORKER, InboxReader.OBSERVER);
        InboxFeeds.Taken first = feed.startTaking(InboxReader.OWNER);
        InboxFeeds.Taken second = feed.startTaking(InboxReader.OWNER);
        InboxFeeds.Taken observer = feed.startTaking(InboxReader.OBSERVER);

        for (long seq = 1; seq <= 3; seq++) {
            feeds.redeliver(envelope(seq));
        }
        assertEquals(List.of(), seqs(feed.take(observer)), "only the owner's streams take redeliveries");
        assertEquals(range(1, 3), seqs(feed.take(first)));
        assertEquals(3, feed.redeliveriesHeld(), "the second stream has not taken them yet");
        feeds.redeliver(envelope(4));
        assertEquals(range(1, 4), seqs(feed.take(second)));
        assertEquals(1, feed.redeliveriesHeld(), "only 4 waits, for the first stream");
        assertEquals(List.of(4L), seqs(feed.take(first)));
        assertEquals(0, feed.redeliveriesHeld());

        feeds.redeliver(envelope(5));
        feed.stopTaking(second);
        assertEquals(1, feed.redeliveriesHeld(), "5 still waits for the first stream");
        InboxFeeds.Taken third = feed.startTaking(InboxReader.OWNER);
        assertEquals(List.of(), seqs(feed.take(third)), "a new stream starts after what was handed out before it");
        feed.stopTaking(first);
        assertEquals(0, feed.redeliveriesHeld(), "no stream left that has not taken 5");
    }

    @Test
    void aWaitWithoutNewsEndsWhenTheWatchdogFindsItsHeartbeatDueAndNewsEndsItAnyway() throws Exception {
        InboxFeeds feeds = new InboxFeeds();
        InboxFeeds.Feed feed = feeds.acquire(WORKER, InboxReader.OWNER);
        InboxFeeds.Taken taken = feed.startTaking(InboxReader.OWNER);
        Duration heartbeat = Duration.ofMillis(200);
        try (StreamWatchdog beating = new StreamWatchdog(Duration.ofMinutes(1), heartbeat);
             StreamWatchdog slow = new StreamWatchdog(Duration.ofMinutes(1), Duration.ofMinutes(10))) {
            long start = System.nanoTime();
            StreamWatchdog.Watch first = beating.watch(Thread.currentThread());
            assertFalse(assertTimeoutPreemptively(Duration.ofMinutes(1),
                    () -> feed.awaitAfter(0, taken, first, new LiveFrames(new RecordingBody(), first, null))),
                    "no news: the watchdog ends the wait for the heartbeat");
            assertTrue(System.nanoTime() - start >= heartbeat.toNanos() / 2, "not before half the heartbeat's interval");

            // The wait has no timeout of its own: a commit the feed writes itself does not end it,
            // one it cannot write (after a gap in the seqs) does.
            RecordingBody body = new RecordingBody();
            CompletableFuture<Boolean> waited = new CompletableFuture<>();
            Thread waiting = Thread.ofVirtual().start(() -> {
                try {
                    StreamWatchdog.Watch watch = slow.watch(Thread.currentThread());
                    waited.complete(feed.awaitAfter(0, taken, watch, new LiveFrames(body, watch, null)));
                } catch (InterruptedException e) {
                    waited.completeExceptionally(e);
                }
            });
            await().atMost(Duration.ofMinutes(1)).until(() -> waiting.getState() == Thread.State.WAITING);
            feeds.committed(envelope(1));
            assertTrue(body.text().startsWith("id: 1\n"), body::text);
            assertFalse(waited.isDone(), "a commit the feed wrote itself is not the waiting thread's");
            feeds.committed(envelope(3));
            assertTrue(waited.get(1, TimeUnit.MINUTES), "the commit is news");
        }
    }

    @Test
    void aStreamWithNewsBeforeItWaitsGoesOnFromItsOwnCursor() throws Exception {
        InboxFeeds feeds = new InboxFeeds();
        InboxFeeds.Feed feed = feeds.acquire(WORKER, InboxReader.OWNER);
        InboxFeeds.Taken taken = feed.startTaking(InboxReader.OWNER);
        try (StreamWatchdog watchdog = new StreamWatchdog(Duration.ofMinutes(1), Duration.ofMinutes(1))) {
            StreamWatchdog.Watch watch = watchdog.watch(Thread.currentThread());
            RecordingBody body = new RecordingBody();
            LiveFrames live = new LiveFrames(body, watch, null);
            LongStream.rangeClosed(1, 3).forEach(seq -> feeds.committed(envelope(seq)));
            assertTrue(feed.awaitAfter(2, taken, watch, live), "seq 3 came before the wait: news at once");
            assertEquals(2, live.settle(), "the feed wrote nothing: the stream goes on from its cursor");
            assertEquals("", body.text());
        }
    }
}
