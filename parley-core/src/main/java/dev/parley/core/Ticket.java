package dev.parley.core;

import java.time.Instant;
import java.util.Optional;

/**
 * What a ticket asserts, signed by the hub: {@code subject} may be created from invite
 * {@code inviteId} until {@code expiresAt}. {@code jti} makes it single use; {@code publicKey}
 * (base64url of a raw Ed25519 key) is the key the exchange proved, stored with the node.
 */
public record Ticket(String jti, NodeId subject, String inviteId, String sessionId, Optional<String> publicKey,
                     Instant issuedAt, Instant expiresAt) {
}
