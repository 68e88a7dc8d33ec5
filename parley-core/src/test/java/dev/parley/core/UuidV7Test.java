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
    void theTimestampIsTheClocksMillis() {
        Instant at = Instant.parse("2026-11-22T10:00:00.123Z");
        UUID uuid = UUID.fromString(new UuidV7(InstantSource.fixed(at)).next());
        assertEquals(at.toEpochMilli(), uuid.getMostSignificantBits() >>> 16);
    }
}
