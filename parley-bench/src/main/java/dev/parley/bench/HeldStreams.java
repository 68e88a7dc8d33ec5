package dev.parley.bench;

import dev.parley.bench.http.HttpConnection;
import dev.parley.bench.http.SseFleet;
import dev.parley.bench.http.SseStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The idle streams of {@code bench streams}: each opened on a virtual thread of its own, then
 * read by the selector threads of an {@link SseFleet}. It records per stream when the connect
 * started, when {@code : parley ready} arrived, and the arrival time and event name of the
 * first events; and counts streams pending (connecting or not yet ready), ready and failed.
 */
final class HeldStreams implements AutoCloseable {
    /** Arrival times are kept for this many events per stream. */
    static final int TRACKED_EVENTS = 8;

    private final String host;
    private final int port;
    private final SseFleet fleet;
    private final List<Held> streams = new ArrayList<>();
    private final AtomicInteger pending = new AtomicInteger();
    private final AtomicInteger ready = new AtomicInteger();
    private final AtomicInteger withEvent = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();

    HeldStreams(String host, int port, int selectorThreads) throws IOException {
        this.host = host;
        this.port = port;
        this.fleet = new SseFleet(selectorThreads);
    }

    /** Starts opening a stream of {@code target} with {@code bearer}; returns its index. */
    int open(String target, String bearer) {
        Held s;
        synchronized (streams) {
            s = new Held(streams.size());
            streams.add(s);
        }
        pending.incrementAndGet();
        s.connectStart = System.nanoTime();
        Thread.ofVirtual().name("bench-stream-open-" + s.index).start(() -> {
            HttpConnection conn = HttpConnection.selectable(host, port, 10_000);
            try {
                s.stream = conn.openStream(target, bearer, "", s, false);
                fleet.add(s.stream);
            } catch (IOException | RuntimeException e) {
                conn.close();
                s.onEnd(e.toString());
            }
        });
        return s.index;
    }

    /** Streams connecting or waiting for their ready comment. */
    int pending() {
        return pending.get();
    }

    int readyCount() {
        return ready.get();
    }

    /** Streams that have seen at least one event. */
    int withEventCount() {
        return withEvent.get();
    }

    /** Streams that have seen at least {@code n} events. */
    int withEventsCount(int n) {
        int c = 0;
        for (int i = 0; i < size(); i++) {
            if (stream(i).events >= n) {
                c++;
            }
        }
        return c;
    }

    int failedCount() {
        return failed.get();
    }

    int size() {
        synchronized (streams) {
            return streams.size();
        }
    }

    Held stream(int index) {
        synchronized (streams) {
            return streams.get(index);
        }
    }

    /** One stream's record. Times are System.nanoTime(); 0 means not yet. */
    final class Held implements SseStream.Listener {
        final int index;
        volatile SseStream stream;
        volatile long connectStart;
        volatile long readyAt;
        volatile long firstEventAt;
        volatile String firstEvent;
        volatile long events;
        /** Arrival times of the first {@link #TRACKED_EVENTS} events (0: not yet). */
        final long[] eventAt = new long[TRACKED_EVENTS];
        volatile boolean ended;
        volatile String error;

        private Held(int index) {
            this.index = index;
        }

        @Override
        public void onComment(String text) {
            if (readyAt == 0 && text.startsWith(" parley ready")) {
                readyAt = System.nanoTime();
                pending.decrementAndGet();
                ready.incrementAndGet();
            }
        }

        @Override
        public void onEvent(long id, String event, byte[] data, int dataLength) {
            long now = System.nanoTime();
            if (firstEventAt == 0) {
                firstEvent = event;
                firstEventAt = now;
                withEvent.incrementAndGet();
            }
            if (events < TRACKED_EVENTS) {
                eventAt[(int) events] = now;
            }
            events++;
        }

        @Override
        public void onEnd(String why) {
            if (ended) {
                return;
            }
            ended = true;
            error = why != null ? why : readyAt == 0 ? "closed before ready" : null;
            if (readyAt == 0) {
                pending.decrementAndGet();
                failed.incrementAndGet();
            }
        }
    }

    /** Closes every stream. */
    @Override
    public void close() throws InterruptedException {
        fleet.close();
    }
}
