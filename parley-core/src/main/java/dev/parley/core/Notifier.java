package dev.parley.core;

/**
 * Told, in commit order, about every envelope once it is durable, so that streams can
 * fan it out, and about envelopes once their delivery is durable. Called on the store's
 * writer thread: implementations must not block.
 */
public interface Notifier {
    void committed(Envelope envelope);

    /** {@code envelopes} were marked delivered to their receiver at {@code at} (once per delivery attempt: a re-read is none). */
    default void delivered(java.util.List<Envelope> envelopes, java.time.Instant at) {
    }
}
