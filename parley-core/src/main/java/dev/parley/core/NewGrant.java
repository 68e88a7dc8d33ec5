package dev.parley.core;

import java.time.Instant;
import java.util.Optional;

/** A request to let {@code from} reach {@code to}. */
public record NewGrant(NodeId from, GrantTarget to, Optional<Instant> expiresAt, String note) {
}
