package dev.parley.store;

import dev.parley.core.Envelope;
import dev.parley.core.ParleyException;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Delivery marks from every stream, gathered so that one writer job records the marks made
 * since the last one, up to {@link #ENVELOPES_PER_JOB}. Without it each stream's batch was a
 * job of its own, and those jobs made up a large share of every commit; the job marks them
 * together ({@link Ledger#markDelivered(Statements, List)}: one statement, and one for each
 * page of consecutive seqs). Marks whose commit
 * failed go back in line and are written with the next job, at the latest when the writer
 * recovers.
 */
final class DeliveryMarks {
    /**
     * The most envelopes one job marks (whole marks: a stream's page is 256). A catch-up's marks
     * pile up while the writer is behind, and one job for all of them was a group commit of
     * seconds that every send waited for, and every read too while a WAL restart waited for it
     * (BENCHMARKS.md, "Issue 15, stop 48").
     */
    static final int ENVELOPES_PER_JOB = 1024;

    private final Writer writer;
    private final ConcurrentLinkedQueue<Ledger.Mark> pending = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean queued = new AtomicBoolean();

    DeliveryMarks(Writer writer) {
        this.writer = writer;
        writer.onRecovery(this::flush);
    }

    /**
     * Queues a mark of {@code envelopes}, kept without their text and data: a catch-up's first
     * marks (an update of each row) can fall behind its stream, and whole envelopes waiting here
     * held 57,000 texts a second and a half into a replay of a never-delivered backlog.
     */
    void add(List<Envelope> envelopes, Instant at, Optional<Duration> redeliverAfter) {
        List<Envelope> marked = new ArrayList<>(envelopes.size());
        for (Envelope envelope : envelopes) {
            marked.add(envelope.withoutPayload());
        }
        pending.add(new Ledger.Mark(marked, at, redeliverAfter));
        flush();
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
            if (failure != null) {
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
