package dev.parley.store;

import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.NodeId;
import dev.parley.core.Notifier;
import dev.parley.core.ParleyException;
import dev.parley.core.StoreHealth;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The one thread that writes. Jobs queue up while a commit is in flight and the next
 * commit takes all of them in one transaction (group commit), so concurrent sends share
 * one fsync. Each job runs inside a savepoint: a job that fails leaves no trace and does
 * not disturb the others in its batch. Results are released only after the commit.
 *
 * <p>A group commit that fails (a full disk, an I/O error) refuses every job of its batch,
 * and nothing of it stays behind: SQLite may have rolled the transaction back under the
 * writer and sqlite-jdbc keeps statements that failed closed for good, so the writer drops
 * its connection with its statements and in-memory heads and opens a fresh one. While
 * commits fail, the writer tries a one-page commit of its own every second when no work
 * comes in, so it notices by itself when writes work again.
 *
 * <p>Once a batch is durable, its answers (waking the callers) and announcements (the
 * {@link Notifier}) run on a second thread, the announcer, in commit order, while the
 * writer already commits the next batch: the writer thread does only SQL and the commit.
 * The hand-over queue is bounded, so an announcer that falls behind holds the writer back
 * rather than letting answers pile up.
 */
final class Writer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Writer.class.getName());
    private static final int MAX_BATCH = 1024;
    /** Jobs that may wait for the writer; a caller past this many waits to queue. */
    private static final int QUEUE_LENGTH = 65_536;
    private static final long PROBE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** SQLite's primary result code for "database or disk is full". */
    private static final int SQLITE_FULL = 13;

    /** Work to do inside the transaction. */
    interface Job<T> {
        T run(Tx tx) throws SQLException;
    }

    /** Opens a connection for the writer, with the schema up to date. */
    interface Opener {
        Connection open() throws SQLException;
    }

    /** A queued job and its caller's answer. */
    record Pending<T>(Job<T> job, CompletableFuture<T> result) {
    }

    /**
     * Work the writer commits on its own right after a batch of other work, at most once
     * {@code every}: bulk work that is cheaper the more of it waits, done only while writes
     * come in (an idle hub commits nothing for it), and once more at close after work since its
     * last run (when commits work). A transaction of its own, so that its
     * failure (logged once a run of failures, and undone) never costs another job its commit, and
     * the batch before it is answered without waiting for it. {@code what} names it in the log.
     *
     * <p>Its commit does not wait for the disk ({@link Connections#UNSYNCED_COMMITS}): the upkeep
     * derives what it writes from commits already synced, so a power loss before the next synced
     * commit loses only its last run, which the next one does again, and that commit's sync takes
     * it to disk too. The sync of a fold's hundreds of pages was about a sixth of its pause
     * (BENCHMARKS.md, "Issue 15, stop 46"). Every other commit waits for its sync as before.
     */
    record Upkeep(String what, Duration every, Job<?> job) {
    }

    private final Opener opener;
    private final Notifier notifier;
    private final CommitObserver observer;
    private final BlockingQueue<Pending<?>> queue;
    /** Held for each group commit; fair, so that {@link #pause()} gets its turn under steady load. */
    private final ReentrantLock commits = new ReentrantLock(true);
    private final List<Runnable> recoveryListeners = new CopyOnWriteArrayList<>();
    private final Thread thread;
    /** What is left of each committed batch, in commit order; taken by {@link #announcer}. */
    private final BlockingQueue<Runnable> announcements = new ArrayBlockingQueue<>(64);
    private final Thread announcer;
    /** The writer's last hand-over at close: every batch before it has been announced. */
    private static final Runnable END = () -> { };
    /**
     * What {@link #close()} queues to wake an idle writer; the writer passes over it as the first
     * of a batch, and runs it as a job that does nothing when it comes behind other jobs.
     */
    private static final Pending<Void> WAKE = new Pending<>(tx -> null, new CompletableFuture<>());
    private volatile boolean closing;
    /**
     * Set by the writer once it has taken its last job; after that it fails whatever it finds
     * queued. A caller that passed the {@code closing} check before {@link #close()} and queued
     * after the writer's last look takes its job back itself when it sees this.
     */
    private volatile boolean stopped;
    private volatile Runnable afterCommit = () -> { };
    private volatile Runnable afterUpkeep = () -> { };
    private final Pending<?> upkeep;
    private final String upkeepWhat;
    /** Whether the upkeep's last run failed: a run of failures is logged at its first and at its end. Writer thread only. */
    private boolean upkeepFailing;
    private final long upkeepNanos;
    /** When the upkeep last ran. Writer thread only. */
    private long lastUpkeepNanos;
    /** Whether work was committed since the upkeep last ran. Writer thread only. */
    private boolean workSinceUpkeep;
    private volatile StoreHealth health = StoreHealth.OK;
    /** The open connection and what is known about it; null while no connection could be opened. Writer thread only. */
    private Tx tx;
    private long lastAttemptNanos;

    Writer(Opener opener, Notifier notifier, CommitObserver observer, Upkeep upkeep) throws SQLException {
        this(opener, notifier, observer, upkeep, new ArrayBlockingQueue<>(QUEUE_LENGTH));
    }

    /** With the queue jobs wait in; a test's queue can hold a caller between its checks and its put. */
    Writer(Opener opener, Notifier notifier, CommitObserver observer, Upkeep upkeep,
           BlockingQueue<Pending<?>> queue) throws SQLException {
        this.queue = queue;
        this.opener = opener;
        this.notifier = notifier;
        this.observer = observer;
        // One pending entry for every run: nobody waits for its result, so completing it again is harmless.
        this.upkeep = new Pending<>(upkeep.job(), new CompletableFuture<>());
        this.upkeepWhat = upkeep.what();
        this.upkeepNanos = upkeep.every().toNanos();
        this.lastUpkeepNanos = System.nanoTime();
        this.tx = connect();
        this.announcer = Thread.ofPlatform().name(SqliteStore.ANNOUNCER_THREAD).daemon(false).start(this::announce);
        this.thread = Thread.ofPlatform().name(SqliteStore.WRITER_THREAD).daemon(false).start(this::loop);
    }

    /** Runs {@code job} in the next group commit and waits until it is durable. */
    <T> T submit(Job<T> job) {
        try {
            return enqueue(job).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ParleyException(ErrorCode.UNAVAILABLE, "interrupted while waiting for the commit");
        } catch (ExecutionException e) {
            throw refusal(e.getCause());
        }
    }

    /** What the caller of a failed job is told: its own refusal, or what the store's failure means to it. */
    private static ParleyException refusal(Throwable failure) {
        if (failure instanceof ParleyException p) {
            return p;
        }
        if (isFull(failure)) {
            return new ParleyException(ErrorCode.STORAGE_FULL,
                    "the hub's disk is full: nothing was written; try again once space is freed");
        }
        LOG.log(Level.SEVERE, "write failed", failure);
        return new ParleyException(ErrorCode.INTERNAL, "the store could not commit the change");
    }

    /** Queues {@code job} without waiting for it. */
    <T> CompletableFuture<T> enqueue(Job<T> job) {
        if (closing) {
            throw shuttingDown();
        }
        Pending<T> pending = new Pending<>(job, new CompletableFuture<>());
        try {
            queue.put(pending);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ParleyException(ErrorCode.UNAVAILABLE, "interrupted while queueing a write");
        }
        // Queued after the writer's last look: whoever takes it out of the queue refuses it.
        if (stopped && queue.remove(pending)) {
            throw shuttingDown();
        }
        return pending.result();
    }

    private static ParleyException shuttingDown() {
        return new ParleyException(ErrorCode.UNAVAILABLE, "the hub is shutting down");
    }

    StoreHealth health() {
        return health;
    }

    /**
     * Runs {@code afterCommit} on the writer's thread after each group commit, outside the
     * commit lock: it may hold the next commit back only for a bounded time.
     */
    void afterEachCommit(Runnable afterCommit) {
        this.afterCommit = afterCommit;
    }

    /** Runs {@code afterUpkeep} on the writer's thread after each run of the upkeep, committed or not. */
    void afterEachUpkeep(Runnable afterUpkeep) {
        this.afterUpkeep = afterUpkeep;
    }

    /** Runs {@code listener} (on a thread of its own) each time commits work again after failing. */
    void onRecovery(Runnable listener) {
        recoveryListeners.add(listener);
    }

    /**
     * Waits until no group commit is in progress and keeps the writer from starting the
     * next one until the pause is closed: the writer then holds no lock on the database.
     * A group commit never reads through the read pool (jobs read on the writer's own
     * connection; answers and announcements run on the announcer, which takes no part in a
     * commit), so a pause of the readers taken before this one cannot hold a commit up.
     */
    Pause pause() throws InterruptedException {
        commits.lockInterruptibly();
        return commits::unlock;
    }

    private void loop() {
        while (true) {
            Pending<?> first;
            try {
                first = next();
            } catch (InterruptedException e) {
                continue; // only close() stops the writer, after the queue is drained
            }
            // A batch of its own each time: the announcer answers it while the next one fills.
            List<Pending<?>> batch = new ArrayList<>(first == null ? 1 : Math.min(MAX_BATCH, 1 + queue.size()));
            if (first != null) {
                batch.add(first);
                queue.drainTo(batch, MAX_BATCH - 1);
            } else if (closing && queue.isEmpty()) {
                if (workSinceUpkeep && health == StoreHealth.OK) {
                    upkeep(); // a store closed cleanly leaves none of it for the next start
                }
                stopped = true;
                // Jobs queued between that look and this one: their callers saw no stop yet.
                for (Pending<?> late; (late = queue.poll()) != null; ) {
                    late.result().completeExceptionally(shuttingDown());
                }
                handOver(END);
                return;
            } else if (health != StoreHealth.OK && System.nanoTime() - lastAttemptNanos >= PROBE_NANOS) {
                batch.add(new Pending<>(Writer::probe, new CompletableFuture<>()));
            } else {
                continue;
            }
            commitAndHandOver(batch, false);
            workSinceUpkeep |= first != null;
            // Not while commits fail: the fold has nothing to take in then (failed batches audit
            // nothing), and its empty commit would report the store healthy between two failures.
            if (first != null && health == StoreHealth.OK && System.nanoTime() - lastUpkeepNanos >= upkeepNanos) {
                upkeep();
            }
        }
    }

    /**
     * The next job, waited for as long as there is none while the store is healthy: an idle hub's
     * writer does not wake (it polled every 50 ms, 20 wake-ups a second). Null when none is queued
     * at close, or when a failing store's next probe is due.
     */
    private Pending<?> next() throws InterruptedException {
        Pending<?> job;
        do {
            if (closing) {
                job = queue.poll();
            } else if (health == StoreHealth.OK) {
                job = queue.take();
            } else {
                job = queue.poll(Math.max(0, PROBE_NANOS - (System.nanoTime() - lastAttemptNanos)), TimeUnit.NANOSECONDS);
            }
        } while (job == WAKE);
        return job;
    }

    private void upkeep() {
        lastUpkeepNanos = System.nanoTime();
        workSinceUpkeep = false;
        commitAndHandOver(List.of(upkeep), true);
        afterUpkeep.run();
    }

    private void commitAndHandOver(List<Pending<?>> batch, boolean isUpkeep) {
        Runnable answers;
        commits.lock();
        try {
            answers = commit(batch, isUpkeep);
        } finally {
            commits.unlock();
        }
        handOver(answers); // before afterCommit, which may hold the next commit: this batch's callers need not wait
        afterCommit.run();
    }

    /** Hands a committed batch's answers to the announcer; waits while it is {@code announcements}' length behind. */
    private void handOver(Runnable answers) {
        while (true) {
            try {
                announcements.put(answers);
                return;
            } catch (InterruptedException e) {
                // only the announcer's stop ends the hand-over: a batch's answers are never dropped
            }
        }
    }

    /** The announcer's loop: each committed batch's answers and announcements, in commit order. */
    private void announce() {
        while (true) {
            Runnable next;
            try {
                next = announcements.take();
            } catch (InterruptedException e) {
                continue; // only the writer's last hand-over stops the announcer
            }
            if (next == END) {
                return;
            }
            try {
                next.run();
            } catch (Throwable e) { // even an Error: a dead announcer would leave every later caller waiting
                LOG.log(Level.SEVERE, "announcing a commit failed", e);
            }
        }
    }

    /** A write of one page that changes nothing: the schema version, set to what it is. */
    private static Void probe(Tx tx) throws SQLException {
        tx.statements().get("PRAGMA user_version = " + Migrations.latest()).execute();
        return null;
    }

    /**
     * Runs the batch in one transaction; returns what is left once the transaction is over:
     * answers and announcements. The upkeep's commit is neither a group commit of the metrics
     * nor a word on the store's health, failed or not: the batches around it say how writes
     * go, and a fold that a nearly full disk refuses must not flip the health between them.
     */
    private Runnable commit(List<Pending<?>> batch, boolean isUpkeep) {
        long start = System.nanoTime();
        lastAttemptNanos = start;
        Object[] results = new Object[batch.size()];
        Throwable[] failures = new Throwable[batch.size()];
        boolean full = false;
        try {
            if (tx == null) {
                tx = connect();
            }
            if (isUpkeep) {
                syncCommits(tx, false);
            }
            for (int i = 0; i < batch.size(); i++) {
                tx.statements().get("SAVEPOINT job").execute();
                try {
                    results[i] = batch.get(i).job().run(tx);
                    tx.statements().get("RELEASE job").execute();
                    tx.keepJob();
                } catch (SQLException | RuntimeException e) {
                    failures[i] = e;
                    full |= isFull(e);
                    undo(tx, e);
                }
            }
            tx.statements().connection().commit();
            if (isUpkeep) {
                syncCommits(tx, true); // else startOver, below: a new connection syncs its commits
            }
        } catch (SQLException e) {
            if (isUpkeep) {
                upkeepRan(System.nanoTime() - start, e);
            } else {
                health(isFull(e) ? StoreHealth.FULL : StoreHealth.FAILING, e);
            }
            startOver();
            return () -> batch.forEach(p -> p.result().completeExceptionally(e));
        }
        long ended = System.nanoTime();
        if (isUpkeep) {
            upkeepRan(ended - start, failures[0]);
        } else {
            observer.committed(batch.size(), ended - start);
            health(full ? StoreHealth.FULL : StoreHealth.OK, null); // before the answers: who sees one sees the health
        }
        List<Envelope> committed = tx.drainCommitted();
        List<Delivered> deliveries = tx.drainDeliveries();
        return () -> {
            if (!isUpkeep) {
                observer.announcing(ended - start, ended);
            }
            for (int i = 0; i < batch.size(); i++) {
                complete(batch.get(i), results[i], failures[i]);
            }
            for (Envelope envelope : committed) {
                try {
                    notifier.committed(envelope);
                } catch (Throwable e) { // one listener's failure must not keep the envelope from the others
                    LOG.log(Level.WARNING, "notifier failed for envelope " + envelope.id(), e);
                }
            }
            for (Delivered delivered : deliveries) {
                try {
                    notifier.delivered(delivered.envelopes(), delivered.at());
                } catch (Throwable e) {
                    LOG.log(Level.WARNING, "notifier failed for " + delivered.envelopes().size() + " deliveries", e);
                }
            }
        };
    }

    /**
     * Rolls one failed job back to its savepoint. When that fails, SQLite has already
     * rolled the whole transaction back: the batch fails, with the job's failure as cause.
     */
    private static void undo(Tx tx, Exception failure) throws SQLException {
        if (failure instanceof SQLException) {
            tx.statements().discard();
        }
        try {
            tx.statements().get("ROLLBACK TO job").execute();
            tx.statements().get("RELEASE job").execute();
        } catch (SQLException e) {
            SQLException lost = new SQLException("the transaction was lost with a failed job", failure);
            lost.addSuppressed(e);
            throw lost;
        }
        tx.dropJob();
    }

    /** Starts over on a new connection after a failed commit: nothing of the old one can be trusted. */
    private void startOver() {
        if (tx != null) {
            tx.statements().close(); // rolls back whatever SQLite still had open
            tx = null;
        }
        try {
            tx = connect();
        } catch (SQLException reopen) {
            LOG.log(Level.FINE, "cannot open a new writer connection yet; the next commit tries again", reopen);
        }
    }

    /**
     * Whether the connection's commits wait for the disk. Changed between transactions only
     * (SQLite refuses it inside one): out of the empty one the driver opens after each commit,
     * and into a new one.
     */
    private static void syncCommits(Tx tx, boolean synced) throws SQLException {
        Connection connection = tx.statements().connection();
        connection.setAutoCommit(true);
        tx.statements().get(synced ? Connections.SYNCED_COMMITS : Connections.UNSYNCED_COMMITS).execute();
        connection.setAutoCommit(false);
    }

    private Tx connect() throws SQLException {
        Connection connection = opener.open();
        try {
            connection.setAutoCommit(false);
        } catch (SQLException e) {
            connection.close();
            throw e;
        }
        return new Tx(new Statements(connection));
    }

    /**
     * Records how the upkeep's run of {@code nanos} went ({@code failure} null when it committed):
     * for the observer, and in the log, which has the first failure of a run at WARNING and the
     * run's end: one that fails every interval (a nearly full disk, a damaged index) is seen once,
     * not ten times a second, and not only at FINE.
     */
    private void upkeepRan(long nanos, Throwable failure) {
        observer.upkept(nanos);
        if (failure == null) {
            if (upkeepFailing) {
                upkeepFailing = false;
                LOG.info(upkeepWhat + " works again");
            }
        } else if (upkeepFailing) {
            LOG.log(Level.FINE, upkeepWhat + " failed again", failure);
        } else {
            upkeepFailing = true;
            Throwable cause = failure;
            while (cause.getCause() != null) {
                cause = cause.getCause(); // the first failure says why; "the transaction was lost" does not
            }
            LOG.log(Level.WARNING, upkeepWhat + " failed (" + cause.getMessage() + "); it is tried again after"
                    + " its interval, and this is logged again when it works", failure);
        }
    }

    /** Records how the last commit went; logs only changes, so a full disk does not flood the log. */
    private void health(StoreHealth now, SQLException cause) {
        StoreHealth before = health;
        health = now;
        if (now == before) {
            if (cause != null) {
                LOG.log(Level.FINE, "group commit failed again", cause);
            }
            return;
        }
        switch (now) {
            case OK -> {
                LOG.info("the store commits again");
                recoveryListeners.forEach(l -> Thread.ofVirtual().name("parley-writer-recovered").start(l));
            }
            case FULL -> LOG.log(Level.SEVERE, "the disk is full: writes are refused until space is freed", cause);
            case FAILING -> LOG.log(Level.SEVERE, "group commit failed: writes are refused until a commit works", cause);
        }
    }

    private static boolean isFull(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLException s && (s.getErrorCode() & 0xff) == SQLITE_FULL) {
                return true;
            }
        }
        return false;
    }

    @SuppressWarnings("unchecked")
    private static <T> void complete(Pending<T> pending, Object result, Throwable failure) {
        if (failure != null) {
            pending.result().completeExceptionally(failure);
        } else {
            pending.result().complete((T) result);
        }
    }

    /** Stops taking work, commits everything already queued, then stops the thread and closes the connection. */
    @Override
    public void close() {
        closing = true;
        // Wakes a writer waiting for work; if the queue is full, the writer is not waiting, and it
        // sees closing once it has drained it.
        queue.offer(WAKE);
        try {
            thread.join();
            announcer.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        if (tx != null) {
            tx.statements().close();
        }
    }

    /**
     * What a job sees of the transaction: statements, inbox heads (the last seq per inbox,
     * kept in memory because only this thread assigns seqs), the last audit id, and envelopes
     * to announce after the commit. State staged by a job is kept only if the job succeeds; an
     * audit id taken by a job that failed is not given again (ids need only grow).
     */
    static final class Tx {
        private final Statements statements;
        private final Map<NodeId, Long> heads = new HashMap<>();
        private final Map<NodeId, Long> stagedHeads = new HashMap<>();
        private final List<Envelope> stagedEnvelopes = new ArrayList<>();
        private final List<Envelope> committed = new ArrayList<>();
        private final List<Delivered> stagedDeliveries = new ArrayList<>();
        private final List<Delivered> deliveries = new ArrayList<>();
        /** The last audit id given; read from the store at the first. */
        private long auditId = -1;

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

        /**
         * The id of the next audit entry, in the audit table or in an envelope's row
         * ({@link Ledger#UNCOPIED_AUDIT}): one sequence for both, so that the log's order is
         * the order of its writes wherever an entry waits to be copied.
         */
        long nextAuditId() throws SQLException {
            if (auditId < 0) {
                var statement = statements.get("SELECT max((SELECT coalesce(max(id), 0) FROM audit),"
                        + " (SELECT coalesce(max(id), 0) FROM (" + Ledger.UNCOPIED_AUDIT + ")))");
                try (var rs = statement.executeQuery()) {
                    rs.next();
                    auditId = rs.getLong(1);
                }
            }
            return ++auditId;
        }

        void announce(Envelope envelope) {
            stagedEnvelopes.add(envelope);
        }

        /** Announces, after the commit, that {@code envelopes} were marked delivered at {@code at}. */
        void delivered(List<Envelope> envelopes, Instant at) {
            if (!envelopes.isEmpty()) {
                stagedDeliveries.add(new Delivered(envelopes, at));
            }
        }

        private long head(NodeId inbox) throws SQLException {
            Long known = heads.get(inbox);
            if (known != null) {
                return known;
            }
            var statement = statements.get(InboxOrder.HEAD);
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
            deliveries.addAll(stagedDeliveries);
            stagedDeliveries.clear();
        }

        private void dropJob() {
            stagedHeads.clear();
            stagedEnvelopes.clear();
            stagedDeliveries.clear();
        }

        private List<Envelope> drainCommitted() {
            List<Envelope> out = List.copyOf(committed);
            committed.clear();
            return out;
        }

        private List<Delivered> drainDeliveries() {
            List<Delivered> out = List.copyOf(deliveries);
            deliveries.clear();
            return out;
        }
    }

    /** Envelopes a job marked delivered, announced once the transaction is durable. */
    private record Delivered(List<Envelope> envelopes, Instant at) {
    }
}
