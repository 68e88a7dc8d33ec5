package dev.parley.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Random;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class VisibleAsciiTest {
    @Test
    void theBoundsOfTheRangeAndTheLength() {
        assertTrue(VisibleAscii.within("!", 1));
        assertTrue(VisibleAscii.within("~", 1));
        assertTrue(VisibleAscii.within("job-17/a:b@c", 200));
        assertTrue(VisibleAscii.within("x".repeat(200), 200));
        assertFalse(VisibleAscii.within("x".repeat(201), 200));
        assertFalse(VisibleAscii.within("", 200));
        assertFalse(VisibleAscii.within("two words", 200));
        assertFalse(VisibleAscii.within("tab\there", 200));
        assertFalse(VisibleAscii.within("del\u007f", 200));
        assertFalse(VisibleAscii.within("caf\u00e9", 200));
        assertFalse(VisibleAscii.within("\ud83d\ude00", 200));
    }

    /** The regular expression the hub checked these ids with before, as the reference, on seeded random strings. */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void agreesWithTheRegularExpressionItReplaced(long seed) {
        Random random = new Random(seed);
        Pattern reference = Pattern.compile("[\\x21-\\x7e]{1,12}");
        for (int i = 0; i < 20_000; i++) {
            StringBuilder value = new StringBuilder();
            int length = random.nextInt(15);
            for (int c = 0; c < length; c++) {
                // mostly visible ASCII, sometimes a character at or just past either end of the range, or beyond ASCII
                value.append(switch (random.nextInt(10)) {
                    case 0 -> (char) (0x1f + random.nextInt(3));
                    case 1 -> (char) (0x7d + random.nextInt(4));
                    case 2 -> (char) random.nextInt(0x10000);
                    default -> (char) (0x21 + random.nextInt(0x5e));
                });
            }
            String s = value.toString();
            assertEquals(reference.matcher(s).matches(), VisibleAscii.within(s, 12), () -> "for " + s.codePoints()
                    .mapToObj(Integer::toHexString).toList());
        }
    }
}
