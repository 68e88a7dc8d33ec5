package dev.parley.core;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A node's request to send. {@code claimedFrom} is a {@code from} found in the request
 * body, which must match the caller. With {@code replyWithin}, the sender is told by an
 * {@code incident} envelope when no reply or processed ack comes in that time.
 */
public record SendRequest(NodeId to, String kind, Payload payload, Optional<String> claimedFrom,
                          Optional<Duration> replyWithin) {
    public static final String DEFAULT_KIND = "message";
    private static final Pattern KIND = Pattern.compile("^[a-z][a-z0-9_.-]{0,63}$");
    /** Kinds the hub itself emits; a node cannot forge them with a plain send. */
    private static final Set<String> RESERVED = Set.of("reply", "event", "broadcast", "dead_letter", "incident",
            "task", "task_accept", "task_update", "task_complete", "task_failed", "task_canceled");

    public SendRequest {
        if (!KIND.matcher(kind).matches()) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "kind must match ^[a-z][a-z0-9_.-]{0,63}$");
        }
        if (replyWithin.isPresent() && (replyWithin.get().toMillis() < 1 || replyWithin.get().toMillis() > 604_800_000L)) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "replyWithinMs must be between 1 and 604800000 (7 days)");
        }
        if (RESERVED.contains(kind)) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "kind " + kind + " is emitted by the hub and cannot be sent");
        }
    }
}
