package dev.parley.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The database file is flushed before a restart holds the writer and the readers, not under
 * the hold: the flush of what the passive checkpoint copied was most of a restart's hold.
 * The flush is held here until the test has seen a commit and a read go through meanwhile;
 * a flush that fails is a failed checkpoint.
 */
class CheckpointerTest {
    /** Small, so that the test writes little: the production default is {@link Checkpointer#RESTART_AT_BYTES}. */
    private static final long RESTART_AT = 1L << 20;
    private static final byte[] FILLER = new byte[64 * 1024];

    /** A writer, a read pool and a checkpointer over one file, as {@link SqliteStore#open} puts them together. */
    private record Parts(Writer writer, ReadPool readers, Checkpointer checkpointer) implements AutoCloseable {
        static Parts open(Path file, Checkpointer.DatabaseFlush flush) throws Exception {
            Writer writer = new Writer(() -> {
                var connection = Connections.open(file, Connections.Role.WRITER);
                Connections.limitWal(connection, RESTART_AT);
                Migrations.apply(connection);
                return connection;
            }, envelope -> { }, CommitObserver.NONE, new Writer.Upkeep("nothing", Duration.ofDays(1), tx -> null));
            ReadPool readers = new ReadPool(file, 1);
            Checkpointer checkpointer = new Checkpointer(file, writer, readers, RESTART_AT, flush);
            writer.afterEachCommit(checkpointer::committed);
            writer.submit(tx -> tx.statements().get("CREATE TABLE filler (x BLOB)").executeUpdate());
            return new Parts(writer, readers, checkpointer);
        }

        @Override
        public void close() {
            writer.close();
            checkpointer.close();
            readers.close();
        }
    }

    @Test
    void aRestartsFlushRunsWhileCommitsAndReadsGoOn(@TempDir Path dir) throws Exception {
        Path file = dir.resolve(SqliteStore.FILE_NAME);
        Path wal = dir.resolve(SqliteStore.FILE_NAME + "-wal");
        CountDownLatch flushing = new CountDownLatch(1);
        CountDownLatch mayFlush = new CountDownLatch(1);
        AtomicInteger flushes = new AtomicInteger();
        try (Parts parts = Parts.open(file, database -> {
            flushes.incrementAndGet();
            flushing.countDown();
            try {
                mayFlush.await();
            } catch (InterruptedException e) {
                throw new InterruptedIOException("closed while the test held the flush");
            }
            Checkpointer.FSYNC.flush(database);
        })) {
            Writer writer = parts.writer();
            ReadPool readers = parts.readers();
            CompletableFuture<Void> filled = CompletableFuture.runAsync(() -> {
                while (flushing.getCount() > 0) { // the checkpointer looks every 10 ms: a restart is due past 1 MiB
                    long size = WalBoundTest.size(wal);
                    assertTrue(size < 64 * RESTART_AT, "no restart began though the WAL grew to " + size);
                    append(writer);
                }
            });
            await().atMost(Duration.ofSeconds(30)).until(() -> flushing.getCount() == 0 || filled.isDone());
            assertEquals(0, flushing.getCount(), () -> "the filling stopped: " + filled.handle((ok, e) -> e).join());

            CompletableFuture<Void> commit = CompletableFuture.runAsync(() -> append(writer));
            CompletableFuture<Long> read = CompletableFuture.supplyAsync(() -> readers.read(s -> {
                try (var rs = s.get("SELECT count(*) FROM filler").executeQuery()) {
                    return rs.getLong(1);
                }
            }));
            await().atMost(Duration.ofSeconds(30)).until(() -> commit.isDone() && read.isDone());
            commit.join();
            filled.join();
            assertTrue(read.join() > 0);
            assertEquals(1, flushes.get(), "one restart due, one flush");

            mayFlush.countDown(); // the restart follows its flush: the log starts over, cut back to the limit
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                append(writer);
                return WalBoundTest.size(wal) <= RESTART_AT;
            });
        } // closing the parts interrupts a flush still held
    }

    /**
     * A flush that fails (an I/O error, a full disk) is a failed checkpoint: no restart, and the
     * writer is not held waiting for one however far the WAL grows; once flushes work, the next
     * restart cuts the log back. Held after each commit, these 60 appends would take a minute.
     */
    @Test
    void aFailingFlushHoldsNoCommitAndTheRestartFollowsOnceItWorks(@TempDir Path dir) throws Exception {
        Path file = dir.resolve(SqliteStore.FILE_NAME);
        Path wal = dir.resolve(SqliteStore.FILE_NAME + "-wal");
        AtomicInteger failures = new AtomicInteger();
        AtomicBoolean failing = new AtomicBoolean(true);
        try (Parts parts = Parts.open(file, database -> {
            if (failing.get()) {
                failures.incrementAndGet();
                throw new IOException("No space left on device");
            }
            Checkpointer.FSYNC.flush(database);
        })) {
            while (WalBoundTest.size(wal) <= Checkpointer.HOLD_FACTOR * RESTART_AT || failures.get() == 0) {
                append(parts.writer());
            }
            assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
                for (int i = 0; i < 60; i++) {
                    append(parts.writer());
                }
            }, "past the bound, with every restart's flush failing, commits go on");

            failing.set(false);
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                append(parts.writer());
                return WalBoundTest.size(wal) <= RESTART_AT;
            });
        }
    }

    /**
     * An idle store's checkpointer waits for the writer's next commit instead of looking at the WAL
     * every 10 ms, and that commit wakes it: the commit's frames reach the database file and the
     * thread waits again. Without the commit's wake-up the file never grows.
     */
    @Test
    void anIdleCheckpointerWaitsForTheNextCommitAndCopiesIt(@TempDir Path dir) throws Exception {
        Path file = dir.resolve(SqliteStore.FILE_NAME);
        try (Parts parts = Parts.open(file, Checkpointer.FSYNC)) {
            Checkpointer checkpointer = parts.checkpointer();
            await().atMost(Duration.ofSeconds(30)).until(checkpointer::waitingForCommit);
            long waits = checkpointer.commitWaits();
            long before = Files.size(file);
            append(parts.writer());
            await().atMost(Duration.ofSeconds(30)).until(() -> Files.size(file) > before);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> checkpointer.waitingForCommit() && checkpointer.commitWaits() > waits);
        }
    }

    private static void append(Writer writer) {
        writer.submit(tx -> {
            var insert = tx.statements().get("INSERT INTO filler (x) VALUES (?)");
            insert.setBytes(1, FILLER);
            return insert.executeUpdate();
        });
    }
}
