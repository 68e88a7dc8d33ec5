package dev.parley.core;

import java.time.Instant;
import java.util.Optional;

/**
 * A single-use admission of a new gateway into the federation: whoever holds its token may
 * exchange it, once and before {@code expiresAt}, for the NATS credentials of gateway
 * {@code gateway} (and of no other id).
 */
public record GatewayInvite(String id, String gateway, Instant createdAt, Instant expiresAt,
                            Optional<Instant> redeemedAt) {
}
