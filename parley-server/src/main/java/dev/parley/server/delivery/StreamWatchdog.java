package dev.parley.server.delivery;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Disconnects streams whose reader stopped reading. A stream marks when a write starts
 * and ends; a write still blocked after the timeout means the client's TCP window has
 * been full that long, so the stream's virtual thread is interrupted, which closes its
 * socket. The reader reconnects with its cursor and loses nothing.
 */
public final class StreamWatchdog implements AutoCloseable {
    private final long timeoutNanos;
    private final Set<Watch> watches = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("parley-stream-watchdog").daemon(true).factory());

    public StreamWatchdog(Duration timeout) {
        this.timeoutNanos = timeout.toNanos();
        long period = Math.max(50, Math.min(1000, timeout.toMillis() / 4));
        timer.scheduleAtFixedRate(this::sweep, period, period, TimeUnit.MILLISECONDS);
    }

    public Watch watch(Thread thread) {
        Watch watch = new Watch(thread);
        watches.add(watch);
        return watch;
    }

    public void unwatch(Watch watch) {
        watches.remove(watch);
    }

    private void sweep() {
        long now = System.nanoTime();
        for (Watch watch : watches) {
            long since = watch.writingSince;
            if (since != 0 && now - since > timeoutNanos && !watch.tripped) {
                watch.tripped = true;
                watch.thread.interrupt();
            }
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }

    /** One stream's write state. */
    public static final class Watch {
        private final Thread thread;
        private volatile long writingSince;
        private volatile boolean tripped;

        private Watch(Thread thread) {
            this.thread = thread;
        }

        private void writing() {
            writingSince = System.nanoTime() | 1; // never 0 while writing
        }

        private void idle() {
            writingSince = 0;
        }

        /** Writes and flushes {@code bytes} under watch: a write still blocked after the timeout is cut. */
        public void write(OutputStream out, byte[] bytes) throws IOException {
            write(out, () -> out.write(bytes));
        }

        /** Writes and flushes what {@code frames} holds under watch, without copying it out first. */
        public void write(OutputStream out, ByteArrayOutputStream frames) throws IOException {
            write(out, () -> frames.writeTo(out));
        }

        private void write(OutputStream out, Output output) throws IOException {
            writing();
            try {
                output.write();
                out.flush();
            } finally {
                idle();
            }
        }

        public boolean tripped() {
            return tripped;
        }

        private interface Output {
            void write() throws IOException;
        }
    }
}
