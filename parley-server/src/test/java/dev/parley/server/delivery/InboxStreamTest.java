package dev.parley.server.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.parley.core.DeliveryPolicies;
import dev.parley.core.DeliveryStore;
import dev.parley.core.Envelope;
import dev.parley.core.EventStore;
import dev.parley.core.Inboxes;
import dev.parley.core.NodeId;
import dev.parley.core.Principal;
import dev.parley.core.Route;
import dev.parley.core.Trace;
import dev.parley.server.metrics.Metrics;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** What an idle stream does between envelopes. */
class InboxStreamTest {
    private static final NodeId WORKER = NodeId.of("worker");

    /** A store whose inbox is empty, counting how often a stream asks it for envelopes. */
    private static EventStore emptyStore(AtomicInteger reads) {
        return (EventStore) Proxy.newProxyInstance(EventStore.class.getClassLoader(), new Class<?>[]{EventStore.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "inboxAfter" -> {
                        reads.incrementAndGet();
                        yield List.of();
                    }
                    case "headSeq" -> 0L;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    /** A response body that releases one permit per heartbeat written to it. */
    private static RecordingBody body(Semaphore heartbeats) {
        return new RecordingBody(write -> {
            if (write.equals(": hb\n\n")) {
                heartbeats.release();
            }
        });
    }

    /**
     * The interleaving behind a failure of {@code RedeliveryAndReplyTest} on a busy machine: one
     * stream of the node wrote an envelope and marked it delivered, the redelivery came due, and
     * only then did a second stream, late since its ready comment, look at its feed: it found
     * the redelivery and the envelope both, and wrote the redelivery first. Its client saw attempt
     * 2 of an envelope before attempt 1.
     */
    @Test
    void aLateStreamWritesAnEnvelopeBeforeItsRedelivery() throws Exception {
        EventStore store = (EventStore) Proxy.newProxyInstance(EventStore.class.getClassLoader(),
                new Class<?>[]{EventStore.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "headSeq" -> 0L;
                    case "markDelivered" -> null;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        DeliveryStore deliveries = (DeliveryStore) Proxy.newProxyInstance(DeliveryStore.class.getClassLoader(),
                new Class<?>[]{DeliveryStore.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "policies" -> Map.of();
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        Inboxes inboxes = new Inboxes(store, new DeliveryPolicies(deliveries, null, null, Clock.systemUTC()), null,
                Clock.systemUTC());
        Inboxes.Inbox inbox = inboxes.own(new Principal.Caller(WORKER));
        InboxFeeds feeds = new InboxFeeds();
        CountDownLatch atReady = new CountDownLatch(1);
        CountDownLatch goOn = new CountDownLatch(1);
        Semaphore frames = new Semaphore(0);
        RecordingBody body = new RecordingBody(write -> {
            if (write.startsWith(": parley ready")) { // the stream's thread is held here: late
                atReady.countDown();
                try {
                    goOn.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            } else if (write.contains("event: ")) {
                frames.release((int) write.lines().filter(line -> line.startsWith("event: ")).count());
            }
        });
        try (StreamWatchdog watchdog = new StreamWatchdog(Duration.ofMinutes(1), Duration.ofMinutes(1))) {
            InboxStream stream = new InboxStream(inboxes, feeds, watchdog, new Metrics());
            Thread serving = Thread.ofVirtual().start(() -> stream.serve(inbox, OptionalLong.of(0), null, () -> body));
            assertTrue(atReady.await(1, TimeUnit.MINUTES), "the stream wrote its ready comment");
            Envelope first = envelope(1, 1);
            feeds.committed(first);
            feeds.redeliver(first.withAttempt(2));
            goOn.countDown();

            assertTrue(frames.tryAcquire(2, 1, TimeUnit.MINUTES), "both frames written: " + body.text());
            feeds.close(WORKER);
            serving.join();
        }
        List<String> attempts = body.text().lines().filter(line -> line.startsWith("data: "))
                .map(line -> line.replaceAll(".*\"attempt\":(\\d+).*", "$1")).toList();
        assertEquals(List.of("1", "2"), attempts, "the envelope, then its redelivery: " + body.text());
    }

    @Test
    void redeliveriesOfEnvelopesAheadOfAStreamWaitForItsPositionAndAFewAreHeldAtMost() {
        List<Envelope> held = new ArrayList<>();
        List<Envelope> taken = LongStream.rangeClosed(1, InboxFeeds.RING + 88).mapToObj(seq -> envelope(seq, 2))
                .toList();
        assertEquals(List.of(1L, 2L, 3L), seqs(InboxStream.written(taken, held, 3)), "those written go at once");
        assertEquals(InboxFeeds.RING, held.size(), "the others wait, as many as a feed keeps");
        assertEquals(89L, held.getFirst().seq(), "the oldest are let go: the stream writes those envelopes later");
        assertEquals(List.of(), InboxStream.written(List.of(), held, 88), "nothing held is due before its envelope");
        assertEquals(List.of(89L, 90L), seqs(InboxStream.written(List.of(), held, 90)), "then it goes");
        assertEquals(List.of(), InboxStream.written(List.of(), new ArrayList<>(), 90));
    }

    private static Envelope envelope(long seq, int attempt) {
        return new Envelope("e" + seq, seq, NodeId.of("lead"), WORKER, "message", Optional.of("hi"), Optional.empty(),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Map.of(),
                Instant.parse("2026-12-07T07:00:00Z"), new Trace(attempt, Route.INTRA_GROUP, "p"));
    }

    private static List<Long> seqs(List<Envelope> envelopes) {
        return envelopes.stream().map(Envelope::seq).toList();
    }

    @Test
    void aCaughtUpStreamAsksTheStoreOnceAndThenOnlyWritesHeartbeats() throws Exception {
        AtomicInteger reads = new AtomicInteger();
        Inboxes inboxes = new Inboxes(emptyStore(reads), null, null, Clock.systemUTC());
        Inboxes.Inbox inbox = inboxes.own(new Principal.Caller(WORKER));
        InboxFeeds feeds = new InboxFeeds();
        Semaphore heartbeats = new Semaphore(0);
        try (StreamWatchdog watchdog = new StreamWatchdog(Duration.ofMinutes(1), Duration.ofMillis(1))) {
            InboxStream stream = new InboxStream(inboxes, feeds, watchdog, new Metrics());
            Thread serving = Thread.ofVirtual().start(
                    () -> stream.serve(inbox, OptionalLong.of(0), null, () -> body(heartbeats)));

            assertTrue(heartbeats.tryAcquire(5, 1, TimeUnit.MINUTES), "five heartbeats on the idle stream");
            feeds.close(WORKER);
            serving.join();
        }
        assertEquals(1, reads.get(), "the store is read once, to catch up; the heartbeats after it do not read it");
    }
}
