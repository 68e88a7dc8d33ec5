package dev.parley.store;

/** Holds part of the store back (the writer between two commits, or the readers) until closed. */
interface Pause extends AutoCloseable {
    @Override
    void close();
}
