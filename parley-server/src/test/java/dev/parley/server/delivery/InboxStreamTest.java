package dev.parley.server.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.parley.core.EventStore;
import dev.parley.core.Inboxes;
import dev.parley.core.NodeId;
import dev.parley.core.Principal;
import dev.parley.server.metrics.Metrics;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
