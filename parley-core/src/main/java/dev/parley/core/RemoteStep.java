package dev.parley.core;

import java.time.Instant;
import java.util.Optional;

/**
 * A step the owner of an envelope's target reports back to the sender's gateway: accepted
 * (committed to the target's inbox there), delivered, claimed (processing), processed, failed, replied, or
 * dead-lettered.
 */
public record RemoteStep(String ref, DeliveryState state, Instant at, String detail) {

    /**
     * The event this step is to the sender's copy of the envelope, for the state machine to
     * judge; empty for {@code accepted} (a timeline entry only: the copy is already
     * accepted) and for {@code delivered} (recorded as the first delivery).
     */
    public Optional<DeliveryEvent> event() {
        return switch (state) {
            case PROCESSED -> Optional.of(new DeliveryEvent.Processed());
            case FAILED -> Optional.of(new DeliveryEvent.Failed(detail));
            case REPLIED -> Optional.of(new DeliveryEvent.Replied(detail));
            case DEAD_LETTERED -> Optional.of(new DeliveryEvent.DeadLettered(detail));
            case ACCEPTED, DELIVERED, PROCESSING, RETRY_PENDING, INCIDENT -> Optional.empty();
        };
    }
}
