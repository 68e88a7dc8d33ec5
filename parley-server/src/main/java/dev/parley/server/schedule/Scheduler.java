package dev.parley.server.schedule;

import dev.parley.core.Schedules;
import dev.parley.server.metrics.Metrics;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Fires scheduled sends when they come due ({@link Schedules#fire}). It runs a pass when the
 * hub starts (what fell due while it was down), then sleeps until the next schedule is due, or
 * until schedules change ({@link #wake}); never longer than {@link #LONGEST_NAP}, so that a
 * wall clock set forward is noticed. Passes never overlap; the store fires each occurrence at
 * most once even if they did.
 */
public final class Scheduler implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Scheduler.class.getName());
    static final Duration LONGEST_NAP = Duration.ofMinutes(1);
    /** After a failed pass (a full disk, say), the next one waits this long. */
    private static final Duration AFTER_FAILURE = Duration.ofSeconds(5);
    private static final Duration SOON = Duration.ofMillis(10);

    private final InstantSource clock;
    private final Metrics metrics;
    private final Semaphore wake = new Semaphore(0);
    private final ReentrantLock passing = new ReentrantLock();
    private volatile Schedules schedules;
    private volatile boolean closed;
    private Thread thread;

    public Scheduler(InstantSource clock, Metrics metrics) {
        this.clock = clock;
        this.metrics = metrics;
    }

    /** Schedules were created or canceled: the next one due may be sooner. */
    public void wake() {
        wake.release();
    }

    /** Starts firing {@code schedules}, with a pass now. */
    public Scheduler start(Schedules fired) {
        this.schedules = fired;
        thread = Thread.ofPlatform().name("parley-scheduler").daemon().start(this::run);
        return this;
    }

    /** One pass at the clock's now: every schedule due fires (or is skipped, when refused). */
    public Schedules.Pass pass() {
        passing.lock();
        try {
            Schedules.Pass pass = schedules.fire(clock.instant());
            metrics.schedulesFired.add(pass.fired());
            metrics.schedulesSkipped.add(pass.skipped());
            return pass;
        } finally {
            passing.unlock();
        }
    }

    private void run() {
        while (!closed) {
            Duration nap;
            try {
                nap = until(pass().nextDue());
            } catch (RuntimeException e) {
                if (closed) {
                    return;
                }
                LOG.log(Level.WARNING, "a pass over scheduled sends failed; the next runs in " + AFTER_FAILURE, e);
                nap = AFTER_FAILURE;
            }
            try {
                if (wake.tryAcquire(nap.toMillis(), TimeUnit.MILLISECONDS)) {
                    wake.drainPermits();
                }
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** How long to sleep before {@code due}: at most {@link #LONGEST_NAP}. */
    private Duration until(Optional<Instant> due) {
        if (due.isEmpty()) {
            return LONGEST_NAP;
        }
        Duration left = Duration.between(clock.instant(), due.get());
        if (left.compareTo(LONGEST_NAP) > 0) {
            return LONGEST_NAP;
        }
        // one came due since the pass looked: a short pause, so that no fault can make this spin
        return left.compareTo(SOON) < 0 ? SOON : left.plusMillis(1);
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        wake.release();
        if (thread != null) {
            thread.join(Duration.ofSeconds(10)); // a pass under way ends before the store closes
        }
    }
}
