package dev.parley.core;

import java.util.random.RandomGenerator;

/**
 * How often and how patiently a push is retried: exponential backoff with full jitter.
 * The delay after failed attempt {@code n} is uniform in {@code [0, min(cap, base * 2^(n-1))]},
 * which spreads retries of many envelopes instead of synchronizing them.
 */
public record RetryPolicy(int maxAttempts, long baseMs, long capMs) {
    public static final RetryPolicy DEFAULT = new RetryPolicy(15, 2_000, 300_000);

    public RetryPolicy {
        if (maxAttempts < 1 || maxAttempts > 100) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "retry.maxAttempts must be between 1 and 100");
        }
        if (baseMs < 1 || capMs < baseMs || capMs > 86_400_000L) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST,
                    "retry.baseMs must be >= 1 and retry.capMs between baseMs and 86400000");
        }
    }

    /** The upper bound of the delay after failed attempt {@code attempt} (1-based). */
    public long ceilingAfter(int attempt) {
        return (long) Math.min(capMs, baseMs * Math.pow(2, attempt - 1));
    }

    /** A jittered delay after failed attempt {@code attempt}. */
    public long delayAfter(int attempt, RandomGenerator random) {
        return random.nextLong(ceilingAfter(attempt) + 1);
    }

    /** Whether attempt {@code attempt} was the last one allowed. */
    public boolean exhaustedAfter(int attempt) {
        return attempt >= maxAttempts;
    }
}
