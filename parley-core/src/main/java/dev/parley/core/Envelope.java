package dev.parley.core;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * One message or event in a node's inbox. {@code seq} grows by one per target inbox.
 * {@code messageId} is the sender's idempotency key and is not shown to the receiver; {@code topic}
 * names the topic of an {@code event}.
 */
public record Envelope(String id, long seq, NodeId from, NodeId to, String kind, Optional<String> text,
                       Optional<JsonText> data, Optional<String> corrId, Optional<String> threadId,
                       Optional<String> topic, Optional<String> messageId, Map<String, String> meta, Instant createdAt, Trace trace) {
    public Envelope {
        meta = Map.copyOf(meta);
    }

    /**
     * The characters of its text and data: the parts a sender sizes, and most of what it
     * weighs in memory or in a frame.
     */
    public long contentChars() {
        return (text.isPresent() ? text.get().length() : 0) + (data.isPresent() ? data.get().json().length() : 0);
    }

    /** A copy with the inbox position the store assigned. */
    public Envelope withSeq(long assigned) {
        return new Envelope(id, assigned, from, to, kind, text, data, corrId, threadId, topic, messageId, meta,
                createdAt, trace);
    }

    /** A copy carrying the sender's idempotency key. */
    public Envelope withMessageId(Optional<String> key) {
        return new Envelope(id, seq, from, to, kind, text, data, corrId, threadId, topic, key, meta, createdAt, trace);
    }

    /** A copy with other {@code data}. */
    public Envelope withData(JsonText replaced) {
        return new Envelope(id, seq, from, to, kind, text, Optional.of(replaced), corrId, threadId, topic, messageId,
                meta, createdAt, trace);
    }

    /** A copy without its text and data: what a delivery mark keeps while it waits for the store's writer. */
    public Envelope withoutPayload() {
        return new Envelope(id, seq, from, to, kind, Optional.empty(), Optional.empty(), corrId, threadId, topic,
                messageId, meta, createdAt, trace);
    }

    /** A copy for delivery attempt {@code attempt}. */
    public Envelope withAttempt(int attempt) {
        return new Envelope(id, seq, from, to, kind, text, data, corrId, threadId, topic, messageId, meta, createdAt,
                trace.attempt(attempt));
    }
}
