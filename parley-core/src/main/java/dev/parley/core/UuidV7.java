package dev.parley.core;

import java.security.SecureRandom;
import java.time.InstantSource;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * RFC 9562 UUIDv7: 48 bits of Unix milliseconds, then randomness. Ids from one generator
 * are strictly increasing even within a millisecond (a counter fills the rand_a bits).
 */
public final class UuidV7 implements IdGenerator {
    private final InstantSource clock;
    private final SecureRandom random = new SecureRandom();
    /** The last (millis << 12 | counter) handed out. */
    private final AtomicLong last = new AtomicLong();

    public UuidV7(InstantSource clock) {
        this.clock = clock;
    }

    @Override
    public String next() {
        long stamp = last.updateAndGet(prev -> Math.max(prev + 1, clock.millis() << 12));
        long millis = stamp >>> 12;
        long counter = stamp & 0xFFF;
        long msb = (millis << 16) | 0x7000L | counter;
        long lsb = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(msb, lsb).toString();
    }
}
