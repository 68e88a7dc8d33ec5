package dev.parley.server;

import dev.parley.core.EventStore;
import dev.parley.server.metrics.Metrics;

import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Keeps the audit log to its retention: every so often (a tenth of the retention, between
 * 50 ms and an hour) entries older than the retention are deleted through the writer, in
 * batches, so that pruning never holds the writer long.
 */
final class AuditRetention implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(AuditRetention.class.getName());
    static final int BATCH = 5_000;

    private final EventStore store;
    private final Duration retention;
    private final Metrics metrics;
    private final InstantSource clock;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform()
            .name("parley-audit-retention").daemon(true).unstarted(r));

    private AuditRetention(EventStore store, Duration retention, Metrics metrics, InstantSource clock) {
        this.store = store;
        this.retention = retention;
        this.metrics = metrics;
        this.clock = clock;
    }

    static AuditRetention start(EventStore store, Duration retention, Metrics metrics, InstantSource clock) {
        AuditRetention job = new AuditRetention(store, retention, metrics, clock);
        long every = Math.clamp(retention.toMillis() / 10, 50, Duration.ofHours(1).toMillis());
        // The first pass comes soon after start, so a hub restarted more often than every hour still prunes.
        job.scheduler.scheduleWithFixedDelay(job::prune, Math.min(every, 1_000), every, TimeUnit.MILLISECONDS);
        return job;
    }

    /** Deletes what is past retention now; returns how many entries went. */
    long prune() {
        long total = 0;
        try {
            var cutoff = clock.instant().minus(retention);
            int pruned;
            do {
                pruned = store.pruneAudit(cutoff, BATCH);
                total += pruned;
                metrics.auditPruned.add(pruned);
            } while (pruned == BATCH && !Thread.currentThread().isInterrupted());
            if (total > 0) {
                LOG.fine("pruned " + total + " audit entries older than " + cutoff);
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "audit retention could not prune; it tries again later", e);
        }
        return total;
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        try {
            scheduler.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
