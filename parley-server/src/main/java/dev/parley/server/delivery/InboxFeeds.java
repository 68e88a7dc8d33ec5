package dev.parley.server.delivery;

import dev.parley.core.Envelope;
import dev.parley.core.InboxReader;
import dev.parley.core.NodeId;
import dev.parley.core.Notifier;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Live fan-out of committed envelopes to the streams that follow an inbox. Each followed
 * inbox has a {@link Feed}: a short ring of its most recent envelopes and a signal for
 * waiting readers. The writer only appends to the ring and never waits for a reader; a
 * reader that is behind the ring reads from the store instead, so nothing is lost and
 * memory stays bounded per followed inbox, in envelopes and in their text's size.
 */
public final class InboxFeeds implements Notifier {
    static final int RING = 512;
    /**
     * What a ring's envelopes may hold together in text and data characters, beyond the newest
     * one, which is always kept. A stream that keeps up is a few envelopes behind; what the ring
     * holds past that only saves a slow reader a store read, and costs the hub memory for as long
     * as it is held: 512 envelopes of the largest body would be 128 MiB per followed inbox, and
     * even 512 of 1 KiB live for seconds under load, so every young collection copies them again.
     */
    static final long RING_CHARS = 64 * 1024;
    /**
     * A ring starts this small and doubles up to {@link #RING} as envelopes come: most followed
     * inboxes are idle or quiet, and 10,000 full-size rings would hold 20 MB of empty slots.
     */
    private static final int FIRST_RING = 8;
    private static final Envelope[] NO_RING = new Envelope[0];
    private static final long[] NO_SIZES = new long[0];

    private final Map<NodeId, Feed> feeds = new ConcurrentHashMap<>();

    @Override
    public void committed(Envelope envelope) {
        Feed feed = feeds.get(envelope.to());
        if (feed != null) {
            feed.append(envelope);
        }
    }

    /** Follows {@code node}'s inbox; release the feed when the stream ends. */
    Feed acquire(NodeId node, InboxReader reader) {
        return feeds.compute(node, (id, feed) -> {
            Feed live = feed == null ? new Feed(id) : feed;
            live.followers++;
            if (reader.takesDelivery()) {
                live.owners++;
            }
            return live;
        });
    }

    void release(Feed feed, InboxReader reader) {
        feeds.computeIfPresent(feed.node, (id, live) -> {
            if (live != feed) {
                return live;
            }
            if (reader.takesDelivery()) {
                live.owners--;
            }
            return --live.followers == 0 ? null : live;
        });
    }

    /**
     * Hands an envelope that is being redelivered (same id, next attempt) to every live stream
     * the node itself reads (one of them may be a dead client's the hub has not noticed yet);
     * without one, it waits as undelivered for the node's next stream.
     */
    public void redeliver(Envelope envelope) {
        feeds.computeIfPresent(envelope.to(), (id, feed) -> {
            if (feed.owners > 0) {
                feed.redeliver(envelope);
            }
            return feed;
        });
    }

    /** How many streams follow {@code node}'s inbox now (the node's own and the admin's). */
    public int streams(NodeId node) {
        Feed feed = feeds.get(node);
        return feed == null ? 0 : feed.followers;
    }

    /** Ends every stream of a deleted node. */
    public void close(NodeId node) {
        Feed feed = feeds.get(node);
        if (feed != null) {
            feed.close();
        }
    }

    /** Ends every stream (shutdown). */
    public void closeAll() {
        feeds.values().forEach(Feed::close);
    }

    /** One followed inbox. */
    static final class Feed {
        private final NodeId node;
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition advanced = lock.newCondition();
        /** The last {@code count} envelopes, seqs {@code first .. first + count - 1}, envelope s in slot s % ring.length. */
        private Envelope[] ring = NO_RING;
        /**
         * Each slot's text and data characters, kept beside the ring so that letting go of the
         * oldest envelope does not read it again: by then it has left the processor's caches, and
         * those reads were half of what the announcer spent on a send.
         */
        private long[] sizes = NO_SIZES;
        private long first;
        private int count;
        /** The text and data characters of the {@code count} envelopes in the ring. */
        private long chars;
        /**
         * Redeliveries, each numbered, that a stream of the owner has not taken yet; every such
         * stream takes those past the last it took, and those all of them took are let go.
         */
        private final ArrayDeque<Redelivery> redeliveries = new ArrayDeque<>();
        private long redelivered;
        /** Where each of the owner's streams is in the redeliveries. */
        private final List<Taken> takers = new ArrayList<>();
        /**
         * Written under the map's compute: how many streams follow this feed, and how many of them
         * are the node's own; followers is volatile for {@link #streams}, which only reads it.
         */
        private volatile int followers;
        private int owners;
        private volatile boolean closed;
        private volatile long head;
        /** What a stream's watch runs when its heartbeat is due while it waits here. */
        private final Runnable wakeForHeartbeat = this::wakeAll;
        /** The streams waiting here, which the feed writes itself while they wait. */
        private final List<LiveFrames> live = new ArrayList<>(1);

        private Feed(NodeId node) {
            this.node = node;
        }

        boolean closed() {
            return closed;
        }

        private int slot(long seq) {
            return (int) (seq % ring.length);
        }

        /** Makes room for one more envelope while the ring is below {@link #RING}, keeping every slot's seq. */
        private void grow() {
            if (count < ring.length || ring.length == RING) {
                return;
            }
            Envelope[] old = ring;
            long[] oldSizes = sizes;
            ring = new Envelope[Math.max(FIRST_RING, Math.min(RING, old.length * 2))];
            sizes = new long[ring.length];
            for (long seq = first; seq < first + count; seq++) {
                int from = (int) (seq % old.length);
                ring[slot(seq)] = old[from];
                sizes[slot(seq)] = oldSizes[from];
            }
        }

        private void append(Envelope envelope) {
            lock.lock();
            try {
                if (count > 0 && first + count != envelope.seq()) {
                    dropOldest(count); // a gap would make the ring lie; readers fall back to the store
                }
                if (count == RING) {
                    dropOldest(1);
                }
                grow();
                int slot = slot(envelope.seq());
                long size = envelope.contentChars();
                ring[slot] = envelope;
                sizes[slot] = size;
                if (count == 0) {
                    first = envelope.seq();
                }
                count++;
                chars += size;
                while (count > 1 && chars > RING_CHARS) {
                    dropOldest(1);
                }
                head = envelope.seq();
                // A waiting stream is written here; only one that cannot be (a gap, too much
                // gathered, a failed write) is woken to read on.
                boolean wake = false;
                for (LiveFrames stream : live) {
                    wake |= !stream.offer(envelope);
                }
                if (wake) {
                    advanced.signalAll();
                }
            } finally {
                lock.unlock();
            }
        }

        /** Lets go of the {@code n} oldest envelopes, so that nothing in the ring outlives its place. */
        private void dropOldest(int n) {
            for (int i = 0; i < n; i++) {
                int slot = slot(first);
                chars -= sizes[slot];
                ring[slot] = null;
                first++;
                count--;
            }
        }

        /**
         * Envelopes after {@code cursor} from the ring, or {@code null} when the ring cannot
         * prove it holds all of them (the reader must ask the store).
         */
        List<Envelope> after(long cursor, int limit) {
            lock.lock();
            try {
                if (count == 0 || first > cursor + 1) {
                    return null;
                }
                long from = Math.max(cursor + 1, first);
                long to = Math.min(first + count - 1, from + limit - 1);
                List<Envelope> out = new ArrayList<>((int) Math.max(0, to - from + 1));
                for (long seq = from; seq <= to; seq++) {
                    out.add(ring[slot(seq)]);
                }
                return out;
            } finally {
                lock.unlock();
            }
        }

        private void redeliver(Envelope envelope) {
            lock.lock();
            try {
                redeliveries.addLast(new Redelivery(++redelivered, envelope));
                if (redeliveries.size() > RING) {
                    redeliveries.removeFirst(); // a stream this far behind gets it from the store when it reconnects
                }
                letGoOfTaken();
                advanced.signalAll();
            } finally {
                lock.unlock();
            }
        }

        /**
         * A stream's place in the redeliveries, starting after those handed out so far (what was
         * redelivered before the stream opened, its replay reads). Only the owner's streams take
         * redeliveries; each must {@link #stopTaking} when it ends.
         */
        Taken startTaking(InboxReader reader) {
            lock.lock();
            try {
                Taken taken = new Taken(reader.takesDelivery(), redelivered);
                if (taken.owner) {
                    takers.add(taken);
                }
                return taken;
            } finally {
                lock.unlock();
            }
        }

        void stopTaking(Taken taken) {
            lock.lock();
            try {
                takers.remove(taken);
                letGoOfTaken();
            } finally {
                lock.unlock();
            }
        }

        /** The redeliveries {@code taken} has not taken yet; it has taken them once this returns. */
        List<Envelope> take(Taken taken) {
            if (!taken.owner) {
                return List.of();
            }
            lock.lock();
            try {
                if (taken.upTo == redelivered) {
                    return List.of(); // the usual case, asked before every page a stream writes: no garbage for it
                }
                long since = taken.upTo;
                taken.upTo = redelivered;
                List<Envelope> out = redeliveries.stream().filter(r -> r.number() > since).map(Redelivery::envelope)
                        .toList();
                letGoOfTaken();
                return out;
            } finally {
                lock.unlock();
            }
        }

        /** Drops the redeliveries every stream of the owner has taken (all of them, once none is left). */
        private void letGoOfTaken() {
            long upTo = redelivered;
            for (Taken taken : takers) {
                upTo = Math.min(upTo, taken.upTo);
            }
            while (!redeliveries.isEmpty() && redeliveries.peekFirst().number() <= upTo) {
                redeliveries.removeFirst();
            }
        }

        /** How many redeliveries the feed holds, for tests. */
        int redeliveriesHeld() {
            lock.lock();
            try {
                return redeliveries.size();
            } finally {
                lock.unlock();
            }
        }

        /**
         * Waits with {@code stream} caught up after {@code cursor}, the feed writing what is
         * committed meanwhile, until the feed cannot (a gap, too much gathered, a failed write),
         * there is a redelivery for the owner's stream, the feed closes, or the stream's heartbeat
         * is due; true when there is news to read. Afterwards the stream must {@link
         * LiveFrames#settle settle}. The wait has no timeout: the watchdog wakes it for the heartbeat.
         */
        boolean awaitAfter(long cursor, Taken taken, StreamWatchdog.Watch watch, LiveFrames stream)
                throws InterruptedException {
            lock.lock();
            try {
                stream.waitAfter(cursor, wakeForHeartbeat); // settling without a wait goes on from the cursor
                if (head > cursor || redeliveredFor(taken) || closed) {
                    return head > cursor || redeliveredFor(taken);
                }
                live.add(stream);
                watch.waiting(wakeForHeartbeat);
                while (!stream.wanted() && !redeliveredFor(taken) && !closed && !watch.heartbeatDue()) {
                    advanced.await();
                }
                return stream.wanted() || redeliveredFor(taken);
            } finally {
                live.remove(stream);
                watch.waiting(null);
                lock.unlock();
            }
        }

        /** Makes every wait on this feed look again. */
        private void wakeAll() {
            lock.lock();
            try {
                advanced.signalAll();
            } finally {
                lock.unlock();
            }
        }

        private boolean redeliveredFor(Taken taken) {
            return taken.owner && redelivered > taken.upTo;
        }

        private void close() {
            lock.lock();
            try {
                closed = true;
                advanced.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    private record Redelivery(long number, Envelope envelope) {
    }

    /** A stream's place in its feed's redeliveries: the number of the last it took; guarded by the feed's lock. */
    static final class Taken {
        private final boolean owner;
        private long upTo;

        private Taken(boolean owner, long upTo) {
            this.owner = owner;
            this.upTo = upTo;
        }
    }
}
