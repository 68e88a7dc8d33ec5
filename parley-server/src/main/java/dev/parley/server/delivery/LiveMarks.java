package dev.parley.server.delivery;

import dev.parley.core.Envelope;
import dev.parley.core.Inboxes;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Marks delivered what feeds wrote to their owners' caught-up streams ({@link LiveFrames}), on one
 * virtual thread of its own: the threads those writes end on (the store's announcer, the
 * server's selector) must not wait, and a mark may wait for the store (an inbox's bound of
 * uncommitted marks). A mark still queued when the hub stops is made before it stops.
 */
final class LiveMarks implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(LiveMarks.class.getName());
    private static final Runnable NO_HEARTBEAT = () -> {
    }; // the stream's own thread writes its heartbeats meanwhile

    private record Written(Inboxes.Inbox inbox, List<Envelope> envelopes) {
    }

    private final Inboxes inboxes;
    private final LinkedBlockingQueue<Written> queue = new LinkedBlockingQueue<>();
    private final Thread thread;

    LiveMarks(Inboxes inboxes) {
        this.inboxes = inboxes;
        this.thread = Thread.ofVirtual().name("parley-live-marks").start(this::run);
    }

    /** What {@code inbox}'s owner's stream was written. */
    void add(Inboxes.Inbox inbox, List<Envelope> envelopes) {
        queue.add(new Written(inbox, envelopes));
    }

    private void run() {
        try {
            while (true) {
                mark(queue.take());
            }
        } catch (InterruptedException e) {
            // closing: what is left is marked by close()
        }
    }

    private void mark(Written written) {
        try {
            inboxes.delivered(written.inbox(), written.envelopes(), NO_HEARTBEAT);
        } catch (RuntimeException e) { // the store refuses (shutting down): the envelopes stay undelivered, sent again later
            LOG.log(Level.FINE, "a delivery mark was not made: " + e.getMessage());
        }
    }

    @Override
    public void close() throws InterruptedException {
        thread.interrupt();
        thread.join();
        List<Written> left = new ArrayList<>();
        queue.drainTo(left);
        left.forEach(this::mark);
    }
}
