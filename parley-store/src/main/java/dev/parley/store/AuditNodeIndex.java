package dev.parley.store;

import dev.parley.core.ParleyException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The audit log's index by node (an entry's actor and its target), kept in a file of its own
 * beside the store ({@value #FILE_NAME}) by a thread of its own.
 *
 * <p>Why a file of its own: keyed by node first, the index takes each fold's entries at one
 * place per node, and folding 100 ms of a busy hub's entries into it in the store held the one
 * writer about 9 ms ten times a second, every send waiting behind it (BENCHMARKS.md, "Issue 15,
 * stop 41"). Here that work has its own connection and lock, beside the writer.
 *
 * <p>What it holds is derived: {@code (node, id)} for the actor and the target of every folded
 * entry up to {@code mark}, written in the same transaction as the mark. Folded entries are a
 * prefix of the audit ids (the writer draws ids in order and each fold takes every entry drawn
 * before it), so queries find what lies past the mark by position in the audit table
 * ({@link SqliteStore#audit}). A crash loses at most the last pass, which the next one takes
 * again; a file that is damaged, that indexes another store, or that is ahead of the store (an
 * older copy of it restored) is built again from the first entry. Its writes are synced at its
 * checkpoints only ({@code synchronous = NORMAL}): a power loss can take back its last passes,
 * never the store's data. The thread passes after the writer's folds, at most once an interval
 * and at least once a minute (an idle hub's index reads nothing in between). A pass that fails (a
 * full disk) is tried again at the next; until one succeeds the queries read more entries by
 * position.
 */
final class AuditNodeIndex implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(AuditNodeIndex.class.getName());
    static final String FILE_NAME = "audit-nodes.db";
    /** The schema name under which the store's read connections attach the file. */
    static final String SCHEMA = "audit_nodes";
    /** The schema name under which this index's connection attaches the store, which it only reads. */
    private static final String STORE = "store";
    /** Entries one read of a pass takes from the audit table. */
    private static final int PAGE = 4096;
    /** How often postings of entries pruned from the audit table are dropped. */
    private static final long SWEEP_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final Connection connection;
    private final Statements statements;
    /** Set by {@link #start}: the store's read pool, whose gate this index's reads of the store pass too. */
    private ReadPool readers;
    private final long everyNanos;
    /** Serializes passes: the thread's and {@link #catchUp()}'s. */
    private final Object passes = new Object();
    private final Thread thread;
    /**
     * Released after each fold of the writer: an idle hub's index waits on it instead of reading
     * every interval. One permit at the start: the first pass takes in what earlier runs folded.
     */
    private final Semaphore folds = new Semaphore(1);
    private volatile boolean closed;
    private boolean failing;
    /** The last entry taken in; guarded by {@code passes}. */
    private long mark;
    private long lastSweep;
    /** No posting below this id is left (0 until the first sweep of this run). */
    private long sweptBelow;

    private AuditNodeIndex(Connection connection, long mark, Duration every) {
        this.connection = connection;
        this.statements = new Statements(connection);
        this.mark = mark;
        this.everyNanos = every.toNanos();
        this.lastSweep = System.nanoTime();
        this.thread = Thread.ofPlatform().name(SqliteStore.AUDIT_INDEX_THREAD).daemon(true).unstarted(this::run);
    }

    /**
     * Opens (creating, or building again when it cannot be trusted) the index of the store in the
     * file {@code store}, whose schema is up to date; it takes in new entries at most every {@code every}.
     * The thread is started by {@link #start}, once the read pool that attaches the file is open.
     */
    static AuditNodeIndex open(Path store, Duration every) throws SQLException {
        Path file = store.resolveSibling(FILE_NAME);
        Opened opened;
        try {
            opened = connect(file, store);
        } catch (SQLException damaged) {
            LOG.log(Level.WARNING, "the audit's node index " + file + " cannot be read (" + damaged.getMessage()
                    + "); building it again from the audit log");
            remove(file);
            opened = connect(file, store);
        }
        return new AuditNodeIndex(opened.connection(), opened.mark(), every);
    }

    /** The index's connection, with the store attached, and the mark to go on from. */
    private record Opened(Connection connection, long mark) {
    }

    private static Opened connect(Path file, Path store) throws SQLException {
        Connection connection = Connections.open(file, Connections.Role.AUDIT_NODE_INDEX);
        try {
            Connections.attach(connection, store, STORE);
            return new Opened(connection, prepare(connection));
        } catch (SQLException e) {
            connection.close();
            throw e;
        }
    }

    /**
     * Creates the schema when missing and returns the mark to go on from: 0 when the file must be
     * built again, because it indexes another store or a later state of this one.
     */
    private static long prepare(Connection connection) throws SQLException {
        try (Statement s = connection.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS postings (node TEXT NOT NULL, id INTEGER NOT NULL,"
                    + " PRIMARY KEY (node, id)) WITHOUT ROWID");
            s.execute("CREATE TABLE IF NOT EXISTS indexed (one INTEGER PRIMARY KEY CHECK (one = 1),"
                    + " store TEXT NOT NULL, mark INTEGER NOT NULL)");
            String storeIdentity;
            long newestAuditId;
            try (var rs = s.executeQuery("SELECT (SELECT id FROM " + STORE + ".store_identity),"
                    + " (SELECT coalesce(max(id), 0) FROM " + STORE + ".audit)")) {
                storeIdentity = rs.getString(1);
                newestAuditId = rs.getLong(2);
            }
            String indexedStore = null;
            long mark = 0;
            try (var rs = s.executeQuery("SELECT store, mark FROM indexed")) {
                if (rs.next()) {
                    indexedStore = rs.getString(1);
                    mark = rs.getLong(2);
                }
            }
            if (storeIdentity.equals(indexedStore) && mark <= newestAuditId) {
                return mark;
            }
            if (indexedStore != null) {
                LOG.info("the audit's node index was made for " + (storeIdentity.equals(indexedStore)
                        ? "a later state of this store" : "another store") + "; building it again from the audit log");
            }
            return Connections.inTransaction(connection, () -> {
                s.execute("DELETE FROM postings");
                s.execute("DELETE FROM indexed");
                try (var insert = connection.prepareStatement("INSERT INTO indexed (one, store, mark) VALUES (1, ?, 0)")) {
                    insert.setString(1, storeIdentity);
                    insert.executeUpdate();
                }
                return 0L;
            });
        }
    }

    private static void remove(Path file) {
        try {
            for (String suffix : List.of("", "-wal", "-shm")) {
                Files.deleteIfExists(file.resolveSibling(file.getFileName() + suffix));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove the damaged audit node index " + file, e);
        }
    }

    /** Starts keeping the index from the entries {@code readers} read. */
    void start(ReadPool readers) {
        this.readers = readers;
        thread.start();
    }

    /** The writer folded (or tried to): there may be entries to take in. */
    void folded() {
        folds.release();
    }

    private void run() {
        while (!closed) {
            try {
                TimeUnit.NANOSECONDS.sleep(everyNanos); // at most one pass an interval, whatever the folds
                // the sweep's pace bounds the wait: pruned postings go within a minute on an idle hub too
                folds.tryAcquire(SWEEP_NANOS, TimeUnit.NANOSECONDS);
                folds.drainPermits();
                catchUp();
                if (failing) {
                    LOG.info("the audit's node index is being kept again");
                    failing = false;
                }
            } catch (InterruptedException e) {
                return; // closed
            } catch (SQLException | ParleyException e) {
                statements.discard();
                if (closed) {
                    return; // a read the close interrupted
                }
                if (!failing) {
                    LOG.log(Level.WARNING, "the audit's node index could not take in new entries (" + e.getMessage()
                            + "); queries by node read them from the audit log until it can", e);
                    failing = true;
                }
            }
        }
    }

    /** Takes in every entry folded so far; what the thread does after the writer's folds, and tests at once. */
    void catchUp() throws SQLException {
        synchronized (passes) {
            int taken;
            do {
                taken = readers.gated(this::pass);
            } while (taken == PAGE && !closed); // a first build over a long log stops at a close
            if (System.nanoTime() - lastSweep >= SWEEP_NANOS) {
                readers.gated(this::sweepHeld);
            }
        }
    }

    /**
     * Writes the postings of the next page of folded entries and moves the mark past it, in one
     * transaction that reads the store through its attachment: one snapshot of it, and no entry
     * copied through JDBC. Returns how many entries it took.
     */
    private int pass() throws SQLException {
        Page page = Connections.inTransaction(connection, () -> {
            var select = statements.get("SELECT count(*), max(id) FROM (SELECT id FROM " + STORE
                    + ".audit WHERE id > ? AND folded = 1 ORDER BY id LIMIT ?)");
            select.setLong(1, mark);
            select.setInt(2, PAGE);
            Page next;
            try (var rs = select.executeQuery()) {
                next = new Page(rs.getInt(1), rs.getLong(2));
            }
            if (next.count() > 0) {
                var insert = statements.get("INSERT OR IGNORE INTO postings (node, id)"
                        + " SELECT actor, id FROM " + STORE + ".audit WHERE id > ?1 AND id <= ?2 AND folded = 1"
                        + " UNION ALL SELECT target, id FROM " + STORE + ".audit"
                        + " WHERE id > ?1 AND id <= ?2 AND folded = 1 AND target <> actor");
                insert.setLong(1, mark);
                insert.setLong(2, next.last());
                insert.executeUpdate();
                var update = statements.get("UPDATE indexed SET mark = ?");
                update.setLong(1, next.last());
                update.executeUpdate();
            }
            return next;
        });
        if (page.count() > 0) {
            mark = page.last(); // once committed
        }
        return page.count();
    }

    /** How many entries a pass took, and the id of the last. */
    private record Page(int count, long last) {
    }

    /** Drops the postings of entries the audit's retention has pruned: queries pass them by, but they take room. */
    void sweep() throws SQLException {
        synchronized (passes) {
            readers.gated(this::sweepHeld);
        }
    }

    private Void sweepHeld() throws SQLException {
        lastSweep = System.nanoTime();
        long oldest;
        // no entry left: every posting is of a pruned one
        try (var rs = statements.get("SELECT coalesce(min(id), 9223372036854775807) FROM " + STORE + ".audit")
                .executeQuery()) {
            oldest = rs.getLong(1);
        }
        if (oldest > sweptBelow) { // else nothing was pruned since: the delete reads every posting
            var delete = statements.get("DELETE FROM postings WHERE id < ?");
            delete.setLong(1, oldest);
            delete.executeUpdate();
            sweptBelow = oldest;
        }
        return null;
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        statements.close();
    }
}
