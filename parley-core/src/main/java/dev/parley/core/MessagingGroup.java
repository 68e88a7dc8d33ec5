package dev.parley.core;

import java.time.Instant;
import java.util.Optional;

/**
 * One chat room or direct conversation on one platform ({@code platform} + its own id for the
 * room, {@code room}): who may speak in it ({@code unknownSenders}, answered by
 * {@code approver}), and, once an admin denied wiring it, when ({@code deniedAt}: not asked
 * again). Agents are wired to it by {@link Wiring}s.
 */
public record MessagingGroup(String id, String platform, String room, Engagement.RoomKind kind, String name,
                             Engagement.UnknownSenders unknownSenders, Optional<NodeId> approver,
                             Optional<Instant> deniedAt, Instant createdAt) {
    /** Longest platform or room id, and room name, accepted. */
    public static final int MAX_ID = 200;

    public MessagingGroup {
        requireText("platform", platform);
        requireText("room", room);
        if (name.length() > MAX_ID) {
            name = name.substring(0, MAX_ID);
        }
    }

    static void requireText(String field, String value) {
        if (value.isBlank() || value.length() > MAX_ID || value.chars().anyMatch(Character::isISOControl)) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, field + " must be 1 to " + MAX_ID
                    + " characters without control characters");
        }
    }

    /**
     * A wiring of the group to an agent node: when a message engages it ({@code mode}, with
     * {@code pattern} for {@code pattern} mode), whose messages count ({@code scope}), and what
     * becomes of the others ({@code ignored}).
     */
    public record Wiring(String groupId, NodeId agent, Engagement.Mode mode, Optional<String> pattern,
                         Engagement.SenderScope scope, Engagement.Ignored ignored) {
        /** Longest engage pattern accepted. */
        public static final int MAX_PATTERN = 500;

        public Wiring {
            if (mode == Engagement.Mode.PATTERN && pattern.isEmpty()) {
                throw new ParleyException(ErrorCode.INVALID_REQUEST, "engagePattern is required with engageMode"
                        + " pattern ('.' engages with every message)");
            }
            if (mode != Engagement.Mode.PATTERN && pattern.isPresent()) {
                throw new ParleyException(ErrorCode.INVALID_REQUEST, "engagePattern goes with engageMode pattern only");
            }
            if (pattern.isPresent() && (pattern.get().isEmpty() || pattern.get().length() > MAX_PATTERN)) {
                throw new ParleyException(ErrorCode.INVALID_REQUEST, "engagePattern must be 1 to " + MAX_PATTERN
                        + " characters");
            }
        }
    }
}
