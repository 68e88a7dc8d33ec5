package dev.parley.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The durable side of the hub. Every write method returns only after its transaction is
 * committed and synced, except {@link #markDelivered}, which may be batched later.
 * Implementations serialize writes; reads never wait for the writer.
 */
public interface EventStore extends AutoCloseable {

    GraphSnapshot loadGraph();

    void createNode(Node node, String tokenHash, AuditEntry audit);

    void deleteNode(NodeId id, Instant at, AuditEntry audit);

    void replaceToken(NodeId id, String tokenHash, AuditEntry audit);

    void createGrant(Grant grant, AuditEntry audit);

    void deleteGrant(String grantId, AuditEntry audit);

    void audit(AuditEntry entry);

    /**
     * Appends {@code draft} to its target's inbox, assigning the next seq, unless the sender
     * already sent the same messageId (then the first envelope comes back as a duplicate).
     * With {@code answers}, that envelope moves to {@link DeliveryState#REPLIED} in the
     * same transaction; if the state machine refuses, nothing is written and
     * {@link ErrorCode#INVALID_TRANSITION} is thrown. With {@code replyBy}, a reply
     * deadline is scheduled with it.
     */
    Appended append(Envelope draft, AuditEntry audit, Optional<String> answers, Optional<Instant> replyBy);

    /**
     * Many sends in one transaction, each as {@link #append} does it without {@code answers}
     * (a messageId the sender used before, in an earlier commit or earlier in this list,
     * answers the first envelope as a duplicate), with the audit entries of the batch's
     * refusals. Answers in the order of {@code sends}.
     */
    List<Appended> appendBatch(List<Send> sends, List<AuditEntry> refusals);

    /** One send of a batch: the envelope, the audit entry of its allowance, its reply deadline if any. */
    record Send(Envelope draft, AuditEntry audit, Optional<Instant> replyBy) {
    }

    /** Applies {@code event} to an envelope atomically; refused moves write nothing. */
    Transition apply(String envelopeId, DeliveryEvent event, Instant at, AuditEntry audit);

    /**
     * Records that these envelopes were written to a stream. For those delivered now for the
     * first time (or again after a redelivery), an ack check is scheduled when
     * {@code redeliverAfter} is set. May return before the marks are committed: marks of many
     * streams are gathered into one write. {@code delivered} are one inbox's envelopes; an inbox
     * has a bounded number of marks waiting for their commit, and past it this waits until the
     * writer commits some (a catch-up faster than the writer, a full disk), running
     * {@code whileWaiting} on the caller's thread after each second of it (a stream's heartbeat);
     * what that throws ends the wait and comes out of this, the marks kept all the same.
     */
    void markDelivered(List<Envelope> delivered, Instant at, Optional<Duration> redeliverAfter, Runnable whileWaiting);

    /**
     * {@link #markDelivered}, returning only once the marks are committed: for a poller, whose
     * next read (an envelope's state) must already say {@code delivered}. When they cannot be
     * committed (a full disk, an I/O error) they wait as a stream's do, to be committed once
     * writes work again, while the inbox has room for them; without room this throws the
     * commit's failure ({@link ErrorCode#STORAGE_FULL}, {@link ErrorCode#INTERNAL}).
     */
    void markDeliveredNow(List<Envelope> delivered, Instant at, Optional<Duration> redeliverAfter);

    Optional<MessageRecord> message(String id);

    /**
     * The most text and data, in characters, that a page of an inbox ({@link #inboxAfter},
     * {@link #undeliveredAfter}, {@link #unackedAfter}) holds before its last envelope: a page
     * ends at {@code limit} envelopes or with the envelope that reaches this, whichever comes
     * first, so a page of large envelopes is a few MiB in memory, not {@code limit} times the
     * body limit. A page shorter than {@code limit} is therefore not the end of the inbox; an
     * empty one is.
     */
    int PAGE_CHARS = 1 << 20;

    /** Envelopes of {@code node}'s inbox with seq greater than {@code after}, in order; a page, as {@link #PAGE_CHARS} says. */
    List<Envelope> inboxAfter(NodeId node, long after, int limit);

    /** Envelopes never delivered, with seq greater than {@code after}, in order; a page, as {@link #PAGE_CHARS} says. */
    List<Envelope> undeliveredAfter(NodeId node, long after, int limit);

    /**
     * Envelopes not yet settled — neither acked (processed or failed), replied to nor
     * dead-lettered, whether delivered or not — with seq greater than {@code after}, in order;
     * a page, as {@link #PAGE_CHARS} says.
     */
    List<Envelope> unackedAfter(NodeId node, long after, int limit);

    /** The highest seq committed to {@code node}'s inbox, 0 when empty. */
    long headSeq(NodeId node);

    /** {@code node}'s inbox at a glance: head seq, envelopes never delivered, the newest delivered one's time. */
    InboxSummary inboxSummary(NodeId node);

    /**
     * The envelopes in {@code node}'s inbox of one chat conversation (meta {@code chat.group} =
     * {@code group}) up to seq {@code upTo}, newest first, at most {@code limit}: context-only
     * ones included, settled or not.
     */
    List<Envelope> conversation(NodeId node, String group, long upTo, int limit);

    List<AuditRecord> audit(AuditQuery query);

    /**
     * Deletes up to {@code max} audit entries written before {@code cutoff}, oldest first, in
     * one transaction; returns how many went. Retention calls it until it returns less than
     * {@code max}.
     */
    int pruneAudit(Instant cutoff, int max);

    /** Envelopes committed but not yet delivered, across all inboxes. */
    long backlog();

    /**
     * Whether writes go through. After a failed commit the store retries by itself and
     * comes back to {@link StoreHealth#OK} with the first commit that succeeds.
     */
    StoreHealth health();

    @Override
    void close();
}
