package dev.parley.core;

/**
 * Told, in commit order, about every envelope once it is durable, so that streams can
 * fan it out, and about envelopes once their delivery is durable. Called on the store's
 * announcer thread, one batch after another while the writer commits the next: implementations
 * must not block, or every answer waits behind them.
 */
public interface Notifier {
    void committed(Envelope envelope);

    /**
     * {@code envelopes} were marked delivered to their receiver at {@code at} (once per delivery
     * attempt: a re-read is none). Their text and data may be left out: the receiver has them.
     */
    default void delivered(java.util.List<Envelope> envelopes, java.time.Instant at) {
    }
}
