package dev.parley.server.delivery;

import dev.parley.server.http.StreamBody;

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
 * The streams' one clock. It disconnects streams whose reader stopped reading: a stream
 * marks when a write starts and ends; a write still blocked after the timeout means the
 * client's TCP window has been full that long, so the stream's answer is given up (its
 * connection closes and the write fails) and its virtual thread is interrupted, in case it
 * waits elsewhere. The reader reconnects with its cursor and loses nothing. And it wakes a
 * waiting stream that has written nothing for a heartbeat interval, so that stream can write
 * its heartbeat: a stream waits for news without a timeout, because a virtual thread's timed
 * wait costs the scheduler a timer set and cancelled at every wake-up, that is at every
 * envelope a busy stream carries.
 */
public final class StreamWatchdog implements AutoCloseable {
    private final long timeoutNanos;
    private final long heartbeatNanos;
    private final Set<Watch> watches = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("parley-stream-watchdog").daemon(true).factory());

    /**
     * Looks every quarter of the shorter of the two intervals (between 10 ms and 1 s). A
     * stream is woken for its heartbeat by the first look after it has been silent for the
     * heartbeat interval less one such period (but at least half the interval), so its
     * heartbeats are never further apart than the interval (API.md: at least every 15 s).
     */
    public StreamWatchdog(Duration timeout, Duration heartbeat) {
        this.timeoutNanos = timeout.toNanos();
        long period = Math.max(10, Math.min(1000, Math.min(timeout.toMillis(), heartbeat.toMillis()) / 4));
        this.heartbeatNanos = Math.max(heartbeat.toNanos() - TimeUnit.MILLISECONDS.toNanos(period),
                heartbeat.toNanos() / 2);
        timer.scheduleAtFixedRate(this::sweep, period, period, TimeUnit.MILLISECONDS);
    }

    public Watch watch(Thread thread) {
        Watch watch = new Watch(thread, heartbeatNanos);
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
                StreamBody answer = watch.answer;
                if (answer != null) {
                    answer.abort(); // a blocked write ends failed, not interrupted: Jetty warned at each interrupt
                }
                watch.thread.interrupt();
            }
            Runnable waiting = watch.waiting;
            if (waiting != null && watch.heartbeatDue(now)) {
                waiting.run();
            }
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }

    /** One stream's write state, and how it is woken for a heartbeat while it waits. */
    public static final class Watch {
        private final Thread thread;
        private final long heartbeatNanos;
        private volatile long writingSince;
        private volatile long wroteAt = System.nanoTime();
        private volatile Runnable waiting;
        private volatile boolean tripped;
        private volatile StreamBody answer;

        private Watch(Thread thread, long heartbeatNanos) {
            this.thread = thread;
            this.heartbeatNanos = heartbeatNanos;
        }

        void writing() {
            writingSince = System.nanoTime() | 1; // never 0 while writing
        }

        void idle() {
            wroteAt = System.nanoTime();
            writingSince = 0;
        }

        /** The answer the stream writes, given up first when the stream is cut. */
        public void answering(StreamBody body) {
            answer = body;
        }

        /** Whether the stream has been silent long enough that its heartbeat is due. */
        public boolean heartbeatDue() {
            return heartbeatDue(System.nanoTime());
        }

        private boolean heartbeatDue(long now) {
            return now - wroteAt >= heartbeatNanos;
        }

        /**
         * While the stream waits for news, {@code wake} (which must make its wait look at
         * {@link #heartbeatDue} again) is what a due heartbeat runs; {@code null} once it stops waiting.
         */
        public void waiting(Runnable wake) {
            waiting = wake;
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
