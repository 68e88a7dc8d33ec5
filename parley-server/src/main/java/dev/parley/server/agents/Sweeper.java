package dev.parley.server.agents;

import dev.parley.core.Capabilities;
import dev.parley.core.Claims;
import dev.parley.core.Sweep;
import dev.parley.server.metrics.Metrics;

import java.time.InstantSource;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Runs the {@linkplain Claims#sweep sweep} when the hub starts and every {@link Sweep#INTERVAL}
 * after: claims of claimants whose process is gone or stuck are taken back, the stuck processes
 * of the hub's own agents killed first; tasks routed through a capability and past their ETA
 * raise their reviews.
 */
public final class Sweeper implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Sweeper.class.getName());

    private final Claims claims;
    /** Reviewed on each sweep: routed tasks past their ETA are stuck work too. */
    private final Capabilities capabilities;
    private final AgentRuntime runtime;
    private final Metrics metrics;
    /** Told when claims were taken back: their redelivery is scheduled. */
    private final Runnable released;
    private final InstantSource clock;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("parley-sweep").daemon().factory());

    public Sweeper(Claims claims, Capabilities capabilities, AgentRuntime runtime, Metrics metrics, Runnable released,
                   InstantSource clock) {
        this.claims = claims;
        this.capabilities = capabilities;
        this.runtime = runtime;
        this.metrics = metrics;
        this.released = released;
        this.clock = clock;
    }

    /**
     * Sweeps now (the hub is starting; its agents were just taken charge of), and then every {@code interval}
     * ({@link Sweep#INTERVAL} unless the hub is configured otherwise).
     */
    public Sweeper start(java.time.Duration interval) {
        sweep();
        timer.scheduleWithFixedDelay(() -> {
            try {
                sweep();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "the sweep of claims failed; it runs again in " + interval, e);
            }
        }, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    /** One sweep, now: claims, then capability tasks past their ETA. */
    public Claims.Swept sweep() {
        Claims.Swept swept = claims.sweep(clock.instant(), runtime::process, runtime::kill);
        metrics.claimsReset.add(swept.reset());
        metrics.claimsGivenUp.add(swept.givenUp());
        metrics.sweepKills.add(swept.killed());
        if (swept.reset() > 0) {
            released.run();
        }
        try { // after the claims: a failing review must not keep taken-back claims from their redelivery
            capabilities.reviewOverdue();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "the review of capability tasks past their ETA failed; it runs again at the next sweep",
                    e);
        }
        return swept;
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
