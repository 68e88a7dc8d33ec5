package dev.parley.core;

/** The result of applying a {@link DeliveryEvent} to a {@link DeliveryState}. */
public sealed interface Transition {
    DeliveryState from();

    /** The envelope moves to {@code to}. */
    record Moved(DeliveryState from, DeliveryState to) implements Transition {
    }

    /** The event is valid but changes nothing (a repeated ack, a replayed delivery). */
    record Unchanged(DeliveryState from) implements Transition {
    }

    /** The state machine forbids the move. */
    record Refused(DeliveryState from, String reason) implements Transition {
    }
}
