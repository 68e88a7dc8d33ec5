package dev.parley.core;

import java.util.function.LongSupplier;

/**
 * A token bucket over a monotonic clock (nanoseconds). It starts full; {@link #take()} takes
 * one token or says how long until one is there. Thread-safe.
 */
public final class TokenBucket {
    private final Rate rate;
    private final LongSupplier nanos;
    private final double tokensPerNano;
    private double tokens;
    private long last;

    public TokenBucket(Rate rate, LongSupplier nanos) {
        this(rate, nanos, rate.burst());
    }

    private TokenBucket(Rate rate, LongSupplier nanos, double tokens) {
        this.rate = rate;
        this.nanos = nanos;
        this.tokensPerNano = rate.perSecond() / 1e9;
        this.tokens = tokens;
        this.last = nanos.getAsLong();
    }

    public Rate rate() {
        return rate;
    }

    /** 0 when a token was taken; otherwise the nanoseconds until one will be available (nothing is taken). */
    public synchronized long take() {
        refill();
        if (tokens >= 1) {
            tokens -= 1;
            return 0;
        }
        return Math.max(1, (long) Math.ceil((1 - tokens) / tokensPerNano));
    }

    /** Whether the bucket has refilled completely (an idle bucket may be dropped and made afresh). */
    public synchronized boolean full() {
        refill();
        return tokens >= rate.burst();
    }

    /** The same bucket under another rate: what it holds now carries over, up to the new burst. */
    public synchronized TokenBucket withRate(Rate next) {
        refill();
        return new TokenBucket(next, nanos, Math.min(tokens, next.burst()));
    }

    private void refill() {
        long now = nanos.getAsLong();
        long elapsed = now - last;
        if (elapsed > 0) {
            tokens = Math.min(rate.burst(), tokens + elapsed * tokensPerNano);
            last = now;
        }
    }
}
