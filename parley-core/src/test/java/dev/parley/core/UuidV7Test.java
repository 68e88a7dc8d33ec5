package dev.parley.core;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.InstantSource;
import java.util.HashSet;
import java.util.Set;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class UuidV7Test {
    @Test
    void idsAreVersion7AndStrictlyIncreasingWithinOneMillisecond() {
        Instant frozen = Instant.parse("2026-11-22T10:00:00.123Z");
        UuidV7 ids = new UuidV7(InstantSource.fixed(frozen));
        String previous = ids.next();
        Set<String> seen = new HashSet<>(Set.of(previous));
        for (int i = 0; i < 3000; i++) {
            String next = ids.next();
            assertTrue(next.compareTo(previous) > 0, next + " after " + previous);
            assertTrue(seen.add(next));
            previous = next;
        }
        UUID uuid = UUID.fromString(previous);
        assertEquals(7, uuid.version());
        assertEquals(2, uuid.variant());
    }

    @Test
    void theRandomBitsNeverRepeatAcrossRefillsOfThePoolOrThreads() throws InterruptedException {
        UuidV7 ids = new UuidV7(InstantSource.system());
        Set<Long> randomBits = java.util.concurrent.ConcurrentHashMap.newKeySet();
        Set<String> all = java.util.concurrent.ConcurrentHashMap.newKeySet();
        Thread[] threads = new Thread[4];
        for (int t = 0; t < threads.length; t++) {
            threads[t] = Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 2000; i++) { // 8,000 ids: the pool of 256 is drawn again 31 times
                    String id = ids.next();
                    all.add(id);
                    randomBits.add(UUID.fromString(id).getLeastSignificantBits());
                }
            });
        }
        for (Thread thread : threads) {
            thread.join();
        }
        assertEquals(8000, all.size());
        assertEquals(8000, randomBits.size());
    }

    @Test
    void theTimestampIsTheClocksMillis() {
        Instant at = Instant.parse("2026-11-22T10:00:00.123Z");
        UUID uuid = UUID.fromString(new UuidV7(InstantSource.fixed(at)).next());
        assertEquals(at.toEpochMilli(), uuid.getMostSignificantBits() >>> 16);
    }
}
