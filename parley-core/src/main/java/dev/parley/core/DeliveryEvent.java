package dev.parley.core;

/** Something that happens to an envelope after it is accepted. */
public sealed interface DeliveryEvent {
    /** Written to a stream or handed to a poller. */
    record Delivered() implements DeliveryEvent {
    }

    /** The receiver acked that its turn finished. */
    record Processed() implements DeliveryEvent {
    }

    /** The receiver acked that it could not process the envelope. */
    record Failed(String reason) implements DeliveryEvent {
    }

    /** The receiver replied (a reply envelope with this envelope's id as corrId). */
    record Replied(String replyId) implements DeliveryEvent {
    }
}
