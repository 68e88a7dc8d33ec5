package dev.parley.store;

import dev.parley.core.Envelope;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Delivery marks from every stream, gathered so that one writer job records all marks
 * made since the last one. Without it each stream's batch was a job of its own, and
 * those jobs made up a large share of every commit; the job marks them all with one statement
 * ({@link Ledger#markDelivered(Statements, List)}). Marks whose commit failed go back in
 * line and are written with the next job, at the latest when the writer recovers.
 */
final class DeliveryMarks {
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

    /** Queues one job for every pending mark, unless one is queued already. */
    private void flush() {
        if (pending.isEmpty() || !queued.compareAndSet(false, true)) {
            return;
        }
        List<Ledger.Mark> taken = new ArrayList<>();
        writer.enqueue(tx -> {
            queued.set(false); // before draining: a mark added from here on queues the next job
            for (Ledger.Mark mark = pending.poll(); mark != null; mark = pending.poll()) {
                taken.add(mark);
            }
            List<List<Envelope>> marked = Ledger.markDelivered(tx.statements(), taken); // all in one statement
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
}
