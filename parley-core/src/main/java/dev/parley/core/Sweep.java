package dev.parley.core;

import java.time.Duration;
import java.time.Instant;

/**
 * The rules that notice stuck work: what to do with one claim, given whether its claimant's
 * process is alive, at {@code now}. Pure, so every rule and boundary is tested with a clock in
 * hand; the constants live here and nowhere else.
 */
public final class Sweep {
    /** How often the sweep runs (it also runs once when the hub starts). */
    public static final Duration INTERVAL = Duration.ofSeconds(60);
    /** A taken-back claim waits {@code BACKOFF · 2^tries} before it may be claimed again. */
    public static final Duration BACKOFF = Duration.ofSeconds(5);
    /** A claim taken back this many times is given up: the envelope is dead-lettered and its sender told. */
    public static final int MAX_TRIES = 5;
    /** Longest a claimant may go without a heartbeat (or the declared timeout, when longer). */
    public static final Duration CEILING = Duration.ofMinutes(30);
    /** Longest a claim may wait for its first heartbeat (or the declared timeout, when longer). */
    public static final Duration CLAIM_AGE = Duration.ofSeconds(60);

    private Sweep() {
    }

    /** The claimant's process, as the hub knows it. */
    public enum Process {
        /** The process this hub ran that made the claim has ended (another may run for the node since). */
        GONE,
        /** The process this hub runs that made the claim is alive: a stuck one is killed. */
        ALIVE,
        /** The claimant runs itself: the hub cannot see or kill its process, only take its claims back. */
        ITS_OWN
    }

    /** What the sweep does with a claim. */
    public sealed interface Decision {
        /** The claim stands. */
        record Keep() implements Decision {
        }

        /** The claim is taken back (then the process killed, when {@code kill}): claimable again from {@code notBefore}. */
        record Reset(String why, boolean kill, Instant notBefore) implements Decision {
        }

        /** The claim was taken back {@link #MAX_TRIES} times: the envelope is dead-lettered, its sender told. */
        record GiveUp(String why, boolean kill, int tries) implements Decision {
        }
    }

    public static Decision decide(Claim claim, Process process, Instant now) {
        String why;
        if (process == Process.GONE) {
            why = "its claimant's process is gone";
        } else if (claim.heartbeat().isPresent()) {
            Duration ceiling = longer(CEILING, claim);
            Duration silent = Duration.between(claim.heartbeat().get().at(), now);
            if (silent.compareTo(ceiling) <= 0) {
                return new Decision.Keep();
            }
            why = "no heartbeat for " + DurationText.format(silent) + " (at most " + DurationText.format(ceiling) + ")";
        } else {
            Duration limit = longer(CLAIM_AGE, claim);
            Duration age = Duration.between(claim.claimedAt(), now);
            if (age.compareTo(limit) <= 0) {
                return new Decision.Keep();
            }
            why = "claimed " + DurationText.format(age) + " ago and no heartbeat since (at most "
                    + DurationText.format(limit) + ")";
        }
        boolean kill = process == Process.ALIVE;
        int tries = claim.tries() + 1;
        if (tries >= MAX_TRIES) {
            return new Decision.GiveUp(why + "; taken back " + tries + " times", kill, tries);
        }
        return new Decision.Reset(why, kill, now.plus(BACKOFF.multipliedBy(1L << claim.tries())));
    }

    private static Duration longer(Duration floor, Claim claim) {
        return claim.declared().filter(d -> d.compareTo(floor) > 0).orElse(floor);
    }
}
