package dev.parley.core;

import java.time.Instant;
import java.util.Optional;

/** A one-directional permission for {@code from} to reach {@code to} (a node or a topic's subscribers). */
public record Grant(String id, NodeId from, GrantTarget to, Optional<Instant> expiresAt, String note,
                    Instant createdAt) {

    /** Whether the grant counts at {@code now}: expired grants do not. */
    public boolean activeAt(Instant now) {
        return expiresAt.map(now::isBefore).orElse(true);
    }
}
