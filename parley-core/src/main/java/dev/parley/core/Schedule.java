package dev.parley.core;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Locale;
import java.util.Optional;

/**
 * A send that fires later, once or on a cron expression: the sender, the recipient and the
 * content of the send that created it, when it fires ({@code timing}, read in {@code zone}),
 * and what became of it. {@code nextAt} is the next firing (UTC), empty once it ended;
 * {@code skipped} counts firings refused when they came, {@code detail} says why the last
 * was, or why the schedule ended.
 */
public record Schedule(String id, NodeId from, NodeId to, String kind, Payload payload, Optional<Duration> replyWithin,
                       Timing timing, ZoneId zone, Instant createdAt, State state, Optional<Instant> nextAt, int fired,
                       int skipped, Optional<Instant> lastFiredAt, Optional<Instant> endedAt, Optional<String> detail) {

    /** active → done (a one-shot fired), failed (its firing was refused, or its sender or recipient is gone), canceled. */
    public enum State {
        ACTIVE, DONE, FAILED, CANCELED;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static State parse(String wire) {
            for (State state : values()) {
                if (state.wire().equals(wire)) {
                    return state;
                }
            }
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "state must be one of active, done, failed, canceled");
        }
    }
}
