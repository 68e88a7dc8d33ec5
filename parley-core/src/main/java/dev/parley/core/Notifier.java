package dev.parley.core;

/**
 * Told, in commit order, about every envelope once it is durable, so that streams can
 * fan it out. Called on the store's writer thread: implementations must not block.
 */
public interface Notifier {
    void committed(Envelope envelope);
}
