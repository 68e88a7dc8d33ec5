package dev.parley.bench;

import dev.parley.bench.http.HttpConnection;
import java.nio.charset.StandardCharsets;

/**
 * What a send's acknowledgement and its arrival at the reader are matched by. On one hub the
 * 202 carries the inbox {@code seq} that the SSE frame repeats as its {@code id:}; a
 * cross-gateway 202 has {@code "seq": null} (the owner gateway assigns it), so there the
 * envelope id, first field of both the 202 and the frame's data, is the match.
 */
enum ArrivalKey {
    /** The inbox seq: the 202's {@code seq} and the frame's {@code id:} (no frame data needed). */
    SEQ("seq") {
        @Override
        long ofAck(HttpConnection answered) {
            return answered.bodyLongField(SEQ_FIELD);
        }

        @Override
        int ofBatchAck(HttpConnection answered, long[] keys) {
            return answered.bodyLongFields(SEQ_FIELD, keys);
        }

        @Override
        long ofEvent(long sseId, byte[] data, int dataLength) {
            return sseId;
        }
    },
    /** The envelope id (a UUID) folded into 63 bits: the 202's and the frame data's first {@code "id"}. */
    ENVELOPE_ID("envelope id") {
        @Override
        long ofAck(HttpConnection answered) {
            return uuidKey(answered.body(), answered.bodyLength());
        }

        @Override
        int ofBatchAck(HttpConnection answered, long[] keys) {
            throw new UnsupportedOperationException("batches are measured on one hub, matched by seq");
        }

        @Override
        long ofEvent(long sseId, byte[] data, int dataLength) {
            return uuidKey(data, dataLength);
        }
    };

    private static final byte[] SEQ_FIELD = "\"seq\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ID_FIELD = "\"id\":\"".getBytes(StandardCharsets.US_ASCII);

    /** What the key is, for error kinds ("202 without seq"). */
    final String label;

    ArrivalKey(String label) {
        this.label = label;
    }

    /** The key of the send {@code answered} acknowledged with a 202, or -1 when the body has none. */
    abstract long ofAck(HttpConnection answered);

    /** The keys of a batch's answer, one per accepted message in order, into {@code keys}; returns how many. */
    abstract int ofBatchAck(HttpConnection answered, long[] keys);

    /** The key of an SSE frame ({@code sseId} is its {@code id:} or -1), or -1 when it has none. */
    abstract long ofEvent(long sseId, byte[] data, int dataLength);

    /** Whether {@link #ofEvent} reads the frame's data (the stream must keep it). */
    boolean needsData() {
        return this == ENVELOPE_ID;
    }

    /**
     * The first {@code "id":"<uuid>"} of {@code json}, its 128 bits folded (msb xor lsb) into a
     * non-negative long, or -1. UUIDv7 ids carry 62 random bits, so two envelopes of one inbox
     * share a key with odds far below one in a million for a bench's counts.
     */
    static long uuidKey(byte[] json, int length) {
        int at = indexOf(json, length, ID_FIELD);
        if (at < 0) {
            return -1;
        }
        long hi = 0;
        long lo = 0;
        int digits = 0;
        for (int k = at + ID_FIELD.length; k < length && json[k] != '"'; k++) {
            if (json[k] == '-') {
                continue;
            }
            int d = Character.digit(json[k], 16);
            if (d < 0 || digits == 32) {
                return -1;
            }
            if (digits < 16) {
                hi = hi << 4 | d;
            } else {
                lo = lo << 4 | d;
            }
            digits++;
        }
        return digits == 32 ? (hi ^ lo) & Long.MAX_VALUE : -1;
    }

    /** Where {@code needle} first starts in the first {@code length} bytes of {@code s}, or -1. */
    static int indexOf(byte[] s, int length, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (s[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
