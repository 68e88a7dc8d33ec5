package dev.parley.cli.bench;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one closed-loop sender did: per accepted send its start, its acknowledgement (202 or
 * PubAck), the inbox (or subject) it went to and the seq it was given there; and its errors.
 * Written by the sender's thread only; read after that thread has been joined.
 */
final class SendLog {
    long[] start = new long[1 << 14];
    long[] ack = new long[1 << 14];
    int[] inbox = new int[1 << 14];
    long[] seq = new long[1 << 14];
    int n;
    long errors;
    final Map<String, Long> errorKinds = new TreeMap<>();

    void record(long t0, long t1, int target, long s) {
        if (n == start.length) {
            int cap = n * 2;
            start = Arrays.copyOf(start, cap);
            ack = Arrays.copyOf(ack, cap);
            inbox = Arrays.copyOf(inbox, cap);
            seq = Arrays.copyOf(seq, cap);
        }
        start[n] = t0;
        ack[n] = t1;
        inbox[n] = target;
        seq[n] = s;
        n++;
    }

    void error(String kind) {
        errors++;
        errorKinds.merge(kind, 1L, Long::sum);
    }
}
