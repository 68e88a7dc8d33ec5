package dev.parley.bench;

import dev.parley.bench.http.SseStream;
import java.util.concurrent.CountDownLatch;

/**
 * When each seq (or other {@link ArrivalKey}) of one inbox (or one JetStream subject) reached
 * its reader. As an SSE listener it records every frame's key and counts down {@code ready}
 * on the hub's {@code : parley ready} comment; a JetStream consumer calls {@link #arrived} directly.
 */
final class InboxArrivals implements SseStream.Listener {
    private final CountDownLatch ready;
    private final ArrivalKey key;
    private final LongLongMap arrivals = new LongLongMap(1 << 14);
    private long duplicates;
    private boolean sawReady;
    /** The stream feeding this reader, if any (closed with the workload). */
    SseStream stream;

    /** Frames are matched by their {@code id:} (the inbox seq). */
    InboxArrivals(CountDownLatch ready) {
        this(ready, ArrivalKey.SEQ);
    }

    /** Frames are matched by {@code key} (a stream feeding it must keep data when {@link ArrivalKey#needsData}). */
    InboxArrivals(CountDownLatch ready, ArrivalKey key) {
        this.ready = ready;
        this.key = key;
    }

    @Override
    public void onComment(String text) {
        if (!sawReady && text.contains("parley ready")) {
            sawReady = true;
            if (ready != null) {
                ready.countDown();
            }
        }
    }

    @Override
    public void onEvent(long id, String event, byte[] data, int dataLength) {
        long now = System.nanoTime();
        long k = key.ofEvent(id, data, dataLength);
        if (k >= 0) {
            arrived(k, now);
        }
    }

    /** Records the arrival of key {@code k} at {@code nanos}; a second arrival counts as a duplicate. */
    synchronized void arrived(long k, long nanos) {
        if (!arrivals.putIfAbsent(k, nanos)) {
            duplicates++;
        }
    }

    /** When key {@code k} was seen, or Long.MIN_VALUE. */
    synchronized long seenAt(long k) {
        return arrivals.get(k, Long.MIN_VALUE);
    }

    synchronized long duplicates() {
        return duplicates;
    }
}
