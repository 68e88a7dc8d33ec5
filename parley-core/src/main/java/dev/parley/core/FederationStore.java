package dev.parley.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The durable side of federation: mirrors of other gateways' nodes and grants, the
 * transactional outbox, and per-source ingest cursors. An inbound record is committed
 * together with its source's cursor, so a restart resumes every source where it stopped.
 */
public interface FederationStore {

    /** Mirrors a node {@code gateway} owns; a node already known is left as it is. */
    void mirrorNode(Node node, String gateway);

    /**
     * A node changed owner, committed with its audit entry. Taken over by this gateway
     * ({@code to} empty): what was owed to its old owner is no longer owed (its inbox here is now
     * its inbox). Moved away from this gateway: its token stops working here, and each envelope
     * in its inbox not yet delivered goes to the new owner when this gateway's node sent it,
     * else is dead-lettered here with {@code reason} (its sender's gateway is owed that step). Moved between two other gateways: what is still owed for it goes to
     * the new owner, and envelopes the old one has not confirmed are published there at once.
     */
    void moveNode(NodeId node, Optional<String> to, String reason, AuditEntry audit);

    /** Mirrors a grant made on any gateway; a grant already known is left as it is. */
    void mirrorGrant(Grant grant);

    /** Drops a grant withdrawn on any gateway; returns whether it was known. */
    boolean dropGrant(String grantId);

    /** Mirrors a subscription of another gateway's node; one already known is left as it is. */
    void mirrorSubscription(Subscription subscription);

    /** Drops the mirrored subscription of another gateway's node. */
    void dropSubscription(TopicName topic, NodeId node);

    /** Up to {@code limit} records owed to other gateways after position {@code after}, in commit order. */
    List<Outgoing> owed(long after, int limit);

    /**
     * Clears the marks of the records through {@code pos}, which the outbox stream
     * acknowledged at {@code at}; each envelope among them whose owner has not confirmed it
     * yet gets its {@link DeliveryStore.Purpose#OWNER_ACK} check, due after {@code window}
     * doubled for each earlier publication.
     */
    void relayed(long pos, Instant at, Duration window);

    /**
     * Marks an envelope whose owner did not confirm it for publication {@code publication},
     * with the same {@code Nats-Msg-Id}: the stream drops it within its duplicate window, the
     * owner's dedupe by envelope id after it. Its check waits until the stream acknowledges it.
     * Does nothing, and answers false, unless the check of publication {@code publication - 1}
     * is still pending: an owner that confirmed meanwhile is not published to again.
     */
    boolean republish(String envelopeId, int publication);

    /**
     * Dead-letters an envelope its owner never confirmed after {@code publications}, with the
     * notice to its sender, in the transaction that ends its check; does nothing, and answers
     * false, unless that check is still pending (the owner confirmed meanwhile).
     */
    boolean giveUp(String envelopeId, int publications, String reason, Instant at, Optional<Envelope> notice);

    /** How many records are owed (the spool depth). */
    long owedCount();

    /** The last stream sequence taken in from each source gateway. */
    Map<String, Long> cursors();

    /** One inbound record, decided: what committing it writes besides the cursor. */
    sealed interface Inbound {
        /** Where the record stands in its source's outbox stream. */
        long streamSeq();

        /**
         * An envelope for a local node: appended to its inbox with the next seq, its sender's
         * gateway owed an {@code accepted} step, audited. An envelope id already here is not
         * appended again. An envelope about a task also carries what it does to the copy here.
         */
        record Mail(long streamSeq, Envelope envelope, AuditEntry audit, Optional<TaskCopy> task)
                implements Inbound {
        }

        /** A step reported by the owner of the target, folded into the timeline of an envelope sent from here. */
        record Step(long streamSeq, RemoteStep step) implements Inbound {
        }

        /**
         * An envelope refused here although its source owns its sender: audited, and the sender's
         * gateway owed a {@code failed} step with the reason.
         */
        record Refused(long streamSeq, Envelope envelope, AuditEntry audit) implements Inbound {
        }

        /** A record refused or unreadable: only its audit entry is written. */
        record Skip(long streamSeq, AuditEntry audit) implements Inbound {
        }
    }

    /**
     * Commits a batch of records from {@code source}, in order, in one transaction that also
     * moves the source's cursor to the last one's stream seq (a cursor never moves back). All
     * or nothing: when one record fails, none is committed. Answers, per record, whether it
     * changed anything: an envelope already here or a step already folded did not.
     */
    List<Boolean> take(String source, List<Inbound> batch);
}
