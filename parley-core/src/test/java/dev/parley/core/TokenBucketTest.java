package dev.parley.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class TokenBucketTest {
    private final AtomicLong nanos = new AtomicLong(1_000);

    private void advance(long millis) {
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
    }

    @Test
    void startsFullThenRefillsAtItsRate() {
        TokenBucket bucket = new TokenBucket(new Rate(10, 5), nanos::get);
        for (int i = 0; i < 5; i++) {
            assertEquals(0, bucket.take(), "the burst is available at once");
        }
        long wait = bucket.take();
        assertEquals(TimeUnit.MILLISECONDS.toNanos(100), wait, "one token every 100 ms at 10/s");
        advance(99);
        assertTrue(bucket.take() > 0, "not yet");
        advance(1);
        assertEquals(0, bucket.take());
        advance(10_000);
        for (int i = 0; i < 5; i++) {
            assertEquals(0, bucket.take());
        }
        assertTrue(bucket.take() > 0, "never more than the burst, however long it idled");
    }

    @Test
    void countsOverTimeMatchRateTimesTimePlusBurst() {
        TokenBucket bucket = new TokenBucket(new Rate(50, 50), nanos::get);
        int taken = 0;
        for (int ms = 0; ms < 10_000; ms++) {
            while (bucket.take() == 0) {
                taken++;
            }
            advance(1);
        }
        assertEquals(50 * 10 + 50, taken, 1);
    }

    @Test
    void aNewRateKeepsWhatTheBucketHoldsUpToTheNewBurst() {
        TokenBucket bucket = new TokenBucket(new Rate(1, 100), nanos::get);
        TokenBucket smaller = bucket.withRate(new Rate(1, 3));
        int taken = 0;
        while (smaller.take() == 0) {
            taken++;
        }
        assertEquals(3, taken);
        assertTrue(smaller.full() == false);
    }

    @Test
    void ratesAreValidated() {
        assertThrows(ParleyException.class, () -> new Rate(0, 1));
        assertThrows(ParleyException.class, () -> new Rate(Double.NaN, 1));
        assertThrows(ParleyException.class, () -> new Rate(Double.POSITIVE_INFINITY, 1));
        assertThrows(ParleyException.class, () -> new Rate(1, 0));
        assertEquals(new Rate(0.5, 30), Rate.perMinute(30));
    }
}
