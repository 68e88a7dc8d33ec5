package dev.parley.cli.bench;

import java.util.concurrent.CountDownLatch;

/**
 * When each seq of one inbox (or one JetStream subject) reached its reader. As an SSE
 * listener it records every {@code id:} of the stream and counts down {@code ready} on the
 * hub's {@code : parley ready} comment; a JetStream consumer calls {@link #arrived} directly.
 */
final class InboxArrivals implements SseStream.Listener {
    private final CountDownLatch ready;
    private final LongLongMap arrivals = new LongLongMap(1 << 14);
    private long duplicates;
    private boolean sawReady;
    /** The stream feeding this reader, if any (closed with the workload). */
    SseStream stream;

    InboxArrivals(CountDownLatch ready) {
        this.ready = ready;
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
        if (id >= 0) {
            arrived(id, now);
        }
    }

    /** Records the arrival of {@code seq} at {@code nanos}; a second arrival counts as a duplicate. */
    synchronized void arrived(long seq, long nanos) {
        if (!arrivals.putIfAbsent(seq, nanos)) {
            duplicates++;
        }
    }

    /** When the seq was seen, or Long.MIN_VALUE. */
    synchronized long seenAt(long seq) {
        return arrivals.get(seq, Long.MIN_VALUE);
    }

    synchronized long duplicates() {
        return duplicates;
    }
}
