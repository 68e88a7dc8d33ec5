package dev.parley.bench;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one closed-loop sender did: per accepted send its start, its acknowledgement (202 or
 * PubAck), the inbox (or subject) it went to and the key its reader records it under (the seq
 * it was given there, or its {@link ArrivalKey#ENVELOPE_ID} key); and its errors.
 * Written by the sender's thread only; read after that thread has been joined.
 */
final class SendLog {
    long[] start = new long[1 << 14];
    long[] ack = new long[1 << 14];
    int[] inbox = new int[1 << 14];
    long[] key = new long[1 << 14];
    int n;
    long errors;
    final Map<String, Long> errorKinds = new TreeMap<>();

    void record(long t0, long t1, int target, long k) {
        if (n == start.length) {
            int cap = n * 2;
            start = Arrays.copyOf(start, cap);
            ack = Arrays.copyOf(ack, cap);
            inbox = Arrays.copyOf(inbox, cap);
            key = Arrays.copyOf(key, cap);
        }
        start[n] = t0;
        ack[n] = t1;
        inbox[n] = target;
        key[n] = k;
        n++;
    }

    void error(String kind) {
        errors++;
        errorKinds.merge(kind, 1L, Long::sum);
    }
}
