package dev.parley.server.delivery;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.parley.core.Envelope;
import dev.parley.core.InboxReader;
import dev.parley.core.NodeId;
import dev.parley.core.Route;
import dev.parley.core.Trace;
import dev.parley.server.http.StreamBody;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A caught-up stream written by its feed while its thread waits: frames committed during a
 * write go out together after it, in order, each marked once; what the feed cannot write (a
 * gap, a failed write) wakes the thread; settling waits for the write under way.
 */
class LiveFramesTest {
    private static final NodeId WORKER = NodeId.of("worker");
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final InboxFeeds feeds = new InboxFeeds();
    private final HeldBody body = new HeldBody();
    private final List<List<Long>> marked = new CopyOnWriteArrayList<>();
    private StreamWatchdog watchdog;
    private LiveFrames live;
    private Thread waiting;
    private final CompletableFuture<Boolean> waited = new CompletableFuture<>();

    @BeforeEach
    void waitCaughtUp() {
        watchdog = new StreamWatchdog(Duration.ofMinutes(10), Duration.ofMinutes(10));
        InboxFeeds.Feed feed = feeds.acquire(WORKER, InboxReader.OWNER);
        InboxFeeds.Taken taken = feed.startTaking(InboxReader.OWNER);
        waiting = Thread.ofVirtual().start(() -> {
            StreamWatchdog.Watch watch = watchdog.watch(Thread.currentThread());
            live = new LiveFrames(body, watch, written -> marked.add(written.stream().map(Envelope::seq).toList()));
            try {
                waited.complete(feed.awaitAfter(0, taken, watch, live));
            } catch (Throwable e) {
                waited.completeExceptionally(e);
            }
        });
        await().atMost(WAIT).until(() -> waiting.getState() == Thread.State.WAITING);
    }

    @AfterEach
    void stop() {
        watchdog.close();
    }

    @Test
    void framesCommittedDuringAWriteGoOutTogetherAfterItInOrderEachMarkedOnce() throws Exception {
        feeds.committed(envelope(1));
        feeds.committed(envelope(2));
        feeds.committed(envelope(3));
        assertEquals(List.of("1"), body.writes().stream().map(LiveFramesTest::ids).toList(), "one write under way");

        body.complete(0);
        assertEquals("2,3", ids(body.writes().get(1)), "what came meanwhile, gathered into the next write");
        feeds.committed(envelope(4)); // behind the second write
        body.complete(1);
        assertEquals("4", ids(body.writes().get(2)));
        body.complete(2);

        assertEquals(List.of(List.of(1L), List.of(2L, 3L), List.of(4L)), marked);
        assertFalse(waited.isDone(), "the feed wrote it all: the stream's thread never woke");
        feeds.close(WORKER);
        assertFalse(waited.get(WAIT.toSeconds(), TimeUnit.SECONDS), "closed: no news to read");
        assertEquals(4, live.settle(), "the thread goes on after the last frame the feed wrote");
    }

    @Test
    void aGapInTheSeqsIsTheThreadsToReadAndNothingIsWritten() throws Exception {
        feeds.committed(envelope(2));
        assertTrue(waited.get(WAIT.toSeconds(), TimeUnit.SECONDS), "news the feed cannot prove follows the cursor");
        assertEquals(0, live.settle());
        assertEquals(List.of(), body.writes());
        assertEquals(List.of(), marked);
    }

    @Test
    void settlingWaitsForTheWriteUnderWayAndAFailedWriteEndsTheStream() throws Exception {
        feeds.committed(envelope(1));
        feeds.committed(envelope(2));
        body.fail(0, new IOException("connection reset"));
        assertTrue(waited.get(WAIT.toSeconds(), TimeUnit.SECONDS), "a failed write wakes the stream's thread");
        IOException failed = org.junit.jupiter.api.Assertions.assertThrows(IOException.class, live::settle);
        assertInstanceOf(IOException.class, failed.getCause());
        assertEquals(List.of(), marked, "nothing the client did not take is marked delivered");
        feeds.committed(envelope(3));
        assertEquals(1, body.writes().size(), "no write after a failed one");
    }

    @Test
    void aThreadThatStopsWaitingSettlesOnlyOnceTheWriteIsOut() throws Exception {
        feeds.committed(envelope(1));
        feeds.close(WORKER); // the thread wakes while the write is under way
        assertFalse(waited.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        CompletableFuture<Long> settled = new CompletableFuture<>();
        Thread settling = Thread.ofVirtual().start(() -> {
            try {
                settled.complete(live.settle());
            } catch (Exception e) {
                settled.completeExceptionally(e);
            }
        });
        await().atMost(WAIT).until(() -> settling.getState() == Thread.State.WAITING);
        assertFalse(settled.isDone(), "settled with a write still under way");
        body.complete(0);
        assertEquals(1, settled.get(WAIT.toSeconds(), TimeUnit.SECONDS));
    }

    private static String ids(String frames) {
        return frames.lines().filter(l -> l.startsWith("id: ")).map(l -> l.substring(4))
                .reduce((a, b) -> a + "," + b).orElse("");
    }

    private static Envelope envelope(long seq) {
        return new Envelope("e" + seq, seq, NodeId.of("lead"), WORKER, "message", Optional.of("m" + seq),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Map.of(),
                Instant.parse("2026-11-28T08:00:00Z"), new Trace(1, Route.INTRA_GROUP, "p"));
    }

    /** A body whose later writes stay under way until the test completes or fails them. */
    private static final class HeldBody extends StreamBody {
        private final List<String> writes = new CopyOnWriteArrayList<>();
        private final List<Written> done = new CopyOnWriteArrayList<>();

        @Override
        public void write(byte[] b, int off, int len) {
            throw new UnsupportedOperationException("only the feed writes here");
        }

        @Override
        public void write(int b) {
            throw new UnsupportedOperationException("only the feed writes here");
        }

        @Override
        public void writeLater(ByteBuffer bytes, Written written) {
            writes.add(StandardCharsets.UTF_8.decode(bytes).toString());
            done.add(written);
        }

        @Override
        public void abort() {
        }

        List<String> writes() {
            return writes;
        }

        void complete(int write) {
            done.get(write).written();
        }

        void fail(int write, Throwable cause) {
            done.get(write).failed(cause);
        }
    }
}
