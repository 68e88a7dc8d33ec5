package dev.parley.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Optional;
import java.util.Random;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The stored form of a context reads back as written; anything else becomes the envelope's derived context. */
class TraceContextStoredTest {
    private static final String ENVELOPE = "0190a4b2-7c1d-7e3f-8a9b-0c1d2e3f4a5b";
    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

    @Test
    void aSpanWithAndWithoutItsParentReadsBack() {
        TraceContext root = new TraceContext(TRACE, "00f067aa0ba902b7", Optional.empty());
        TraceContext child = new TraceContext(TRACE, "00f067aa0ba902b8", Optional.of("00f067aa0ba902b7"));
        assertEquals(root, TraceContext.fromStored(root.stored(), ENVELOPE));
        assertEquals(child, TraceContext.fromStored(child.stored(), ENVELOPE));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "garbage", TRACE, TRACE + ":", TRACE + ":00f067aa0ba902b7:",
            TRACE + ":00f067aa0ba902b7:00f067aa0ba902b7:00f067aa0ba902b7", TRACE + ":00F067AA0BA902B7",
            TRACE + ":0000000000000000", "00000000000000000000000000000000:00f067aa0ba902b7",
            TRACE + ":00f067aa0ba902b7-00f067aa0ba902b7", TRACE + ":00f067aa0ba902b7:0000000000000000",
            TRACE + ":00f067aa0ba902b:00f067aa0ba902b77", "4bf92f3577b34da6a3ce929d0e0e473:600f067aa0ba902b7"})
    void anythingElseIsTheDerivedContext(String stored) {
        assertEquals(TraceContext.derived(ENVELOPE), TraceContext.fromStored(stored, ENVELOPE));
    }

    /**
     * Seeded random span ids over hex digits and their near misses (upper case, the letters and
     * signs beside them, chars past ASCII whose low byte is a digit): a span id is accepted
     * exactly when the W3C pattern says so.
     */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void aSpanIdIsAcceptedExactlyWhenItIsSixteenLowercaseHexDigits(long seed) {
        String alphabet = "0123456789abcdefABCDEFgz/:`G\u0130\u0161\u0666\uff10";
        Random random = new Random(seed);
        Pattern w3c = Pattern.compile("[0-9a-f]{16}");
        for (int i = 0; i < 2_000; i++) {
            StringBuilder span = new StringBuilder();
            boolean nearMiss = random.nextInt(4) == 0;
            for (int c = 0; c < 16; c++) {
                span.append(alphabet.charAt(random.nextInt(nearMiss ? alphabet.length() : 16)));
            }
            String id = span.toString();
            boolean expected = w3c.matcher(id).matches() && !id.equals("0".repeat(16));
            boolean accepted;
            try {
                new TraceContext(TRACE, id, Optional.empty());
                accepted = true;
            } catch (IllegalArgumentException refused) {
                accepted = false;
            }
            assertEquals(expected, accepted, id);
        }
    }

    @Test
    void noStoredContextIsTheDerivedContext() {
        assertEquals(TraceContext.derived(ENVELOPE), TraceContext.fromStored(null, ENVELOPE));
    }
}
