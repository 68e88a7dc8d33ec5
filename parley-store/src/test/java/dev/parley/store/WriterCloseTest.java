package dev.parley.store;

import dev.parley.core.ErrorCode;
import dev.parley.core.ParleyException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A write that races the writer's close is committed or refused, never left waiting. The
 * interleaving is forced with a queue that holds the caller between its {@code closing} check
 * and its put until the writer has stopped.
 */
class WriterCloseTest {
    @TempDir
    Path dir;

    /** Holds each caller between its {@code closing} check and its put until {@code mayPut}. */
    private static class HeldQueue extends ArrayBlockingQueue<Writer.Pending<?>> {
        final CountDownLatch atPut = new CountDownLatch(1);
        final CountDownLatch mayPut = new CountDownLatch(1);

        HeldQueue() {
            super(16);
        }

        @Override
        public void put(Writer.Pending<?> pending) throws InterruptedException {
            atPut.countDown();
            mayPut.await();
            super.put(pending);
        }
    }

    @Test
    void aWriteQueuedAfterTheWritersLastLookIsRefusedNotLeftWaiting() throws Exception {
        HeldQueue queue = new HeldQueue();
        Writer writer = open(queue);
        CompletableFuture<Integer> write = new CompletableFuture<>();
        // A daemon: were the write left waiting, it must not hold the test's JVM.
        Thread.ofPlatform().daemon().start(() -> {
            try {
                write.complete(writer.submit(tx -> 1));
            } catch (RuntimeException e) {
                write.completeExceptionally(e);
            }
        });
        queue.atPut.await();

        writer.close(); // the queue is empty: the writer stops while the caller has yet to put
        queue.mayPut.countDown();

        assertRefused(write);
        assertTrue(queue.isEmpty(), "the refused job is not left in the queue");
    }

    @Test
    void aWriteQueuedBetweenTheWritersLastLookAndItsStopIsRefusedByTheWriter() throws Exception {
        CountDownLatch queued = new CountDownLatch(1);
        HeldQueue queue = new HeldQueue() {
            /** The writer's last look, at close: it sees nothing, then the caller queues and returns. */
            @Override
            public boolean isEmpty() {
                boolean empty = super.isEmpty();
                if (empty && mayPut.getCount() > 0) {
                    mayPut.countDown();
                    try {
                        queued.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return empty;
            }
        };
        Writer writer = open(queue);
        CompletableFuture<CompletableFuture<Integer>> enqueued = new CompletableFuture<>();
        Thread.ofPlatform().daemon().start(() -> {
            enqueued.complete(writer.enqueue(tx -> 1));
            queued.countDown();
        });
        queue.atPut.await();

        writer.close(); // its last look lets the caller queue, and return, before the writer stops

        assertRefused(enqueued.get());
        assertTrue(queue.isEmpty(), "the refused job is not left in the queue");
    }

    @Test
    void aWriteQueuedBeforeCloseIsCommitted() throws Exception {
        Writer writer = open(new ArrayBlockingQueue<>(16));
        CompletableFuture<Integer> write = writer.enqueue(tx -> 7);
        writer.close();
        assertEquals(7, write.get(), "close commits what is already queued");
        assertThrows(ParleyException.class, () -> writer.enqueue(tx -> 8), "and refuses what comes after");
    }

    private static void assertRefused(CompletableFuture<Integer> write) {
        await().atMost(Duration.ofSeconds(10)).until(write::isDone);
        ExecutionException failure = assertThrows(ExecutionException.class, write::get);
        assertEquals(ErrorCode.UNAVAILABLE, assertInstanceOf(ParleyException.class, failure.getCause()).code());
    }

    private Writer open(ArrayBlockingQueue<Writer.Pending<?>> queue) throws SQLException {
        Path file = dir.resolve(SqliteStore.FILE_NAME);
        return new Writer(() -> {
            var connection = Connections.open(file, Connections.Role.WRITER);
            Migrations.apply(connection);
            return connection;
        }, envelope -> { }, CommitObserver.NONE, new Writer.Upkeep("nothing", Duration.ofHours(1), tx -> null), queue);
    }
}
