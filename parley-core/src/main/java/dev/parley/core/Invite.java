package dev.parley.core;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * A single-use admission: whoever holds its token may exchange it for a ticket and redeem
 * that ticket for a node of {@code kind} under {@code parent}, until {@code expiresAt}.
 * {@code nodeId}, when present, binds the invite to that one node id. {@code creator} is
 * the node that issued it, empty for the admin; it is the principal the node is created
 * as, so that lineage and depth policy apply to admissions exactly as to direct creates.
 */
public record Invite(String id, Optional<NodeId> nodeId, NodeKind kind, Optional<NodeId> parent,
                     Map<String, String> labels, Optional<NodeId> creator, Instant createdAt, Instant expiresAt,
                     Optional<Instant> redeemedAt) {
    public Invite {
        labels = Map.copyOf(labels);
    }

    /** The principal that issued the invite. */
    public Principal inviter() {
        return creator.<Principal>map(Principal.Caller::new).orElseGet(Principal.Admin::new);
    }

    public boolean redeemed() {
        return redeemedAt.isPresent();
    }
}
