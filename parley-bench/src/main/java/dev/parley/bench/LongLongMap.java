package dev.parley.bench;

import java.util.Arrays;

/** An open-addressing map from non-negative long keys to long values (no boxing). Not thread-safe. */
final class LongLongMap {
    private static final long EMPTY = -1;
    private long[] keys;
    private long[] values;
    private int size;

    LongLongMap(int expected) {
        int cap = Integer.highestOneBit(Math.max(16, expected * 2) - 1) << 1;
        keys = new long[cap];
        values = new long[cap];
        Arrays.fill(keys, EMPTY);
    }

    /** Puts the value unless the key is present; returns false when it was already there. */
    boolean putIfAbsent(long key, long value) {
        if (key < 0) {
            throw new IllegalArgumentException("negative key " + key);
        }
        if ((size + 1) * 2 > keys.length) {
            grow();
        }
        int mask = keys.length - 1;
        int i = mix(key) & mask;
        while (keys[i] != EMPTY) {
            if (keys[i] == key) {
                return false;
            }
            i = (i + 1) & mask;
        }
        keys[i] = key;
        values[i] = value;
        size++;
        return true;
    }

    /** The value, or {@code missing} when absent. */
    long get(long key, long missing) {
        int mask = keys.length - 1;
        int i = mix(key) & mask;
        while (keys[i] != EMPTY) {
            if (keys[i] == key) {
                return values[i];
            }
            i = (i + 1) & mask;
        }
        return missing;
    }

    private void grow() {
        long[] oldKeys = keys;
        long[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        values = new long[oldKeys.length * 2];
        Arrays.fill(keys, EMPTY);
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldKeys[i] != EMPTY) {
                putIfAbsent(oldKeys[i], oldValues[i]);
            }
        }
    }

    private static int mix(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }
}
