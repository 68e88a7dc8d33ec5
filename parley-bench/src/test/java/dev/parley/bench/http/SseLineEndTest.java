package dev.parley.bench.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link SseStream#lineEnd}, eight bytes at a time, against a byte at a time: random bytes with
 * line ends at every offset of a lane, bytes next to LF and CR in value (a borrow from them is
 * where a lane trick goes wrong) and bytes past ASCII.
 */
class SseLineEndTest {
    private static final byte[] AWKWARD = {'\n', '\r', 0, 9, 11, 12, 14, (byte) 0x80, (byte) 0x8A, (byte) 0x8D,
            (byte) 0xFF, 'a', ' '};

    static LongStream seeds() {
        return LongStream.range(0, 200);
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void findsTheFirstLineEndAsAByteAtATimeWould(long seed) {
        Random random = new Random(seed);
        byte[] b = new byte[random.nextInt(1, 80)];
        int ends = random.nextInt(4); // how rare line ends are: none, or one byte in 2, 8 or 32
        for (int k = 0; k < b.length; k++) {
            boolean end = ends > 0 && random.nextInt(1 << (2 * ends - 1)) == 0;
            b[k] = end ? (random.nextBoolean() ? (byte) '\n' : (byte) '\r')
                    : random.nextInt(3) == 0 ? AWKWARD[random.nextInt(AWKWARD.length)] : (byte) random.nextInt(256);
            if (!end && (b[k] == '\n' || b[k] == '\r') && ends == 0) {
                b[k] = 'x';
            }
        }
        int from = random.nextInt(b.length + 1);
        int to = from + random.nextInt(b.length - from + 1);
        for (int i = from; i <= to; i++) {
            assertEquals(byteAtATime(b, i, to), SseStream.lineEnd(b, i, to), "from " + i + " to " + to);
        }
    }

    private static int byteAtATime(byte[] b, int i, int end) {
        while (i < end && b[i] != '\n' && b[i] != '\r') {
            i++;
        }
        return i;
    }
}
