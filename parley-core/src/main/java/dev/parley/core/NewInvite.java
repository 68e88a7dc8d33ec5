package dev.parley.core;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/** A request to issue an invite: for which node id (or any), of which kind, under which parent, for how long. */
public record NewInvite(Optional<NodeId> nodeId, NodeKind kind, Optional<NodeId> parent, Map<String, String> labels,
                        Duration ttl) {
    public static final Duration DEFAULT_TTL = Duration.ofMinutes(15);
    public static final Duration MIN_TTL = Duration.ofSeconds(10);
    public static final Duration MAX_TTL = Duration.ofDays(7);

    public NewInvite {
        labels = Map.copyOf(labels);
        if (ttl.compareTo(MIN_TTL) < 0 || ttl.compareTo(MAX_TTL) > 0) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "ttlSeconds must be between " + MIN_TTL.toSeconds()
                    + " and " + MAX_TTL.toSeconds());
        }
    }
}
