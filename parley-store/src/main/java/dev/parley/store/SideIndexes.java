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
import java.util.Locale;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Two indexes of the store kept in a file of their own beside it ({@value #FILE_NAME}) by a
 * thread of its own: the audit log's index by node (an entry's actor and its target) and the
 * inboxes' order ({@link InboxOrder}).
 *
 * <p>Why a file of its own: both are keyed by node first, so each takes a batch of new rows at
 * one place per node, and folding 100 ms of a busy hub's rows into them in the store held the
 * one writer for milliseconds ten times a second, every send waiting behind it: the audit's index
 * about 9 ms (BENCHMARKS.md, "Issue 15, stop 41"), the order 2.5-3 ms of a 5-8 ms fold (stops 45
 * and 51). Here that work has its own connection and lock, beside the writer.
 *
 * <p>What it holds is derived, each index up to a mark written in the same transaction: {@code
 * (node, id)} for the actor and the target of every folded audit entry up to {@code audit_mark},
 * and {@code (to_node, seq, pos)} for every envelope up to position {@code order_mark}. Folded
 * entries are a prefix of the audit ids and committed envelopes a prefix of the positions (the
 * one writer draws both in order, and each fold takes every entry drawn before it), so queries
 * find what lies past a mark by position in the store ({@link SqliteStore#audit}, {@link
 * InboxOrder}). A crash loses at most the last pass, which the next one takes again; a file that
 * is damaged, that indexes another store, or that is ahead of the store (an older copy of it
 * restored) is built again from the first row. Its writes are synced at its checkpoints only
 * ({@code synchronous = NORMAL}): a power loss can take back its last passes, never the store's
 * data. A pass that fails (a full disk) is tried again at the next; until one succeeds, queries
 * read more rows by position.
 *
 * <p>When: the order is caught up before the store opens ({@link #start}), because every read of
 * an inbox and the writer's first send to each inbox read what lies past its mark; then the
 * thread passes after the writer's folds, at most once an interval and at least once a minute (an
 * idle hub's indexes read nothing in between); a clean close takes the order's last envelopes in.
 */
final class SideIndexes implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(SideIndexes.class.getName());
    static final String FILE_NAME = "side-indexes.db";
    /** The file of the audit's node index before the inboxes' order joined it: removed at open. */
    private static final String FORMER_FILE_NAME = "audit-nodes.db";
    /** The schema name under which the store's connections attach the file. */
    static final String SCHEMA = "side";
    /** The schema name under which this file's connection attaches the store, which it only reads. */
    private static final String STORE = "store";
    /** Rows one read of a pass takes from the store, for each index. */
    private static final int PAGE = 4096;
    /** How often postings of entries pruned from the audit table are dropped. */
    private static final long SWEEP_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final Connection connection;
    private final Statements statements;
    /** Set by {@link #start}: the store's read pool, whose gate this file's reads of the store pass too. */
    private ReadPool readers;
    private final long everyNanos;
    /** Serializes passes: the thread's and {@link #catchUp()}'s. */
    private final Object passes = new Object();
    private final Thread thread;
    /**
     * Released after each fold of the writer: an idle hub's indexes wait on it instead of reading
     * every interval. One permit at the start: the first pass takes in what earlier runs folded.
     */
    private final Semaphore folds = new Semaphore(1);
    private volatile boolean closed;
    private boolean failing;
    /** The last audit entry and the last envelope's position taken in; guarded by {@code passes}. */
    private Marks marks;
    private long lastSweep;
    /** No posting below this id is left (0 until the first sweep of this run). */
    private long sweptBelow;

    private SideIndexes(Connection connection, Marks marks, Duration every) {
        this.connection = connection;
        this.statements = new Statements(connection);
        this.marks = marks;
        this.everyNanos = every.toNanos();
        this.lastSweep = System.nanoTime();
        this.thread = Thread.ofPlatform().name(SqliteStore.SIDE_INDEXES_THREAD).daemon(true).unstarted(this::run);
    }

    /** How far each index has taken rows in: an audit id and an envelope's position. */
    private record Marks(long audit, long order) {
        static final Marks NONE = new Marks(0, 0);
    }

    /**
     * Opens (creating, or building again when it cannot be trusted) the indexes of the store in
     * the file {@code store}, whose schema is up to date; they take in new rows at most every
     * {@code every}. Nothing is taken in until {@link #start}, once the read pool is open.
     */
    static SideIndexes open(Path store, Duration every) throws SQLException {
        remove(store.resolveSibling(FORMER_FILE_NAME));
        Path file = store.resolveSibling(FILE_NAME);
        Opened opened;
        try {
            opened = connect(file, store);
        } catch (SQLException damaged) {
            LOG.log(Level.WARNING, "the store's side indexes " + file + " cannot be read (" + damaged.getMessage()
                    + "); building them again from the store");
            remove(file);
            opened = connect(file, store);
        }
        return new SideIndexes(opened.connection(), opened.marks(), every);
    }

    /** The file's connection, with the store attached, and the marks to go on from. */
    private record Opened(Connection connection, Marks marks) {
    }

    private static Opened connect(Path file, Path store) throws SQLException {
        Connection connection = Connections.open(file, Connections.Role.SIDE_INDEXES);
        try {
            Connections.attach(connection, store, STORE);
            return new Opened(connection, prepare(connection));
        } catch (SQLException e) {
            connection.close();
            throw e;
        }
    }

    /**
     * Creates the schema when missing and returns the marks to go on from: none when the file must
     * be built again, because it indexes another store or a later state of this one.
     */
    private static Marks prepare(Connection connection) throws SQLException {
        try (Statement s = connection.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS postings (node TEXT NOT NULL, id INTEGER NOT NULL,"
                    + " PRIMARY KEY (node, id)) WITHOUT ROWID");
            s.execute("CREATE TABLE IF NOT EXISTS inbox_order (to_node TEXT NOT NULL, seq INTEGER NOT NULL,"
                    + " pos INTEGER NOT NULL, PRIMARY KEY (to_node, seq)) WITHOUT ROWID");
            s.execute("CREATE TABLE IF NOT EXISTS indexed (one INTEGER PRIMARY KEY CHECK (one = 1),"
                    + " store TEXT NOT NULL, audit_mark INTEGER NOT NULL, order_mark INTEGER NOT NULL)");
            String storeIdentity;
            Marks newest;
            try (var rs = s.executeQuery("SELECT (SELECT id FROM " + STORE + ".store_identity),"
                    + " (SELECT coalesce(max(id), 0) FROM " + STORE + ".audit),"
                    + " (SELECT coalesce(max(pos), 0) FROM " + STORE + ".envelopes)")) {
                storeIdentity = rs.getString(1);
                newest = new Marks(rs.getLong(2), rs.getLong(3));
            }
            String indexedStore = null;
            Marks marks = Marks.NONE;
            try (var rs = s.executeQuery("SELECT store, audit_mark, order_mark FROM indexed")) {
                if (rs.next()) {
                    indexedStore = rs.getString(1);
                    marks = new Marks(rs.getLong(2), rs.getLong(3));
                }
            }
            if (storeIdentity.equals(indexedStore) && marks.audit() <= newest.audit() && marks.order() <= newest.order()) {
                return marks;
            }
            if (indexedStore != null) {
                LOG.info("the store's side indexes were made for " + (storeIdentity.equals(indexedStore)
                        ? "a later state of this store" : "another store") + "; building them again from the store");
            }
            return Connections.inTransaction(connection, () -> {
                s.execute("DELETE FROM postings");
                s.execute("DELETE FROM inbox_order");
                s.execute("DELETE FROM indexed");
                try (var insert = connection.prepareStatement("INSERT INTO indexed (one, store, audit_mark, order_mark)"
                        + " VALUES (1, ?, 0, 0)")) {
                    insert.setString(1, storeIdentity);
                    insert.executeUpdate();
                }
                return Marks.NONE;
            });
        }
    }

    /**
     * Attaches the side indexes of the store in {@code store} to {@code connection}, a connection
     * to that store, under {@link #SCHEMA}: every connection that reads an inbox needs them, the
     * writer's too (the head of an inbox it has not sent to yet in this run).
     */
    static void attach(Connection connection, Path store) throws SQLException {
        Connections.attach(connection, store.resolveSibling(FILE_NAME), SCHEMA);
    }

    private static void remove(Path file) {
        try {
            for (String suffix : List.of("", "-wal", "-shm")) {
                Files.deleteIfExists(file.resolveSibling(file.getFileName() + suffix));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove " + file, e);
        }
    }

    /**
     * Catches the inboxes' order up with the store (a long history's first build takes about 3 s
     * a million envelopes of 1 KiB on the 2-core test machine, and is logged), then starts keeping
     * both indexes from the rows {@code readers} read. A catch-up that fails (a full disk) does not
     * keep the store from opening: it is logged, reads take the rest by position, and the thread
     * tries again.
     */
    void start(ReadPool readers) {
        this.readers = readers;
        synchronized (passes) {
            try {
                long started = System.nanoTime();
                long taken = readers.gated(this::passOrder); // a page at a time, each its own transaction
                if (taken == PAGE) { // a first build, or a long way behind: the hub serves once it is done
                    LOG.info("taking the store's envelopes into the inboxes' order beside it before serving");
                    for (int page = PAGE; page == PAGE; taken += page) {
                        page = readers.gated(this::passOrder);
                    }
                    LOG.info(String.format(Locale.ROOT, "the inboxes' order took in %,d envelopes in %.1f s",
                            taken, (System.nanoTime() - started) / 1e9));
                }
            } catch (SQLException e) {
                statements.discard();
                failed(e);
            }
        }
        thread.start();
    }

    /** The writer folded (or tried to): there may be rows to take in. */
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
                    LOG.info("the store's side indexes are being kept again");
                    failing = false;
                }
            } catch (InterruptedException e) {
                return; // closed
            } catch (SQLException | ParleyException e) {
                statements.discard();
                if (closed) {
                    return; // a read the close interrupted
                }
                failed(e);
            }
        }
    }

    /** Logs the first failure of a run of them; the next pass that works says so. */
    private void failed(Exception e) {
        if (!failing) {
            LOG.log(Level.WARNING, "the store's side indexes could not take in new rows (" + e.getMessage()
                    + "); reads take them from the store by position until they can", e);
            failing = true;
        }
    }

    /** Takes in every envelope committed and every entry folded so far; what the thread does after the writer's folds, and tests at once. */
    void catchUp() throws SQLException {
        synchronized (passes) {
            boolean more;
            do { // a first build over a long history stops at a close
                more = readers.gated(this::passOrder) == PAGE;
                more |= readers.gated(this::passAudit) == PAGE;
            } while (more && !closed);
            if (System.nanoTime() - lastSweep >= SWEEP_NANOS) {
                readers.gated(this::sweepHeld);
            }
        }
    }

    /** Writes the order of the next page of envelopes and moves the order's mark past it. Returns how many it took. */
    private int passOrder() throws SQLException {
        Page page = pass("SELECT count(*), max(pos) FROM (SELECT pos FROM " + STORE + ".envelopes WHERE pos > ?"
                        + " ORDER BY pos LIMIT ?)", marks.order(),
                "INSERT INTO inbox_order (to_node, seq, pos) SELECT to_node, seq, pos FROM " + STORE + ".envelopes"
                        + " WHERE pos > ?1 AND pos <= ?2 ORDER BY to_node, seq",
                "UPDATE indexed SET order_mark = ?");
        if (page.count() > 0) {
            marks = new Marks(marks.audit(), page.last()); // once committed
        }
        return page.count();
    }

    /** Writes the postings of the next page of folded audit entries and moves the audit's mark past it. */
    private int passAudit() throws SQLException {
        Page page = pass("SELECT count(*), max(id) FROM (SELECT id FROM " + STORE + ".audit WHERE id > ? AND folded = 1"
                        + " ORDER BY id LIMIT ?)", marks.audit(),
                "INSERT OR IGNORE INTO postings (node, id)"
                        + " SELECT actor, id FROM " + STORE + ".audit WHERE id > ?1 AND id <= ?2 AND folded = 1"
                        + " UNION ALL SELECT target, id FROM " + STORE + ".audit"
                        + " WHERE id > ?1 AND id <= ?2 AND folded = 1 AND target <> actor",
                "UPDATE indexed SET audit_mark = ?");
        if (page.count() > 0) {
            marks = new Marks(page.last(), marks.order());
        }
        return page.count();
    }

    /**
     * One index's pass, in one transaction that reads the store through its attachment: one
     * snapshot of it, and no row copied through JDBC. {@code find} gives how many rows lie past
     * {@code mark} (at most {@link #PAGE}) and the key of the last, {@code insert} takes the rows
     * after the mark up to that key in, {@code moveMark} records it.
     */
    private Page pass(String find, long mark, String insert, String moveMark) throws SQLException {
        return Connections.inTransaction(connection, () -> {
            var select = statements.get(find);
            select.setLong(1, mark);
            select.setInt(2, PAGE);
            Page next;
            try (var rs = select.executeQuery()) {
                next = new Page(rs.getInt(1), rs.getLong(2));
            }
            if (next.count() > 0) {
                var take = statements.get(insert);
                take.setLong(1, mark);
                take.setLong(2, next.last());
                take.executeUpdate();
                var update = statements.get(moveMark);
                update.setLong(1, next.last());
                update.executeUpdate();
            }
            return next;
        });
    }

    /** How many rows a pass took, and the key of the last. */
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

    /**
     * Stops the thread, then takes the envelopes written since its last pass into the order, a
     * page at most (about 100 ms of writes; after the writer's close, so all of them): the next
     * start finds the order caught up, as the writer leaves nothing to fold.
     */
    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (readers != null) {
            synchronized (passes) {
                try {
                    readers.gated(this::passOrder);
                } catch (SQLException | ParleyException e) {
                    LOG.log(Level.FINE, "the order's last pass at close failed; the next start takes the rest in", e);
                }
            }
        }
        statements.close();
    }
}
