package dev.parley.store;

import dev.parley.core.Envelope;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Delivery marks from every stream, gathered so that one writer job records the marks made
 * since the last one, up to {@link #ENVELOPES_PER_JOB}. Without it each stream's batch was a
 * job of its own, and those jobs made up a large share of every commit; the job marks them
 * together ({@link Ledger#markDelivered(Statements, List)}: one statement, and one for each
 * page of consecutive seqs). Marks whose commit
 * failed go back in line and are written with the next job, at the latest when the writer
 * recovers.
 *
 * <p>Marks wait here in memory, so an inbox may have at most {@link #UNCOMMITTED_PER_INBOX}
 * envelopes whose marks are not committed yet: a stream past that waits for the writer
 * ({@link #add}), a poll whose marks cannot be committed is refused ({@link #offer}). A
 * catch-up reads and writes an inbox faster than the writer marks it, and without the bound its
 * marks piled up for the whole backlog, and for as long as a full disk refused them: an envelope
 * waiting here holds about 600 bytes (measured: 614 for envelopes read from the store), so the
 * bound is about 40 MB an inbox, where a backlog of a million took 600 MB.
 */
final class DeliveryMarks {
    /**
     * The most envelopes one job marks (whole marks: a stream's page is 256). A catch-up's marks
     * pile up while the writer is behind, and one job for all of them was a group commit of
     * seconds that every send waited for, and every read too while a WAL restart waited for it
     * (BENCHMARKS.md, "Issue 15, stop 48").
     */
    static final int ENVELOPES_PER_JOB = 1024;
    /**
     * The most envelopes of one inbox whose marks wait for a commit: 64 jobs' worth. A smaller
     * bound made a replay of delivered history (marks that change nothing, 1,024 a job) wait for
     * jobs instead of letting them pile up, and 4,096 or 16,384 slowed its warm rounds
     * (BENCHMARKS.md, "Issue 15, stop 49").
     */
    static final int UNCOMMITTED_PER_INBOX = 64 * ENVELOPES_PER_JOB;
    /** How long a stream waits for its inbox's marks before it queues another job itself and waits again. */
    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Writer writer;
    private final ConcurrentLinkedQueue<Ledger.Mark> pending = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean queued = new AtomicBoolean();
    /** Per inbox, envelopes queued here or in a job not committed yet; an inbox with none has no entry. */
    private final Map<NodeId, Integer> uncommitted = new HashMap<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition roomMade = lock.newCondition();

    DeliveryMarks(Writer writer) {
        this.writer = writer;
        writer.onRecovery(this::flush);
    }

    /**
     * Queues a mark of {@code envelopes}, one inbox's, kept without their text and data: whole
     * envelopes waiting here held 57,000 texts a second and a half into a replay of a
     * never-delivered backlog. Waits first while the inbox has no room for them: until the
     * writer commits some of its marks, or, on a full disk, until writes work again. Meanwhile
     * {@code whileWaiting} runs after each second of waiting, on the caller's thread (a stream
     * writes its heartbeat there); what it throws ends the wait, the mark queued all the same.
     */
    void add(List<Envelope> envelopes, Instant at, Optional<Duration> redeliverAfter, Runnable whileWaiting) {
        NodeId inbox = envelopes.getFirst().to();
        RuntimeException ended = null;
        while (!take(inbox, envelopes.size())) {
            flush(); // a job for the marks ahead, should none be queued (one that failed is not again by itself)
            lock.lock();
            try {
                if (!room(inbox, envelopes.size())) { // looked at again under the lock: no commit's signal is missed
                    roomMade.awaitNanos(WAIT_NANOS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // the stream ends at its next write; its mark is kept
                forceTake(inbox, envelopes.size());
                break;
            } finally {
                lock.unlock();
            }
            try {
                whileWaiting.run();
            } catch (RuntimeException e) { // the envelopes were written all the same: their mark is kept
                ended = e;
                lock.lock();
                try {
                    forceTake(inbox, envelopes.size());
                } finally {
                    lock.unlock();
                }
                break;
            }
        }
        queue(envelopes, at, redeliverAfter);
        if (ended != null) {
            throw ended;
        }
    }

    /**
     * Queues the mark as {@link #add} does if the inbox has room for it now, without waiting;
     * false, queuing nothing, if it has not.
     */
    boolean offer(List<Envelope> envelopes, Instant at, Optional<Duration> redeliverAfter) {
        if (!take(envelopes.getFirst().to(), envelopes.size())) {
            return false;
        }
        queue(envelopes, at, redeliverAfter);
        return true;
    }

    /**
     * Counts {@code envelopes} more uncommitted marks of {@code inbox} if it has room for them.
     * Never called with the lock held by a caller that then queues a job: the writer's queue may
     * be full, and the commits that would empty it need the lock to say so.
     */
    private boolean take(NodeId inbox, int envelopes) {
        lock.lock();
        try {
            if (!room(inbox, envelopes)) {
                return false;
            }
            forceTake(inbox, envelopes);
            return true;
        } finally {
            lock.unlock();
        }
    }

    private void forceTake(NodeId inbox, int envelopes) {
        uncommitted.merge(inbox, envelopes, Integer::sum);
    }

    /** Room for {@code envelopes} more marks of {@code inbox}; a mark larger than the bound fits an inbox with none. */
    private boolean room(NodeId inbox, int envelopes) {
        int waiting = uncommitted.getOrDefault(inbox, 0);
        return waiting == 0 || waiting + envelopes <= UNCOMMITTED_PER_INBOX;
    }

    private void queue(List<Envelope> envelopes, Instant at, Optional<Duration> redeliverAfter) {
        List<Envelope> marked = new ArrayList<>(envelopes.size());
        for (Envelope envelope : envelopes) {
            marked.add(envelope.withoutPayload());
        }
        pending.add(new Ledger.Mark(marked, at, redeliverAfter));
        flush();
    }

    /** The marks {@code taken} are committed: their inboxes have room again. */
    private void recorded(List<Ledger.Mark> taken) {
        lock.lock();
        try {
            for (Ledger.Mark mark : taken) {
                uncommitted.computeIfPresent(mark.envelopes().getFirst().to(),
                        (inbox, waiting) -> waiting == mark.envelopes().size() ? null : waiting - mark.envelopes().size());
            }
            roomMade.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Queues a job for the pending marks, unless one is queued already. */
    private void flush() {
        if (pending.isEmpty() || !queued.compareAndSet(false, true)) {
            return;
        }
        List<Ledger.Mark> taken = new ArrayList<>();
        writer.enqueue(tx -> {
            queued.set(false); // before draining: a mark added from here on queues the next job
            int envelopes = 0;
            Ledger.Mark mark;
            while (envelopes < ENVELOPES_PER_JOB && (mark = pending.poll()) != null) {
                taken.add(mark);
                envelopes += mark.envelopes().size();
            }
            if (!pending.isEmpty()) {
                Thread.ofVirtual().name("parley-marks").start(this::flushRest);
            }
            List<List<Envelope>> marked = Ledger.markDelivered(tx.statements(), taken);
            for (int i = 0; i < taken.size(); i++) {
                tx.delivered(marked.get(i), taken.get(i).at());
            }
            return null;
        }).whenComplete((done, failure) -> {
            if (failure == null) {
                recorded(taken);
            } else {
                pending.addAll(taken); // marking again is harmless: only undelivered rows change
                queued.set(false); // the job may not have run at all when an earlier job lost the transaction
            }
        });
    }

    /**
     * Queues the job for the marks one job left, from off the writer's thread: the writer's queue
     * may be full. Once the hub is shutting down it takes no more; those envelopes stay undelivered
     * in the store and are delivered again, as any mark not committed before a stop.
     */
    private void flushRest() {
        try {
            flush();
        } catch (ParleyException shuttingDown) {
            queued.set(false);
        }
    }
}
