package dev.parley.core;

import java.util.Optional;

/**
 * The store's answer to an append: the committed envelope, or the first one with the same
 * messageId. {@code relayed} is set when the target is owned by another gateway: the
 * envelope is committed here with its mark to publish, and its inbox seq is the owner's to
 * assign.
 */
public record Appended(Envelope envelope, boolean duplicate, Optional<Relayed> relayed) {

    public Appended(Envelope envelope, boolean duplicate) {
        this(envelope, duplicate, Optional.empty());
    }

    /** Where an envelope for another gateway's node goes, and whether the relay is spooling (NATS out of reach). */
    public record Relayed(String gateway, boolean spooled) {
    }

    /** This answer with the relay's current mode. */
    Appended spooled(boolean spooling) {
        return relayed.map(r -> new Appended(envelope, duplicate, Optional.of(new Relayed(r.gateway(), spooling))))
                .orElse(this);
    }
}
