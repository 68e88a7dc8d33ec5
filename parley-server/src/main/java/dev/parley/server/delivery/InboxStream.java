package dev.parley.server.delivery;

import dev.parley.core.Envelope;
import dev.parley.core.InboxReader;
import dev.parley.core.Inboxes;
import dev.parley.core.NodeId;
import dev.parley.core.Replay;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.StreamBody;
import dev.parley.server.metrics.Metrics;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Serves one inbox as Server-Sent Events: the ready comment with a short reconnection
 * time, a replay (after the cursor, or as {@link Replay} says), then live envelopes and
 * heartbeats until the client leaves, the node is deleted or the hub stops. For the
 * node's own stream each written batch is marked delivered and redeliveries are sent. Once
 * caught up, the stream's thread waits and its feed writes what is committed ({@link LiveFrames}),
 * whose marks {@link LiveMarks} makes.
 */
public final class InboxStream implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(InboxStream.class.getName());
    private static final int BATCH = 256;
    /** How long an EventSource waits before it reconnects; its default is a few seconds. */
    private static final Duration RECONNECT = Duration.ofSeconds(1);
    private static final byte[] READY = (": parley ready\nretry: " + RECONNECT.toMillis() + "\n\n")
            .getBytes(StandardCharsets.UTF_8);
    private static final byte[] HEARTBEAT = ": hb\n\n".getBytes(StandardCharsets.UTF_8);

    private final Inboxes inboxes;
    private final InboxFeeds feeds;
    private final StreamWatchdog watchdog;
    private final Metrics metrics;
    private final LiveMarks liveMarks;
    private final StreamCount serving = new StreamCount();

    /** Heartbeats come at the watchdog's interval: it wakes a stream that has been silent that long. */
    public InboxStream(Inboxes inboxes, InboxFeeds feeds, StreamWatchdog watchdog, Metrics metrics) {
        this.inboxes = inboxes;
        this.feeds = feeds;
        this.watchdog = watchdog;
        this.metrics = metrics;
        this.liveMarks = new LiveMarks(inboxes);
        metrics.openStreamsFrom(serving::open);
    }

    public void serve(Inboxes.Inbox inbox, OptionalLong cursor, Replay replay, Exchange ex) {
        serve(inbox, cursor, replay, ex::eventStream);
    }

    /** {@link #serve(Inboxes.Inbox, OptionalLong, Replay, Exchange)} into the body {@code answer} opens. */
    void serve(Inboxes.Inbox inbox, OptionalLong cursor, Replay replay, Supplier<StreamBody> answer) {
        NodeId node = inbox.node();
        InboxReader reader = inbox.reader();
        InboxFeeds.Feed feed = feeds.acquire(node, reader);
        StreamWatchdog.Watch watch = watchdog.watch(Thread.currentThread());
        serving.opened();
        long position = cursor.orElse(-1);
        InboxFeeds.Taken taken = feed.startTaking(reader);
        BacklogPages<List<Envelope>> backlog =
                new BacklogPages<>(BATCH, after -> inboxes.after(inbox, after, BATCH), Function.identity());
        try (StreamBody out = answer.get()) {
            watch.answering(out);
            LiveFrames live = new LiveFrames(out, watch,
                    reader.takesDelivery() ? written -> liveMarks.add(inbox, written) : null);
            try {
                watch.write(out, READY);
                position = cursor.isPresent() ? cursor.getAsLong() : replay(inbox, replay, out, watch);
                List<Envelope> held = new ArrayList<>();
                while (!feed.closed()) {
                    List<Envelope> again = written(feed.take(taken), held, position);
                    if (!again.isEmpty()) {
                        send(again, inbox, out, watch, false);
                    }
                    List<Envelope> batch = feed.after(position, BATCH);
                    if (batch == null) { // a backlog: what follows is read while this page is written
                        batch = backlog.after(position);
                        backlog.readAhead(position, batch);
                    } else {
                        backlog.drop();
                    }
                    if (!batch.isEmpty()) {
                        position = send(batch, inbox, out, watch, true);
                    } else {
                        // Caught up: only the feed can bring news now, and it writes it itself while
                        // this waits; a heartbeat goes back to waiting without asking the store
                        // (10,000 idle streams asked it 667 times a second).
                        boolean news;
                        do {
                            news = feed.awaitAfter(position, taken, watch, live);
                            position = live.settle();
                            if (!news && !feed.closed() && watch.heartbeatDue()) {
                                watch.write(out, HEARTBEAT);
                            }
                        } while (!news && !feed.closed());
                    }
                }
            } finally {
                live.abandon(); // a write the client never took (the watchdog ended the wait): no end is written
            }
        } catch (IOException | UncheckedIOException | InterruptedException e) {
            if (watch.tripped()) {
                metrics.slowReadersDisconnected.increment();
                LOG.log(Level.WARNING, "disconnected a slow reader of " + node + " after seq " + position
                        + "; it resumes from its cursor");
            } else {
                LOG.log(Level.FINE, "stream of " + node + " ended: " + e);
            }
        } finally {
            backlog.drop();
            Thread.interrupted(); // a watchdog interrupt must not leak into the server's connection handling
            watchdog.unwatch(watch);
            feed.stopTaking(taken);
            feeds.release(feed, reader);
            serving.closed();
        }
    }

    /** After the feeds closed (shutdown): waits, at most {@code timeout}, until every stream has written its end. */
    public boolean awaitEnded(Duration timeout) throws InterruptedException {
        return serving.awaitNone(timeout);
    }

    @Override
    public void close() throws InterruptedException {
        liveMarks.close();
    }

    /**
     * The redeliveries {@code taken} (with those {@code held} from before) of envelopes this
     * stream has written, up to {@code position}; the others stay held until it has. A stream
     * late to look at its feed (another stream of the node wrote the envelope and its redelivery
     * came due meanwhile) would otherwise write an envelope's redelivery before the envelope.
     * A stream far behind holds at most as many as a feed keeps, the oldest let go first: the
     * envelopes themselves are still ahead of it, so their clients get them all the same.
     */
    static List<Envelope> written(List<Envelope> taken, List<Envelope> held, long position) {
        if (taken.isEmpty() && held.isEmpty()) {
            return taken; // the usual case, asked before every page: nothing to hold or let go
        }
        held.addAll(taken);
        List<Envelope> due = new ArrayList<>();
        held.removeIf(envelope -> envelope.seq() <= position && due.add(envelope));
        if (held.size() > InboxFeeds.RING) {
            held.subList(0, held.size() - InboxFeeds.RING).clear();
        }
        return due;
    }

    /**
     * Sends every envelope {@code replay} selects, in seq order; returns the cursor to
     * continue live from. Whatever is committed while it runs is either in a later page or
     * above the head read before the last (empty) page, so it comes live: nothing is missed
     * and nothing is replayed twice.
     */
    private long replay(Inboxes.Inbox inbox, Replay replay, OutputStream out, StreamWatchdog.Watch watch)
            throws IOException {
        BacklogPages<StorePage.Replayed> backlog =
                new BacklogPages<>(BATCH, after -> replayPage(inbox, replay, after), StorePage.Replayed::envelopes);
        long last = 0;
        try {
            StorePage.Replayed page = backlog.after(last);
            while (!page.envelopes().isEmpty()) {
                backlog.readAhead(last, page);
                last = send(page.envelopes(), inbox, out, watch, true);
                page = backlog.after(last);
            }
            return Math.max(last, page.head());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("stream interrupted during its replay");
        } finally {
            backlog.drop();
        }
    }

    /** The inbox's head, then the page of what {@code replay} selects after {@code after}. */
    private StorePage.Replayed replayPage(Inboxes.Inbox inbox, Replay replay, long after) {
        long head = inboxes.head(inbox);
        return new StorePage.Replayed(head, inboxes.replay(inbox, replay, after, BATCH));
    }

    /**
     * Writes one frame per envelope and, for the owner, marks them delivered. A redelivered
     * envelope is written without {@code id:}, so the client's cursor (its Last-Event-ID)
     * stays where it was; the envelope's own id and {@code trace.attempt} tell it apart.
     */
    private long send(List<Envelope> batch, Inboxes.Inbox inbox, OutputStream out, StreamWatchdog.Watch watch,
                      boolean advancesCursor) throws IOException {
        ByteArrayOutputStream frames = EnvelopeFrames.buffer(batch, 0);
        EnvelopeFrames.write(frames, batch, advancesCursor);
        watch.write(out, frames);
        inboxes.delivered(inbox, batch, () -> heartbeatIfDue(out, watch));
        return batch.getLast().seq();
    }

    /**
     * While the stream's marks wait for the store (its inbox's bound of uncommitted marks
     * reached: a catch-up ahead of the writer, a full disk), the client still hears from it at
     * the heartbeat's pace, as API.md promises.
     */
    private static void heartbeatIfDue(OutputStream out, StreamWatchdog.Watch watch) {
        if (watch.heartbeatDue()) {
            try {
                watch.write(out, HEARTBEAT);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
