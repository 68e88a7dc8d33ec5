package dev.parley.core;

/** Something that happens to an envelope after it is accepted. */
public sealed interface DeliveryEvent {

    /** What the timeline says about this event. */
    String detail();

    /** Written to a stream, handed to a poller, or pushed to a webhook. */
    record Delivered(String via) implements DeliveryEvent {
        public String detail() {
            return via;
        }
    }

    /** The receiver claimed it: it is working on it (the agent protocol). */
    record Claimed(String by) implements DeliveryEvent {
        public String detail() {
            return "claimed by " + by;
        }
    }

    /** The sweep took a claim back: the envelope waits to be claimed again. */
    record Released(String why) implements DeliveryEvent {
        public String detail() {
            return why;
        }
    }

    /** The receiver acked that its turn finished. */
    record Processed() implements DeliveryEvent {
        public String detail() {
            return "processed ack";
        }
    }

    /** The receiver acked that it could not process the envelope. */
    record Failed(String reason) implements DeliveryEvent {
        /** A reason is a sentence, not a payload: it goes into timelines, audit and other gateways' records. */
        public static final int MAX_REASON = 2_000;

        public Failed {
            if (reason.length() > MAX_REASON) {
                throw new ParleyException(ErrorCode.INVALID_REQUEST, "a failure's reason is at most " + MAX_REASON
                        + " characters; put details in a reply");
            }
        }

        public String detail() {
            return reason.isEmpty() ? "failed ack" : "failed ack: " + reason;
        }
    }

    /** The receiver replied (a reply envelope with this envelope's id as corrId). */
    record Replied(String replyId) implements DeliveryEvent {
        public String detail() {
            return "reply " + replyId;
        }
    }

    /** A push attempt failed and another is scheduled. */
    record PushFailed(int attempt, String why, long retryInMs) implements DeliveryEvent {
        public String detail() {
            return "attempt " + attempt + " failed: " + why + "; next attempt in " + retryInMs + " ms";
        }
    }

    /** The last attempt failed: the envelope goes to the dead-letter queue. */
    record DeadLettered(String reason) implements DeliveryEvent {
        public String detail() {
            return reason;
        }
    }

    /** No reply or processed ack came within the sender's deadline. */
    record SlaMissed(long withinMs) implements DeliveryEvent {
        public String detail() {
            return "no reply or processed ack within " + withinMs + " ms";
        }
    }

    /** An operator sends a dead letter through a fresh attempt cycle. */
    record Redriven(String by) implements DeliveryEvent {
        public String detail() {
            return "redriven by " + by;
        }
    }
}
