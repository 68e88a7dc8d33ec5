package dev.parley.store;

import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.NodeId;
import dev.parley.core.Notifier;
import dev.parley.core.ParleyException;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The one thread that writes. Jobs queue up while a commit is in flight and the next
 * commit takes all of them in one transaction (group commit), so concurrent sends share
 * one fsync. Each job runs inside a savepoint: a job that fails leaves no trace and does
 * not disturb the others in its batch. Results are released only after the commit.
 */
final class Writer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Writer.class.getName());
    private static final int MAX_BATCH = 1024;

    /** Work to do inside the transaction. */
    interface Job<T> {
        T run(Tx tx) throws SQLException;
    }

    private record Pending<T>(Job<T> job, CompletableFuture<T> result) {
    }

    private final Statements statements;
    private final Notifier notifier;
    private final CommitObserver observer;
    private final BlockingQueue<Pending<?>> queue = new ArrayBlockingQueue<>(65_536);
    private final Thread thread;
    private volatile boolean closing;

    Writer(Statements statements, Notifier notifier, CommitObserver observer) throws SQLException {
        this.statements = statements;
        this.notifier = notifier;
        this.observer = observer;
        statements.connection().setAutoCommit(false);
        this.thread = Thread.ofPlatform().name("parley-writer").daemon(false).start(this::loop);
    }

    /** Runs {@code job} in the next group commit and waits until it is durable. */
    <T> T submit(Job<T> job) {
        try {
            return enqueue(job).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ParleyException(ErrorCode.UNAVAILABLE, "interrupted while waiting for the commit");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof ParleyException p) {
                throw p;
            }
            LOG.log(Level.SEVERE, "write failed", e.getCause());
            throw new ParleyException(ErrorCode.INTERNAL, "the store could not commit the change");
        }
    }

    /** Queues {@code job} without waiting for it. */
    <T> CompletableFuture<T> enqueue(Job<T> job) {
        if (closing) {
            throw new ParleyException(ErrorCode.UNAVAILABLE, "the hub is shutting down");
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            queue.put(new Pending<>(job, result));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ParleyException(ErrorCode.UNAVAILABLE, "interrupted while queueing a write");
        }
        return result;
    }

    private void loop() {
        Tx tx = new Tx(statements);
        List<Pending<?>> batch = new ArrayList<>(MAX_BATCH);
        while (true) {
            Pending<?> first;
            try {
                first = queue.poll(50, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                continue; // only close() stops the writer, after the queue is drained
            }
            if (first == null) {
                if (closing && queue.isEmpty()) {
                    return;
                }
                continue;
            }
            batch.clear();
            batch.add(first);
            queue.drainTo(batch, MAX_BATCH - 1);
            commit(tx, batch);
        }
    }

    private void commit(Tx tx, List<Pending<?>> batch) {
        long start = System.nanoTime();
        Object[] results = new Object[batch.size()];
        Throwable[] failures = new Throwable[batch.size()];
        try {
            for (int i = 0; i < batch.size(); i++) {
                statements.get("SAVEPOINT job").execute();
                try {
                    results[i] = batch.get(i).job().run(tx);
                    statements.get("RELEASE job").execute();
                    tx.keepJob();
                } catch (SQLException | RuntimeException e) {
                    statements.get("ROLLBACK TO job").execute();
                    statements.get("RELEASE job").execute();
                    tx.dropJob();
                    failures[i] = e;
                }
            }
            statements.connection().commit();
        } catch (SQLException e) {
            LOG.log(Level.SEVERE, "group commit of " + batch.size() + " jobs failed; all of them are refused", e);
            try {
                statements.connection().rollback();
            } catch (SQLException rollback) {
                LOG.log(Level.SEVERE, "rollback failed", rollback);
            }
            tx.reset();
            batch.forEach(p -> p.result().completeExceptionally(e));
            return;
        }
        observer.committed(batch.size(), System.nanoTime() - start);
        List<Envelope> committed = tx.drainCommitted();
        for (int i = 0; i < batch.size(); i++) {
            complete(batch.get(i), results[i], failures[i]);
        }
        for (Envelope envelope : committed) {
            try {
                notifier.committed(envelope);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "notifier failed for envelope " + envelope.id(), e);
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> void complete(Pending<T> pending, Object result, Throwable failure) {
        if (failure != null) {
            pending.result().completeExceptionally(failure);
        } else {
            pending.result().complete((T) result);
        }
    }

    /** Stops taking work, commits everything already queued, then stops the thread. */
    @Override
    public void close() {
        closing = true;
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * What a job sees of the transaction: statements, inbox heads (the last seq per inbox,
     * kept in memory because only this thread assigns seqs), and envelopes to announce
     * after the commit. State staged by a job is kept only if the job succeeds.
     */
    static final class Tx {
        private final Statements statements;
        private final Map<NodeId, Long> heads = new HashMap<>();
        private final Map<NodeId, Long> stagedHeads = new HashMap<>();
        private final List<Envelope> stagedEnvelopes = new ArrayList<>();
        private final List<Envelope> committed = new ArrayList<>();

        Tx(Statements statements) {
            this.statements = statements;
        }

        Statements statements() {
            return statements;
        }

        long nextSeq(NodeId inbox) throws SQLException {
            Long staged = stagedHeads.get(inbox);
            long head = staged != null ? staged : head(inbox);
            stagedHeads.put(inbox, head + 1);
            return head + 1;
        }

        void announce(Envelope envelope) {
            stagedEnvelopes.add(envelope);
        }

        private long head(NodeId inbox) throws SQLException {
            Long known = heads.get(inbox);
            if (known != null) {
                return known;
            }
            var statement = statements.get("SELECT coalesce(max(seq), 0) FROM envelopes WHERE to_node = ?");
            statement.setString(1, inbox.value());
            try (var rs = statement.executeQuery()) {
                long head = rs.next() ? rs.getLong(1) : 0;
                heads.put(inbox, head);
                return head;
            }
        }

        private void keepJob() {
            heads.putAll(stagedHeads);
            stagedHeads.clear();
            committed.addAll(stagedEnvelopes);
            stagedEnvelopes.clear();
        }

        private void dropJob() {
            stagedHeads.clear();
            stagedEnvelopes.clear();
        }

        /** After a failed commit nothing in memory can be trusted: heads are re-read. */
        private void reset() {
            heads.clear();
            dropJob();
            committed.clear();
        }

        private List<Envelope> drainCommitted() {
            List<Envelope> out = List.copyOf(committed);
            committed.clear();
            return out;
        }
    }
}
