package dev.parley.core;

import java.time.Instant;
import java.util.Optional;

/** What a redeem consumes besides creating the node: the invite, the ticket's id, and the key it binds. */
public record Redemption(String inviteId, String jti, Instant ticketExpiresAt, Optional<String> publicKey,
                         Instant at) {
}
