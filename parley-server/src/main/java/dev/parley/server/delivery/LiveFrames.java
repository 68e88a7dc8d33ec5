package dev.parley.server.delivery;

import dev.parley.core.Envelope;
import dev.parley.server.http.StreamBody;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * A caught-up stream that its feed writes while the stream's thread waits: the thread that
 * commits an envelope (the store's announcer) hands its frame straight to the connection
 * ({@link StreamBody#writeLater}, which does not block), one write under way at a time and the
 * frames that come meanwhile gathered into the next. A send then wakes no thread of the stream's
 * (docs/idle-streams-edge.md, "Who writes a stream's frame"). Anything else — a gap in the seqs,
 * too much gathered, a failed write — is the thread's: the feed wakes it, and it
 * {@link #settle settles} (waits for the write under way) and goes on from the last frame written.
 * The watchdog sees each write as the stream's own: one the client does not take within the
 * slow-reader timeout interrupts the waiting thread, which ends the stream.
 */
final class LiveFrames implements StreamBody.Written {
    /** The most frames gathered behind a write under way; past them the stream's thread reads from the ring. */
    private static final int MOST_GATHERED = 256;
    private static final int MOST_GATHERED_BYTES = 1 << 20;

    private final StreamBody out;
    private final StreamWatchdog.Watch watch;
    /** What the frames written are reported to: the owner's delivery marks; {@code null} for another reader. */
    private final Consumer<List<Envelope>> written;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition idle = lock.newCondition();
    /** The seq of the last frame handed to the connection or gathered. */
    private long position;
    /** A write is under way: {@link #inFlight}'s frames. */
    private boolean writing;
    private List<Envelope> inFlight = List.of();
    private final ByteArrayOutputStream gathered = new ByteArrayOutputStream(0);
    private List<Envelope> gatheredEnvelopes = new ArrayList<>();
    /** The feed handed an envelope to the thread instead: it must wake and read on. */
    private boolean wanted;
    private Throwable failure;
    /** Wakes the stream's thread where it waits (the feed's condition); set while it waits. */
    private volatile Runnable wake;

    LiveFrames(StreamBody out, StreamWatchdog.Watch watch, Consumer<List<Envelope>> written) {
        this.out = out;
        this.watch = watch;
        this.written = written;
    }

    /** The thread is about to wait after {@code cursor}: the feed writes from there on. Under the feed's lock. */
    void waitAfter(long cursor, Runnable wakeThread) {
        lock.lock();
        try {
            position = cursor;
            wanted = false;
            wake = wakeThread;
        } finally {
            lock.unlock();
        }
    }

    /** Whether the thread must wake: the feed could not write an envelope, or a write failed. */
    boolean wanted() {
        lock.lock();
        try {
            return wanted || failure != null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The feed's next envelope (its lock held): its frame is written, or gathered behind the
     * write under way; false when it is the thread's to read (the thread is then {@link #wanted}).
     */
    boolean offer(Envelope envelope) {
        ByteBuffer start = null;
        lock.lock();
        try {
            if (wanted || failure != null || envelope.seq() != position + 1) {
                wanted = true;
                return false;
            }
            byte[] frame = EnvelopeFrames.frame(envelope);
            if (writing) {
                if (gatheredEnvelopes.size() >= MOST_GATHERED || gathered.size() + frame.length > MOST_GATHERED_BYTES) {
                    wanted = true;
                    return false;
                }
                gathered.writeBytes(frame);
                gatheredEnvelopes.add(envelope);
            } else {
                writing = true;
                inFlight = List.of(envelope);
                start = ByteBuffer.wrap(frame);
                watch.writing();
            }
            position = envelope.seq();
        } finally {
            lock.unlock();
        }
        if (start != null) {
            out.writeLater(start, this);
        }
        return true;
    }

    /** A write is out: the next one takes what was gathered meanwhile. */
    @Override
    public void written() {
        List<Envelope> done;
        ByteBuffer next = null;
        lock.lock();
        try {
            done = inFlight;
            if (gatheredEnvelopes.isEmpty()) {
                writing = false;
                inFlight = List.of();
                watch.idle();
                idle.signalAll();
            } else {
                next = ByteBuffer.wrap(gathered.toByteArray());
                gathered.reset();
                inFlight = gatheredEnvelopes;
                gatheredEnvelopes = new ArrayList<>();
                watch.writing(); // the next write's own time to be taken
            }
        } finally {
            lock.unlock();
        }
        if (written != null) {
            written.accept(done);
        }
        if (next != null) {
            out.writeLater(next, this);
        }
    }

    @Override
    public void failed(Throwable cause) {
        lock.lock();
        try {
            failure = cause;
            writing = false;
            inFlight = List.of();
            gathered.reset();
            gatheredEnvelopes = new ArrayList<>();
            watch.idle();
            idle.signalAll();
        } finally {
            lock.unlock();
        }
        Runnable thread = wake;
        if (thread != null) {
            // on a thread of its own: this may run where the server or the feed holds a lock
            Thread.ofVirtual().name("parley-stream-wake").start(thread);
        }
    }

    /**
     * Once the thread stopped waiting (the feed no longer writes): waits for the write under way,
     * then returns the seq of the last frame written; a failed write ends the stream.
     */
    long settle() throws IOException, InterruptedException {
        lock.lock();
        try {
            wake = null;
            while (writing) {
                idle.await(); // the watchdog interrupts a wait past the slow-reader timeout
            }
            if (failure != null) {
                throw new IOException("a write to the client failed", failure);
            }
            return position;
        } finally {
            lock.unlock();
        }
    }

    /** The stream ends with a write still under way (its thread was interrupted): the answer is given up. */
    void abandon() {
        lock.lock();
        try {
            if (writing) {
                out.abort();
            }
        } finally {
            lock.unlock();
        }
    }
}
