package dev.parley.core;

import java.time.Duration;

/**
 * How long the sending gateway waits for the gateway that owns an envelope's target to
 * confirm it ({@code accepted by <gw>}) before publishing it again, and how many
 * publications it makes before it dead-letters the envelope with a notice to its sender.
 * Publication {@code k} waits {@code window × 2^(k-1)}, counted from when the outbox stream
 * acknowledged it (time spent spooling while NATS is away does not count). With the defaults,
 * 30 s and 5 publications, an owner that stays silent is given up on after about 15 minutes.
 */
public record OwnerAckPolicy(Duration window, int publications) {
    public static final OwnerAckPolicy DEFAULT = new OwnerAckPolicy(Duration.ofSeconds(30), 5);

    public OwnerAckPolicy {
        if (window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("the owner-ack window must be positive, not " + window);
        }
        if (publications < 1) {
            throw new IllegalArgumentException("an envelope is published at least once, not " + publications + " times");
        }
    }
}
