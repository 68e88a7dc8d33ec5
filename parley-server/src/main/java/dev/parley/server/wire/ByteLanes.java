package dev.parley.server.wire;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * A byte array read eight bytes at a time, each byte a lane of a {@code long}, the first byte the
 * lowest: a frame's strings checked for JSON escapes ({@link Json}) and SSE lines split at their
 * ends (the bench's reader) without a branch per byte. A lane is flagged by its top bit; where
 * flags come from a subtraction, a borrow can flag lanes above a flagged one, never below, so
 * the lowest flag is exact.
 */
public final class ByteLanes {
    /** The top bit of every lane. */
    public static final long TOPS = 0x8080808080808080L;
    private static final long EACH = 0x0101010101010101L;
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private ByteLanes() {
    }

    /** The eight bytes from {@code i}. */
    public static long at(byte[] bytes, int i) {
        return (long) LONGS.get(bytes, i);
    }

    /** Each lane {@code c}, to compare with by {@code ^}. */
    public static long each(char c) {
        return EACH * c;
    }

    /** The top bit of each lane of {@code x} that is zero. */
    public static long zero(long x) {
        return (x - EACH) & ~x & TOPS;
    }

    /**
     * The top bit of each lane of {@code x} below {@code n} (an ASCII value). A lane past ASCII
     * is not flagged here: its own top bit ({@code x & TOPS}) says so.
     */
    public static long below(long x, int n) {
        return (x - EACH * n) & ~x & TOPS;
    }

    /** The index in the array of the lowest flagged lane of the eight bytes read from {@code i}. */
    public static int lowest(long flags, int i) {
        return i + (Long.numberOfTrailingZeros(flags) >>> 3);
    }
}
