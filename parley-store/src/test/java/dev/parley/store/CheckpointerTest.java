package dev.parley.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InterruptedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The database file is flushed before a restart holds the writer and the readers, not under
 * the hold: the flush of what the passive checkpoint copied was most of a restart's hold.
 * The flush is held here until the test has seen a commit and a read go through meanwhile.
 */
class CheckpointerTest {
    /** Small, so that the test writes little: the production default is {@link Checkpointer#RESTART_AT_BYTES}. */
    private static final long RESTART_AT = 1L << 20;
    private static final byte[] FILLER = new byte[64 * 1024];

    @Test
    void aRestartsFlushRunsWhileCommitsAndReadsGoOn(@TempDir Path dir) throws Exception {
        Path file = dir.resolve(SqliteStore.FILE_NAME);
        Path wal = dir.resolve(SqliteStore.FILE_NAME + "-wal");
        CountDownLatch flushing = new CountDownLatch(1);
        CountDownLatch mayFlush = new CountDownLatch(1);
        AtomicInteger flushes = new AtomicInteger();
        Writer writer = new Writer(() -> {
            var connection = Connections.open(file, Connections.Role.WRITER);
            Connections.limitWal(connection, RESTART_AT);
            Migrations.apply(connection);
            return connection;
        }, envelope -> { }, CommitObserver.NONE, new Writer.Upkeep("nothing", Duration.ofDays(1), tx -> null));
        ReadPool readers = new ReadPool(file, 1);
        Checkpointer checkpointer = new Checkpointer(file, writer, readers, RESTART_AT, database -> {
            flushes.incrementAndGet();
            flushing.countDown();
            try {
                mayFlush.await();
            } catch (InterruptedException e) {
                throw new InterruptedIOException("closed while the test held the flush");
            }
            Checkpointer.FSYNC.flush(database);
        });
        writer.afterEachCommit(checkpointer::committed);
        try {
            writer.submit(tx -> tx.statements().get("CREATE TABLE filler (x BLOB)").executeUpdate());
            CompletableFuture<Void> filled = CompletableFuture.runAsync(() -> {
                while (flushing.getCount() > 0) { // the checkpointer looks every 10 ms: a restart is due past 1 MiB
                    assertTrue(WalBoundTest.size(wal) < 64 * RESTART_AT, "no restart began though the WAL grew to " + WalBoundTest.size(wal));
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
        } finally {
            mayFlush.countDown();
            writer.close();
            checkpointer.close();
            readers.close();
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
