package dev.parley.server.delivery;

import dev.parley.core.Envelope;

import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.function.Supplier;

/**
 * The page of a stream's backlog that follows the one being written, read from the store on
 * a virtual thread of its own meanwhile. One thread that reads a page and then writes it
 * leaves the store idle while the socket drains and the other way round: a replay of a long
 * backlog took turns like that on one core while the other had room.
 *
 * <p>The page is what a read after the same seq would find later, or a prefix of it: seqs
 * become visible in order, and whatever it lacks comes in the next page or live. A
 * catching-up stream holds the page it writes and at most {@link BacklogPages#DEPTH} more, each
 * bounded by {@link dev.parley.core.EventStore#PAGE_CHARS}.
 */
final class StorePage<T> {
    /** A replay's page and the inbox's head seq read just before it. */
    record Replayed(long head, List<Envelope> envelopes) {
    }

    private final long after;
    private final FutureTask<T> read;
    private final Thread reader;

    private StorePage(long after, FutureTask<T> read, Thread reader) {
        this.after = after;
        this.read = read;
        this.reader = reader;
    }

    /** The page after seq {@code after}, which {@code read} reads meanwhile. */
    static <T> StorePage<T> following(long after, Supplier<T> read) {
        FutureTask<T> task = new FutureTask<>(read::get);
        return new StorePage<>(after, task, Thread.ofVirtual().name("parley-stream-read").start(task));
    }

    /** The seq the page follows. */
    long after() {
        return after;
    }

    /** The page; a failed read fails here as it would have on the stream's own thread. */
    T join() throws InterruptedException {
        try {
            return read.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error r) {
                throw r;
            }
            throw new IllegalStateException(e.getCause()); // the reads throw nothing checked
        }
    }

    /**
     * Drops the page and waits until a read ahead has ended, even when interrupted, so that a
     * stream's reads end with the stream (a hub that stops closes the store after its streams).
     */
    void abandon() {
        read.cancel(false);
        boolean interrupted = false;
        while (true) {
            try {
                reader.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
