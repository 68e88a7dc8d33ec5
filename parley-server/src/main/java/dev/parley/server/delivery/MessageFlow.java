package dev.parley.server.delivery;

import dev.parley.core.Envelope;
import dev.parley.core.Messages;
import dev.parley.core.Notifier;
import dev.parley.core.Principal;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.StreamBody;
import dev.parley.server.metrics.Metrics;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The live flow of committed envelopes ({@code GET /v1/messages/stream}, the console's feed):
 * each follower gets, as Server-Sent Events, every envelope committed while it follows that
 * its caller may see ({@link Messages#visibleTo}: all of them for the admin). Live only: no
 * replay, no cursor. The store's announcer hands each envelope over without waiting: a follower
 * holds at most {@link #QUEUE} envelopes, and about {@link #QUEUE_CHARS} characters of their
 * text and data, not yet written; what does not fit is dropped, counted
 * ({@code parley_flow_dropped_total}) and announced to it as {@code : dropped N}. Each write
 * takes at most {@link #BATCH} envelopes, so one write's buffer stays small too.
 */
public final class MessageFlow implements Notifier {
    private static final Logger LOG = Logger.getLogger(MessageFlow.class.getName());
    static final int QUEUE = 1024;
    /** Text and data, in characters, a follower may hold unwritten: 1,024 envelopes of 256 KiB would be 256 MiB. */
    static final long QUEUE_CHARS = 8L << 20;
    /** Most envelopes one write takes. */
    static final int BATCH = 256;
    private static final byte[] READY = ": parley ready\nretry: 1000\n\n".getBytes(StandardCharsets.UTF_8);
    private static final byte[] HEARTBEAT = ": hb\n\n".getBytes(StandardCharsets.UTF_8);

    private final Set<Follower> followers = ConcurrentHashMap.newKeySet();
    private final StreamWatchdog watchdog;
    private final Metrics metrics;
    private volatile boolean closed;
    private final StreamCount serving = new StreamCount();

    /** Heartbeats come at the watchdog's interval, as on inbox streams: it wakes a follower silent that long. */
    public MessageFlow(StreamWatchdog watchdog, Metrics metrics) {
        this.watchdog = watchdog;
        this.metrics = metrics;
    }

    @Override
    public void committed(Envelope envelope) {
        for (Follower follower : followers) {
            follower.offer(envelope);
        }
    }

    /**
     * Streams to {@code viewer} until it leaves, the hub stops, or {@code stillValid} turns false
     * (its token was rotated or its node deleted: the token is checked again before each write).
     */
    public void serve(Principal viewer, BooleanSupplier stillValid, Exchange ex) {
        Follower follower = new Follower(viewer);
        followers.add(follower);
        StreamWatchdog.Watch watch = watchdog.watch(Thread.currentThread());
        serving.opened();
        try (StreamBody out = ex.eventStream()) {
            watch.answering(out);
            watch.write(out, READY);
            while (!closed) {
                Taken taken = follower.take(watch);
                if (closed || !stillValid.getAsBoolean()) {
                    break;
                }
                watch.write(out, frames(taken));
            }
        } catch (IOException | UncheckedIOException | InterruptedException e) {
            LOG.log(watch.tripped() ? Level.WARNING : Level.FINE, "a message flow stream of " + viewer.name()
                    + " ended" + (watch.tripped() ? " for a reader that stopped reading" : ": " + e));
        } finally {
            Thread.interrupted(); // a watchdog interrupt must not leak into the server's connection handling
            followers.remove(follower);
            watchdog.unwatch(watch);
            serving.closed();
        }
    }

    /** Ends every stream (shutdown). */
    public void closeAll() {
        closed = true;
        followers.forEach(Follower::wake);
    }

    /** After {@link #closeAll}: waits, at most {@code timeout}, until every stream has written its end. */
    public boolean awaitEnded(Duration timeout) throws InterruptedException {
        return serving.awaitNone(timeout);
    }

    /** One {@code event: <kind>} frame per envelope, after a {@code : dropped N} comment if any were dropped; else a heartbeat. */
    private byte[] frames(Taken taken) {
        if (taken.envelopes().isEmpty() && taken.dropped() == 0) {
            return HEARTBEAT;
        }
        ByteArrayOutputStream frames = EnvelopeFrames.buffer(taken.envelopes(), 32);
        if (taken.dropped() > 0) {
            frames.writeBytes((": dropped " + taken.dropped() + "\n\n").getBytes(StandardCharsets.UTF_8));
        }
        EnvelopeFrames.write(frames, taken.envelopes(), false);
        return frames.toByteArray();
    }

    private record Taken(List<Envelope> envelopes, long dropped) {
    }

    /** One open stream: its caller and the envelopes committed for it and not yet written. */
    private final class Follower {
        private final Principal viewer;
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition arrived = lock.newCondition();
        private final ArrayDeque<Envelope> queue = new ArrayDeque<>();
        private long queuedChars;
        private long dropped;
        /** What the stream's watch runs when its heartbeat is due while it waits. */
        private final Runnable wakeForHeartbeat = this::wake;

        Follower(Principal viewer) {
            this.viewer = viewer;
        }

        /** Called by the store's announcer after a commit: never waits for the reader. */
        void offer(Envelope envelope) {
            if (!Messages.visibleTo(viewer, envelope)) {
                return;
            }
            long chars = envelope.contentChars();
            lock.lock();
            try {
                if (queue.size() < QUEUE && queuedChars + chars <= QUEUE_CHARS) {
                    queue.add(envelope);
                    queuedChars += chars;
                } else {
                    dropped++;
                    metrics.flowDropped.increment();
                }
                arrived.signal();
            } finally {
                lock.unlock();
            }
        }

        void wake() {
            lock.lock();
            try {
                arrived.signal();
            } finally {
                lock.unlock();
            }
        }

        /**
         * What arrived, waiting for something without a timeout (empty: the watchdog found the
         * stream's heartbeat due, or the flow closed).
         */
        Taken take(StreamWatchdog.Watch watch) throws InterruptedException {
            lock.lock();
            try {
                watch.waiting(wakeForHeartbeat);
                while (queue.isEmpty() && dropped == 0 && !closed && !watch.heartbeatDue()) {
                    arrived.await();
                }
                List<Envelope> envelopes = new ArrayList<>(Math.min(queue.size(), BATCH));
                while (!queue.isEmpty() && envelopes.size() < BATCH) {
                    Envelope next = queue.poll();
                    queuedChars -= next.contentChars();
                    envelopes.add(next);
                }
                Taken taken = new Taken(envelopes, dropped);
                dropped = 0;
                return taken;
            } finally {
                watch.waiting(null);
                lock.unlock();
            }
        }
    }
}
