package dev.parley.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The durable side of delivery: per-node delivery policies, the schedule of work owed to
 * envelopes (pushes, redeliveries, reply deadlines) and the dead-letter queue. The
 * schedule lives in the store, so a restarted hub resumes it where it stood.
 */
public interface DeliveryStore {

    /** What the schedule owes an envelope. */
    enum Purpose {
        /** A webhook attempt. */
        PUSH,
        /** A check that a delivered envelope was acked in time. */
        REDELIVER,
        /** A claim taken back by the sweep: the envelope is delivered again once its backoff is over. */
        RELEASE,
        /** A check that a request was replied to or processed in time. */
        DEADLINE,
        /**
         * A check that the gateway owning the target of a cross-gateway envelope confirmed it
         * in time ({@link OwnerAckPolicy}); set when the outbox stream acknowledges the
         * publication, cleared when the owner's {@code accepted} step is folded in.
         */
        OWNER_ACK
    }

    /** One piece of scheduled work that has come due. */
    record Due(Envelope envelope, DeliveryState state, Purpose purpose, int attempt, Instant dueAt) {
    }

    Map<NodeId, DeliveryPolicy> policies();

    void putPolicy(NodeId node, DeliveryPolicy policy, AuditEntry audit);

    /** Removes a policy (the node falls back to stream-only delivery). */
    void removePolicy(NodeId node, AuditEntry audit);

    /** A node's envelopes not yet delivered that wait for a webhook attempt, and when the next attempt is due. */
    record PushesWaiting(long count, Optional<Instant> nextAt) {
    }

    /** What waits for {@code node}'s webhook: counted over its undelivered envelopes, so it costs its backlog. */
    PushesWaiting pushesWaiting(NodeId node);

    /** Where an entry stands in the schedule's order: due time, then envelope id, then purpose. */
    record DueKey(Instant dueAt, String envelopeId, Purpose purpose) {
    }

    /**
     * A page of due work: the entries that could be read (one whose envelope this build cannot
     * read is left out, and logged), how many entries it read (those left out included), and
     * the key to read on from, empty when the page reached the end of what is due. Like an
     * inbox page it ends at its limit or with the entry whose envelope brings its text and data
     * to {@link EventStore#PAGE_CHARS}: a page of large envelopes is a few MiB in memory, not
     * {@code limit} times the body limit.
     */
    record DuePage(List<Due> items, int read, Optional<DueKey> next) {
    }

    /**
     * Up to {@code limit} entries of scheduled work due at or before {@code now}, in the
     * schedule's order (oldest first); with {@code after}, only what comes after that key.
     * Paging with {@link DuePage#next} reaches every due entry, however many of the first are
     * still being worked on, and past any that cannot be read.
     */
    DuePage due(Instant now, Optional<DueKey> after, int limit);

    /**
     * A node's due webhook attempts, and whether more may be due than were read (the read
     * reached its limit, counting entries that could not be read, or {@link EventStore#PAGE_CHARS}).
     */
    record DuePushes(List<Due> items, boolean more) {
    }

    /**
     * Up to {@code limit} of {@code node}'s webhook attempts due at or before {@code now}, its
     * oldest envelopes first (entries that cannot be read left out, as in {@link #due}): what
     * its webhook takes next once the pushes under way leave room.
     */
    DuePushes duePushes(NodeId node, Instant now, int limit);

    /** A push attempt that reached its webhook; an ack check follows when {@code redeliverAfter} is set. */
    record Pushed(Envelope envelope, Optional<Duration> redeliverAfter) {
    }

    /**
     * Push attempts that reached their webhooks at {@code at}: delivered, in one write (the
     * dispatcher gathers those that finish while the previous write commits).
     */
    void pushed(List<Pushed> pushes, Instant at);

    /** A push attempt failed; the next one is due at {@code retryAt}. */
    void pushFailed(Envelope envelope, DeliveryEvent.PushFailed event, Instant at, Instant retryAt);

    /**
     * The envelope was not acked in time, or its claim was taken back: it becomes attempt {@code attempt}, undelivered
     * again, and (for webhook nodes) its push is due now. Returns it at its new attempt,
     * or nothing when it was acked or claimed meanwhile.
     */
    Optional<Envelope> redeliver(String envelopeId, int attempt, Instant at, String why);

    /** Moves the envelope to the dead-letter queue and appends {@code notice} (if any) in the same transaction. */
    void deadLetter(String envelopeId, String reason, int attempts, Instant at, Optional<Envelope> notice);

    /** The reply deadline passed: the request shows {@code incident} and {@code notice} goes to its sender. */
    void deadlineMissed(String envelopeId, long withinMs, Instant at, Envelope notice);

    /** Drops scheduled work that no longer applies (the envelope moved on). */
    void forget(String envelopeId, Purpose purpose);

    List<DeadLetter> deadLetters(Optional<NodeId> node, int limit);

    Optional<DeadLetter> deadLetter(String envelopeId);

    /** A fresh attempt cycle for a dead letter (same envelope id); returns it at attempt 1. */
    Envelope redrive(String envelopeId, Instant at, AuditEntry audit);

    /** Removes a dead letter from the queue; the envelope keeps its history. */
    void drop(String envelopeId, Instant at, AuditEntry audit);

    /** The first reply to {@code requestId}, if one was committed. */
    Optional<Envelope> replyTo(String requestId);
}
