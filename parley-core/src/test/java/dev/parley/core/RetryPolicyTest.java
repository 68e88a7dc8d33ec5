package dev.parley.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RetryPolicyTest {
    private final RetryPolicy policy = new RetryPolicy(15, 2_000, 300_000);

    @Test
    void theCeilingDoublesUpToTheCap() {
        assertEquals(2_000, policy.ceilingAfter(1));
        assertEquals(4_000, policy.ceilingAfter(2));
        assertEquals(256_000, policy.ceilingAfter(8));
        assertEquals(300_000, policy.ceilingAfter(9));
        assertEquals(300_000, policy.ceilingAfter(100));
    }

    /** Full jitter: every delay lies in [0, ceiling], and the draws actually spread over that range. */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 5, 9, 15})
    void delaysAreJitteredWithinBounds(int attempt) {
        SplittableRandom random = new SplittableRandom(attempt * 7919L);
        long ceiling = policy.ceilingAfter(attempt);
        long min = Long.MAX_VALUE;
        long max = 0;
        for (int i = 0; i < 2_000; i++) {
            long delay = policy.delayAfter(attempt, random);
            assertTrue(delay >= 0 && delay <= ceiling, delay + " outside [0, " + ceiling + "]");
            min = Math.min(min, delay);
            max = Math.max(max, delay);
        }
        assertTrue(min < ceiling / 10 && max > ceiling * 9 / 10, "spread " + min + ".." + max);
    }

    @Test
    void exhaustionIsAtMaxAttempts() {
        assertEquals(false, policy.exhaustedAfter(14));
        assertEquals(true, policy.exhaustedAfter(15));
    }

    @Test
    void nonsenseIsRefused() {
        assertThrows(ParleyException.class, () -> new RetryPolicy(0, 1, 1));
        assertThrows(ParleyException.class, () -> new RetryPolicy(3, 100, 10));
    }
}
