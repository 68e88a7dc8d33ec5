package dev.parley.server.delivery;

import dev.parley.core.Envelope;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * The pages of a stream's backlog read ahead while the page before them is written, each on
 * a virtual thread of its own: the page after the last seq written and, while the inbox's seqs
 * come one after another, the page after that. With one page ahead a replay went at the pace
 * of its reader: a page took 0.95 ms to read (its rows' columns decoded into envelopes) against
 * 0.31 ms to encode, write and mark, and the machine stayed a quarter idle.
 *
 * <p>The second page is a guess: that the next page ends {@link #limit} seqs after the last
 * one written, as it does when no seq in between is missing and no page is cut short by its
 * characters. A page is taken only for the seq it was read after, so a wrong guess costs one
 * read and no envelope: a page read ahead is what a read after the same seq would find later,
 * or a prefix of it ({@link StorePage}).
 *
 * @param <P> a page: its envelopes, and whatever else its read returns with them
 */
final class BacklogPages<P> {
    /** Pages read at once, at most. */
    static final int DEPTH = 2;

    private final int limit;
    private final LongFunction<P> read;
    private final Function<P, List<Envelope>> envelopes;
    /** In the order of the seqs they were read after. */
    private final Deque<StorePage<P>> ahead = new ArrayDeque<>(DEPTH);

    /** Pages of at most {@code limit} envelopes, each as {@code read} reads the page after a seq. */
    BacklogPages(int limit, LongFunction<P> read, Function<P, List<Envelope>> envelopes) {
        this.limit = limit;
        this.read = read;
        this.envelopes = envelopes;
    }

    /**
     * The page after {@code position}: the one read ahead for it, or read now. Pages read ahead
     * for a lower seq, or for the wrong one, are dropped.
     */
    P after(long position) throws InterruptedException {
        StorePage<P> page;
        while ((page = ahead.pollFirst()) != null && page.after() != position) {
            page.abandon();
        }
        return page == null ? read.apply(position) : page.join();
    }

    /** Starts reading what follows {@code page}, just read after seq {@code after}, when it was a full page. */
    void readAhead(long after, P page) {
        List<Envelope> written = envelopes.apply(page);
        if (written.size() < limit) {
            return; // the backlog's end, or a page cut short by its characters: the next read says which
        }
        long last = written.getLast().seq();
        start(last);
        if (last - after == limit) { // no seq missing: the next pages most likely end limit seqs apart
            for (int k = 1; k < DEPTH; k++) {
                start(last + (long) k * limit);
            }
        }
    }

    /** Drops every page read ahead, waiting for their reads to end (see {@link StorePage#abandon()}). */
    void drop() {
        StorePage<P> page;
        while ((page = ahead.pollFirst()) != null) {
            page.abandon();
        }
    }

    private void start(long after) {
        StorePage<P> newest = ahead.peekLast();
        if (newest != null && newest.after() >= after) {
            return; // being read already; a guess past it was wrong, and after() reads this page then
        }
        ahead.addLast(StorePage.following(after, () -> read.apply(after)));
    }
}
