package dev.parley.core;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.InstantSource;
import java.util.UUID;

/**
 * RFC 9562 UUIDv7: 48 bits of Unix milliseconds, then randomness. Ids from one generator
 * are strictly increasing even within a millisecond (a counter fills the rand_a bits).
 */
public final class UuidV7 implements IdGenerator {
    /** Random longs drawn per call to the CSPRNG: one call per id cost more than the rest of the id. */
    private static final int POOL = 256;

    private final InstantSource clock;
    private final SecureRandom random = new SecureRandom();
    private final long[] pool = new long[POOL];
    private int left;
    /** The last (millis << 12 | counter) handed out. */
    private long last;

    public UuidV7(InstantSource clock) {
        this.clock = clock;
    }

    @Override
    public String next() {
        long stamp;
        long bits;
        synchronized (this) {
            stamp = Math.max(last + 1, clock.millis() << 12);
            last = stamp;
            if (left == 0) {
                byte[] bytes = new byte[POOL * Long.BYTES];
                random.nextBytes(bytes);
                ByteBuffer.wrap(bytes).asLongBuffer().get(pool);
                left = POOL;
            }
            bits = pool[--left];
        }
        long millis = stamp >>> 12;
        long counter = stamp & 0xFFF;
        long msb = (millis << 16) | 0x7000L | counter;
        long lsb = (bits & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(msb, lsb).toString();
    }
}
