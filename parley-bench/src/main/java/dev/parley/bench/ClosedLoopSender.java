package dev.parley.bench;

import dev.parley.bench.http.HttpConnection;
import java.io.IOException;

/**
 * One closed-loop Parley sender: its own node token and keep-alive connection, POSTing
 * pre-built requests to {@code /v1/messages} and waiting for each 202 before the next send.
 * Sender <i>i</i>'s <i>k</i>-th send carries body <i>(i + k) mod M</i>, which goes to inbox
 * {@code inboxOf[(i + k) mod M]}; each accepted send is logged under its {@link ArrivalKey}.
 * With a batch of B, each request goes to {@code /v1/messages:batch} and carries sends
 * <i>k</i> … <i>k + B − 1</i> (its body <i>j</i> holds the sends that start at <i>j</i>); its 200
 * logs each of them, with the request's start and answer as their times.
 */
final class ClosedLoopSender implements LoadResult.Worker {
    private final int index;
    private final HttpConnection conn;
    private final byte[] head;
    private final byte[][] bodies;
    private final int[] inboxOf;
    private final ArrivalKey key;
    private final int batch;
    private final long[] keys;
    private final SendLog log = new SendLog();
    private volatile boolean stop;

    /** Body j goes to inbox j; sends are matched by seq. */
    ClosedLoopSender(int index, HttpConnection conn, byte[] head, byte[][] bodies) {
        this(index, conn, head, bodies, identity(bodies.length), ArrivalKey.SEQ);
    }

    /** Body j goes to inbox {@code inboxOf[j]}; sends are matched by {@code key}. */
    ClosedLoopSender(int index, HttpConnection conn, byte[] head, byte[][] bodies, int[] inboxOf, ArrivalKey key) {
        this(index, conn, head, bodies, inboxOf, key, 1);
    }

    /** Requests of {@code batch} sends each (1: single sends), body j holding those that start at j. */
    ClosedLoopSender(int index, HttpConnection conn, byte[] head, byte[][] bodies, int[] inboxOf, ArrivalKey key,
                     int batch) {
        if (inboxOf.length != bodies.length) {
            throw new IllegalArgumentException("one inbox per body");
        }
        this.index = index;
        this.conn = conn;
        this.head = head;
        this.bodies = bodies;
        this.inboxOf = inboxOf;
        this.key = key;
        this.batch = batch;
        this.keys = new long[batch];
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
                int target = (int) (k % m);
                k += batch;
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
                if (status == (batch == 1 ? 202 : 200)) {
                    logAccepted(t0, t1, target);
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

    /** Logs the sends the answer accepted: one (a 202), or every send of a batch (a 200 with one seq each). */
    private void logAccepted(long t0, long t1, int target) {
        if (batch == 1) {
            long k202 = key.ofAck(conn);
            if (k202 < 0) {
                log.error("202 without " + key.label);
            } else {
                log.record(t0, t1, inboxOf[target], k202);
            }
            return;
        }
        int accepted = key.ofBatchAck(conn, keys);
        if (accepted != batch || java.util.Arrays.stream(keys).anyMatch(seq -> seq < 0)) {
            log.error("batch with " + accepted + " of " + batch + " accepted");
            return;
        }
        for (int j = 0; j < batch; j++) {
            log.record(t0, t1, inboxOf[(target + j) % bodies.length], keys[j]);
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
