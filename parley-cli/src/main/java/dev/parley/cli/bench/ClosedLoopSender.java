package dev.parley.cli.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * One closed-loop Parley sender: its own node token and keep-alive connection, POSTing
 * pre-built requests to {@code /v1/messages} and waiting for each 202 before the next send.
 * Sender <i>i</i>'s <i>k</i>-th send goes to inbox <i>(i + k) mod M</i>.
 */
final class ClosedLoopSender implements Runnable {
    private static final byte[] SEQ_FIELD = "\"seq\":".getBytes(StandardCharsets.US_ASCII);

    private final int index;
    private final HttpConnection conn;
    private final byte[] head;
    private final byte[][] bodies;
    final SendLog log = new SendLog();
    private volatile boolean stop;

    ClosedLoopSender(int index, HttpConnection conn, byte[] head, byte[][] bodies) {
        this.index = index;
        this.conn = conn;
        this.head = head;
        this.bodies = bodies;
    }

    void stop() {
        stop = true;
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
                    long s = conn.bodyLongField(SEQ_FIELD);
                    if (s < 0) {
                        log.error("202 without seq");
                        continue;
                    }
                    log.record(t0, t1, target, s);
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
