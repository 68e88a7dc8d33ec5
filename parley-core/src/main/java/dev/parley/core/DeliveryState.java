package dev.parley.core;

import java.util.Locale;

/** Where an envelope stands on its way to the receiver. */
public enum DeliveryState {
    ACCEPTED, DELIVERED, /** Claimed by its receiver, who is working on it (the agent protocol). */ PROCESSING,
    PROCESSED, REPLIED, FAILED, RETRY_PENDING, DEAD_LETTERED, INCIDENT;

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static DeliveryState parse(String wire) {
        return valueOf(wire.toUpperCase(Locale.ROOT));
    }

    /**
     * The state machine: what {@code event} does to an envelope in this state. Every pair
     * is decided here, so an illegal move cannot be written anywhere else.
     */
    public Transition on(DeliveryEvent event) {
        return switch (event) {
            case DeliveryEvent.Delivered d -> switch (this) {
                case ACCEPTED, RETRY_PENDING -> move(DELIVERED);
                case DELIVERED, PROCESSING, PROCESSED, REPLIED, FAILED, DEAD_LETTERED, INCIDENT -> stay();
            };
            case DeliveryEvent.Claimed c -> switch (this) {
                case ACCEPTED, DELIVERED, RETRY_PENDING, INCIDENT -> move(PROCESSING);
                case PROCESSING -> stay();
                case PROCESSED, REPLIED, FAILED, DEAD_LETTERED -> refuse("cannot be claimed");
            };
            case DeliveryEvent.Released r -> switch (this) {
                case PROCESSING -> move(DELIVERED);
                case ACCEPTED, DELIVERED, RETRY_PENDING, INCIDENT, PROCESSED, REPLIED, FAILED, DEAD_LETTERED -> stay();
            };
            case DeliveryEvent.Processed p -> switch (this) {
                case ACCEPTED, DELIVERED, PROCESSING, RETRY_PENDING, INCIDENT -> move(PROCESSED);
                case PROCESSED, REPLIED -> stay();
                case FAILED, DEAD_LETTERED -> refuse("cannot mark processed");
            };
            case DeliveryEvent.Failed f -> switch (this) {
                case ACCEPTED, DELIVERED, PROCESSING, RETRY_PENDING, INCIDENT -> move(FAILED);
                case FAILED -> stay();
                case PROCESSED, REPLIED, DEAD_LETTERED -> refuse("cannot mark failed");
            };
            case DeliveryEvent.Replied r -> switch (this) {
                case ACCEPTED, DELIVERED, PROCESSING, PROCESSED, RETRY_PENDING, INCIDENT -> move(REPLIED);
                case REPLIED -> stay();
                case FAILED, DEAD_LETTERED -> refuse("cannot be replied to");
            };
            case DeliveryEvent.PushFailed f -> switch (this) {
                case ACCEPTED, DELIVERED, RETRY_PENDING -> move(RETRY_PENDING);
                case PROCESSING, PROCESSED, REPLIED, FAILED, DEAD_LETTERED, INCIDENT -> stay();
            };
            case DeliveryEvent.DeadLettered d -> switch (this) {
                case ACCEPTED, DELIVERED, PROCESSING, RETRY_PENDING, INCIDENT -> move(DEAD_LETTERED);
                case DEAD_LETTERED -> stay();
                case PROCESSED, REPLIED, FAILED -> refuse("cannot be dead-lettered");
            };
            case DeliveryEvent.SlaMissed m -> switch (this) {
                case ACCEPTED, DELIVERED, PROCESSING, RETRY_PENDING -> move(INCIDENT);
                case PROCESSED, REPLIED, FAILED, DEAD_LETTERED, INCIDENT -> stay();
            };
            case DeliveryEvent.Redriven r -> switch (this) {
                case DEAD_LETTERED -> move(ACCEPTED);
                case ACCEPTED, DELIVERED, PROCESSING, PROCESSED, REPLIED, FAILED, RETRY_PENDING, INCIDENT ->
                        refuse("is not a dead letter");
            };
        };
    }

    private Transition move(DeliveryState next) {
        return next == this ? stay() : new Transition.Moved(this, next);
    }

    private Transition stay() {
        return new Transition.Unchanged(this);
    }

    private Transition refuse(String what) {
        return new Transition.Refused(this, "an envelope in state " + wire() + " " + what);
    }
}
