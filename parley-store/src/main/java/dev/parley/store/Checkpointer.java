package dev.parley.store;

import java.io.IOException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Copies the WAL back into the database on its own connection and thread, and keeps the
 * WAL from growing without bound.
 *
 * <p>The writer has automatic checkpoints switched off: left on, every thousandth page
 * would make one unlucky commit copy and sync megabytes while every sender waits behind
 * it. A passive checkpoint every 250 ms runs beside the writer and readers without
 * blocking either, but it never restarts the log: SQLite starts writing the WAL from its
 * beginning again only when a writer begins while no reader uses the WAL, which under
 * steady commits and streams never happens, so the file grew by every commit. Once the
 * WAL holds {@code restartAtBytes} ({@link #RESTART_AT_BYTES} unless a test says
 * otherwise), the checkpointer therefore runs a passive checkpoint at once, then holds the
 * writer between two group commits and the read pool between two reads (both in-process:
 * nothing waits inside SQLite) for a RESTART checkpoint: it copies the few frames the
 * passive one left, finds no reader in the WAL, and the writer's next commit starts the log
 * over and cuts the file back to
 * {@code restartAtBytes} ({@code journal_size_limit}). So a file growing past that means the
 * log has grown past it again, which a look at the file's size notices: this thread looks
 * every {@link #LOOK_MILLIS} ms, and so does the writer after a commit (see below), one
 * look for both at most that often. The look is not made after every group commit, although
 * that would notice sooner: it is a {@code stat}, and on Linux 6.13 and later (ext4, xfs,
 * btrfs) a file whose timestamps were read takes a fine-grained time at its next write, so
 * the commit after each look also writes the WAL's inode in its fsync, one more device wait
 * (here fsync took 150 µs, 210 µs with a stat between). Looked at every 10 ms, at most 100
 * commits a second pay that, and the WAL gets at most 10 ms of commits further past the
 * threshold. Once a passive checkpoint has copied the whole WAL and no commit came since it
 * began, there is nothing to look at until the writer's next commit, which this thread then
 * waits for: an idle hub's checkpointer took about 1 % of a core looking (stop 55).
 *
 * <p>Before it holds anyone for a restart, this thread flushes the database file itself
 * ({@link DatabaseFlush}): SQLite syncs the database file after a checkpoint only when the
 * checkpoint reached the log's end, which under steady commits the passive one does not, so the
 * restart's sync flushed the ~32 MB the passive one had copied while the writer and the readers
 * waited: a median hold of 13 ms a restart, up to 20, against 2.5–3 ms with the flush first
 * (BENCHMARKS.md, "Issue 15, stop 50").
 *
 * <p>How fast the restart runs depends on this thread getting a core. On a busy machine the
 * writer can commit many batches before it does, so past {@link #HOLD_FACTOR} times the
 * threshold the writer waits after its commit (up to {@link #HOLD_MAX_MILLIS}) for the next
 * restart: the WAL's bound then holds however the threads are scheduled. Only while restarts
 * work: one that finds a lock (a reader outside the hub, a backup) or fails, or a wait that
 * times out, lets commits go on unheld until a restart succeeds again.
 */
final class Checkpointer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Checkpointer.class.getName());
    private static final long PASSIVE_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    private static final long LOOK_MILLIS = 10;
    /** The default WAL size past which the log is restarted. */
    static final long RESTART_AT_BYTES = 32L << 20;
    /** Past this many times the restart threshold, the writer waits for a restart before its next commit. */
    static final long HOLD_FACTOR = 4;
    /** Longest the writer waits for a restart after one commit: a checkpoint that cannot run must not stop commits. */
    static final long HOLD_MAX_MILLIS = 1_000;
    /** How long a checkpoint waits for a lock inside SQLite; a restart should meet none, the pauses see to that. */
    static final int LOCK_WAIT_MILLIS = 100;

    /**
     * Flushes the database file's written pages to the disk. The store's is {@link #FSYNC}; a
     * test can wrap it to see when it runs.
     */
    @FunctionalInterface
    interface DatabaseFlush {
        void flush(FileChannel database) throws IOException;
    }

    /** {@code fdatasync} of the database file: its pages, not its timestamps. */
    static final DatabaseFlush FSYNC = database -> database.force(false);

    /** One {@code PRAGMA wal_checkpoint} answer: frames in the WAL and frames copied to the database. */
    private record Progress(boolean busy, long walFrames, long copiedFrames) {
    }

    private final Connection connection;
    private final FileChannel database;
    private final DatabaseFlush flush;
    private final Path wal;
    private final Writer writer;
    private final ReadPool readers;
    private final long restartAtBytes;
    private final long pageSize;
    private final Thread thread;
    private volatile boolean closed;
    private boolean failing;
    private long lastPassive;
    /** The WAL file's length at this thread's last look. */
    private long lastSize;
    /** The WAL file's length at the last look of either thread, and when that was; guarded by {@code looks}. */
    private long lookedBytes;
    private long lookedAt;
    private final Object looks = new Object();
    /** After a failed checkpoint the next restart waits a passive period, so the writer is not held again at once. */
    private long noRestartBefore;
    /** The log length a restart last left behind: until the writer starts the log over, there is nothing to restart. */
    private long restartedAt = -1;
    /**
     * A restart was done that the writer's next commit starts the log over after; guarded by
     * {@code this}. A writer held past the bound waits for it.
     */
    private boolean restartPending;
    /** Whether restarts are working, so that holding the writer for one is worth it; guarded by {@code this}. */
    private boolean restartsWork = true;
    /** Group commits so far; guarded by {@code this}. */
    private long commits;
    /** This thread waits for the next commit, the WAL all copied; guarded by {@code this}. */
    private boolean waitingForCommit;
    /** How many times this thread has waited for a commit; guarded by {@code this}. */
    private long commitWaits;

    Checkpointer(Path file, Writer writer, ReadPool readers, long restartAtBytes, DatabaseFlush flush)
            throws SQLException {
        this.connection = Connections.open(file, Connections.Role.CHECKPOINTER);
        this.flush = flush;
        this.wal = file.resolveSibling(file.getFileName() + "-wal");
        this.writer = writer;
        this.readers = readers;
        this.restartAtBytes = restartAtBytes;
        try (Statement statement = connection.createStatement();
             var rs = statement.executeQuery("PRAGMA page_size")) {
            this.pageSize = rs.getLong(1);
        }
        try {
            this.database = FileChannel.open(file, StandardOpenOption.READ);
        } catch (IOException e) {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // the open failed: the caller hears of that
            }
            throw new SQLException("cannot open " + file + " to flush it: " + e.getMessage(), e);
        }
        this.lastPassive = System.nanoTime();
        this.noRestartBefore = lastPassive;
        this.lookedAt = lastPassive - TimeUnit.MILLISECONDS.toNanos(LOOK_MILLIS); // the first look is due
        this.thread = Thread.ofPlatform().name("parley-checkpointer").daemon(true).start(this::run);
    }

    private void run() {
        while (!closed) {
            try {
                Thread.sleep(LOOK_MILLIS);
                long now = System.nanoTime();
                long size = look();
                boolean grownPast = size > restartAtBytes && size > lastSize && now - noRestartBefore >= 0;
                lastSize = size;
                if (!grownPast && now - lastPassive < PASSIVE_NANOS) {
                    continue;
                }
                lastPassive = now;
                long commitsBefore = commitsSoFar();
                Progress passive = checkpoint("PASSIVE");
                if (passive.walFrames() * pageSize >= restartAtBytes && passive.walFrames() != restartedAt
                        && now - noRestartBefore >= 0) {
                    flush.flush(database); // outside the hold: what the passive checkpoint copied
                    restart();
                }
                if (failing) {
                    LOG.info("WAL checkpoints work again");
                    failing = false;
                }
                if (!passive.busy() && passive.copiedFrames() == passive.walFrames()) {
                    awaitCommitAfter(commitsBefore);
                }
            } catch (InterruptedException | ClosedByInterruptException e) {
                return; // close() interrupts the thread, in its sleep or in a flush
            } catch (SQLException | IOException e) {
                // logged once per run of failures: on a full disk every attempt fails the same way
                LOG.log(failing ? Level.FINE : Level.WARNING, "WAL checkpoint failed; retrying", e);
                failing = true;
                restarted(false);
                noRestartBefore = System.nanoTime() + PASSIVE_NANOS;
            }
        }
    }

    /**
     * A group commit ended. Called by the writer, which waits here for the next restart when
     * the WAL is past {@link #HOLD_FACTOR} times the threshold: it looks at the file itself
     * when neither thread did for {@link #LOOK_MILLIS} ms, so the bound holds even while this
     * thread gets no core.
     */
    void committed() {
        long bound = HOLD_FACTOR * restartAtBytes;
        // a look may be older than the restart that cut the file back: only a fresh one holds the writer
        boolean pastBound = look() > bound && walFileBytes() > bound;
        synchronized (this) {
            commits++;
            if (waitingForCommit) {
                notifyAll();
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HOLD_MAX_MILLIS);
            long left = HOLD_MAX_MILLIS;
            while (pastBound && restartsWork && !restartPending && !closed && left > 0) {
                try {
                    wait(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
                left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            }
            if (pastBound && restartsWork && !restartPending && !closed) {
                restartsWork = false;
                LOG.warning("the WAL is past " + HOLD_FACTOR * restartAtBytes + " bytes and no restart came within "
                        + HOLD_MAX_MILLIS + " ms; commits go on without waiting until a restart works again");
            }
            restartPending = false; // the commit that follows starts the log over
        }
    }

    private synchronized long commitsSoFar() {
        return commits;
    }

    /** Waits until a commit comes after the {@code seen}-th (or the close): until then the WAL has nothing new. */
    private synchronized void awaitCommitAfter(long seen) throws InterruptedException {
        waitingForCommit = true;
        commitWaits++;
        try {
            while (commits == seen && !closed) {
                wait();
            }
        } finally {
            waitingForCommit = false;
        }
    }

    /** Whether this thread waits for the next commit now, the whole WAL copied. */
    synchronized boolean waitingForCommit() {
        return waitingForCommit;
    }

    /** How many times this thread has waited for a commit with the whole WAL copied. */
    synchronized long commitWaits() {
        return commitWaits;
    }

    /** A restart worked (or, {@code worked} false, found a lock or failed): whether holding the writer is worth it. */
    private synchronized void restarted(boolean worked) {
        restartsWork = worked;
        restartPending = worked;
        notifyAll();
    }

    private void restart() throws InterruptedException, SQLException {
        long start;
        Progress restart;
        // readers first: the writer goes on committing while the reads in flight end
        try (Pause reads = readers.pause(); Pause commits = writer.pause()) {
            start = System.nanoTime();
            restart = checkpoint("RESTART");
        }
        long held = System.nanoTime() - start;
        if (restart.busy()) {
            noRestartBefore = System.nanoTime() + PASSIVE_NANOS;
        } else {
            restartedAt = restart.walFrames();
        }
        restarted(!restart.busy());
        LOG.fine(() -> String.format("WAL restart checkpoint: %s, %d of %d frames copied, writer held %.1f ms",
                restart.busy() ? "a lock stayed, later again" : "done", restart.copiedFrames(), restart.walFrames(),
                held / 1e6));
    }

    /** The WAL file's length, looked at again only if neither thread did in the last {@link #LOOK_MILLIS} ms. */
    private long look() {
        synchronized (looks) {
            long now = System.nanoTime();
            if (now - lookedAt >= TimeUnit.MILLISECONDS.toNanos(LOOK_MILLIS)) {
                lookedBytes = walFileBytes();
                lookedAt = now;
            }
            return lookedBytes;
        }
    }

    private long walFileBytes() {
        try {
            return Files.size(wal);
        } catch (IOException e) {
            return 0; // no WAL yet, or none after a clean checkpoint
        }
    }

    private Progress checkpoint(String mode) throws SQLException {
        try (Statement statement = connection.createStatement();
             var rs = statement.executeQuery("PRAGMA wal_checkpoint(" + mode + ")")) {
            return new Progress(rs.getInt(1) != 0, rs.getLong(2), rs.getLong(3));
        }
    }

    /** Stops the thread and folds the WAL in once more, so a cleanly stopped hub leaves a small WAL. */
    @Override
    public void close() {
        closed = true;
        synchronized (this) {
            notifyAll(); // a writer waiting for a restart goes on
        }
        thread.interrupt();
        try (Statement statement = connection.createStatement()) {
            thread.join(5_000);
            statement.execute("PRAGMA busy_timeout = 10000"); // nothing is held now: waiting for readers is fine
            checkpoint("TRUNCATE");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (SQLException e) {
            LOG.log(Level.WARNING, "final WAL checkpoint failed; the next start replays the WAL", e);
        }
        try {
            connection.close();
        } catch (SQLException ignored) {
            // closing: nothing to recover
        }
        try {
            database.close();
        } catch (IOException ignored) {
            // closing: nothing to recover
        }
    }
}
