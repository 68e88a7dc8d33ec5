package dev.parley.core;

import java.time.Duration;
import java.util.Optional;

/**
 * How a node is reached beyond its stream: an optional webhook, the retry schedule for
 * pushes, and how long a delivered envelope may stay unacked before it is delivered again.
 */
public record DeliveryPolicy(Optional<Webhook> webhook, RetryPolicy retry, Optional<Duration> redeliverAfter) {
    public static final DeliveryPolicy STREAM_ONLY = new DeliveryPolicy(Optional.empty(), RetryPolicy.DEFAULT,
            Optional.empty());

    public DeliveryPolicy {
        if (redeliverAfter.isPresent() && (redeliverAfter.get().toMillis() < 100
                || redeliverAfter.get().toMillis() > 86_400_000L)) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "redeliverAfterMs must be between 100 and 86400000");
        }
    }
}
