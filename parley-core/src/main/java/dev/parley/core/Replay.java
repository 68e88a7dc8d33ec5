package dev.parley.core;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * What a stream opened without a cursor sends before it goes live ({@code ?replay=}).
 * {@link #UNDELIVERED} is at most once for a reader that goes away with frames in flight
 * (they were written, so they count as delivered); {@link #UNACKED} sends those again until
 * they are acked, replied to or dead-lettered.
 */
public enum Replay {
    /** The envelopes never delivered (the default). */
    UNDELIVERED,
    /** Every envelope not yet settled, delivered or not. */
    UNACKED;

    /** The next page of envelopes to replay after {@code after}. */
    List<Envelope> page(EventStore store, NodeId node, long after, int limit) {
        return switch (this) {
            case UNDELIVERED -> store.undeliveredAfter(node, after, limit);
            case UNACKED -> store.unackedAfter(node, after, limit);
        };
    }

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Replay parse(String raw) {
        String value = raw.strip();
        return Arrays.stream(values()).filter(r -> r.wire().equals(value)).findFirst()
                .orElseThrow(() -> new ParleyException(ErrorCode.INVALID_REPLAY, "replay must be one of "
                        + Arrays.stream(values()).map(Replay::wire).collect(Collectors.joining(", "))
                        + ", not '" + raw + "'"));
    }
}
