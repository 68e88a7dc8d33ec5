package dev.parley.bench;

import dev.parley.bench.http.HttpConnection;
import java.io.IOException;

/**
 * One closed-loop Parley sender: its own node token and keep-alive connection, POSTing
 * pre-built requests to {@code /v1/messages} and waiting for each 202 before the next send.
 * Sender <i>i</i>'s <i>k</i>-th send carries body <i>(i + k) mod M</i>, which goes to inbox
 * {@code inboxOf[(i + k) mod M]}; each accepted send is logged under its {@link ArrivalKey}.
 */
final class ClosedLoopSender implements LoadResult.Worker {
    private final int index;
    private final HttpConnection conn;
    private final byte[] head;
    private final byte[][] bodies;
    private final int[] inboxOf;
    private final ArrivalKey key;
    private final SendLog log = new SendLog();
    private volatile boolean stop;

    /** Body j goes to inbox j; sends are matched by seq. */
    ClosedLoopSender(int index, HttpConnection conn, byte[] head, byte[][] bodies) {
        this(index, conn, head, bodies, identity(bodies.length), ArrivalKey.SEQ);
    }

    /** Body j goes to inbox {@code inboxOf[j]}; sends are matched by {@code key}. */
    ClosedLoopSender(int index, HttpConnection conn, byte[] head, byte[][] bodies, int[] inboxOf, ArrivalKey key) {
        if (inboxOf.length != bodies.length) {
            throw new IllegalArgumentException("one inbox per body");
        }
        this.index = index;
        this.conn = conn;
        this.head = head;
        this.bodies = bodies;
        this.inboxOf = inboxOf;
        this.key = key;
    }

    private static int[] identity(int n) {
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = i;
        }
        return out;
    }

    @Override
    public void stop() {
        stop = true;
    }

    @Override
    public SendLog log() {
        return log;
    }

    @Override
    public void run() {
        int m = bodies.length;
        long k = index;
        try {
            while (!stop) {
                int target = (int) (k++ % m);
                long t0 = System.nanoTime();
                int status;
                try {
                    status = conn.exchange(head, bodies[target]);
                } catch (IOException e) {
                    log.error(e.getClass().getSimpleName());
                    pause();
                    continue;
                }
                long t1 = System.nanoTime();
                if (status == 202) {
                    long k202 = key.ofAck(conn);
                    if (k202 < 0) {
                        log.error("202 without " + key.label);
                        continue;
                    }
                    log.record(t0, t1, inboxOf[target], k202);
                } else {
                    log.error("HTTP " + status);
                    if (status == 429 || status >= 500) {
                        pause();
                    }
                }
            }
        } finally {
            conn.close();
        }
    }

    private void pause() {
        try {
            Thread.sleep(10);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop = true;
        }
    }
}
