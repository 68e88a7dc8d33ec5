package dev.parley.core;


/**
 * One record this hub owes another gateway (the transactional outbox), in the order it
 * was committed: {@code pos}. Cleared once the gateway's outbox stream acknowledged it.
 */
public sealed interface Outgoing {
    long pos();

    /** The gateway it is routed to. */
    String gateway();

    /** An envelope for a node {@code gateway} owns. */
    record Mail(long pos, String gateway, Envelope envelope) implements Outgoing {
        /**
         * The id that makes its publication idempotent (the stream's duplicate window; the receiver
         * dedupes by envelope id). It names the gateway too: published again to a new owner after
         * the node moved, it must not be taken for the publication to the old one.
         */
        public String dedupeId() {
            return envelope.id() + "@" + gateway;
        }
    }

    /** A step of an envelope sent from a node {@code gateway} owns, for the sender's timeline. */
    record Ack(long pos, String gateway, RemoteStep step) implements Outgoing {
    }
}
