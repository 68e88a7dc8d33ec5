package dev.parley.store;

import dev.parley.core.AuditEntry;
import dev.parley.core.Envelope;
import dev.parley.core.NodeId;
import dev.parley.core.Notifier;
import dev.parley.core.Route;
import dev.parley.core.Trace;
import dev.parley.core.UuidV7;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The writer hands each committed batch to the announcer and goes on committing: a notifier
 * that is slow holds back answers and announcements, never the commits, and announcements
 * keep commit order.
 */
class AnnouncerTest {
    private static final NodeId WORKER = NodeId.of("worker");
    private static final Instant NOW = Instant.parse("2026-11-28T10:00:00.000Z");

    @TempDir
    Path dir;
    private SqliteStore store;
    private final UuidV7 ids = new UuidV7(InstantSource.system());

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    @Test
    void aHeldNotifierHoldsNoCommitAndAnnouncementsKeepCommitOrder() throws Exception {
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<Long> announced = new CopyOnWriteArrayList<>();
        Notifier held = envelope -> {
            if (envelope.seq() == 1) {
                holding.countDown();
                awaitUninterruptibly(release);
            }
            announced.add(envelope.seq());
        };
        store = SqliteStore.open(dir, held, CommitObserver.NONE);

        try {
            Envelope first = append(); // answered before it is announced: answers come first in a batch
            assertTrue(holding.await(10, TimeUnit.SECONDS), "the first envelope is being announced");
            List<CompletableFuture<Envelope>> later = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                later.add(CompletableFuture.supplyAsync(this::append));
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> store.inboxAfter(WORKER, 0, 10).size() == 6);
            assertTrue(later.stream().noneMatch(CompletableFuture::isDone),
                    "committed, but their answers wait for the announcer, which the notifier holds");

            release.countDown();
            assertEquals(1, first.seq());
            for (CompletableFuture<Envelope> f : later) {
                f.get(10, TimeUnit.SECONDS);
            }
        } finally {
            release.countDown(); // a failed assertion must not leave close() waiting for the announcer
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> announced.size() == 6);
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L), announced, "announced in commit order");
    }

    @Test
    void closeAnnouncesEveryCommittedBatchBeforeItReturns() {
        List<Long> announced = new CopyOnWriteArrayList<>();
        store = SqliteStore.open(dir, envelope -> announced.add(envelope.seq()), CommitObserver.NONE);
        List<CompletableFuture<Envelope>> sends = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            sends.add(CompletableFuture.supplyAsync(this::append));
        }
        sends.forEach(CompletableFuture::join);
        store.close();
        store = null;
        assertEquals(50, announced.size(), "every committed envelope was announced by the time close returned");
    }

    @Test
    void aNotifierThatThrowsAnErrorLeavesTheAnnouncerAnswering() throws Exception {
        List<Long> announced = new CopyOnWriteArrayList<>();
        Notifier failing = envelope -> {
            if (envelope.seq() == 1) {
                throw new StackOverflowError("a listener's bug");
            }
            announced.add(envelope.seq());
        };
        store = SqliteStore.open(dir, failing, CommitObserver.NONE);
        assertEquals(1, append().seq());
        assertEquals(2, CompletableFuture.supplyAsync(this::append).get(10, TimeUnit.SECONDS).seq(),
                "answered after the Error");
        await().atMost(Duration.ofSeconds(10)).until(() -> announced.equals(List.of(2L)));
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private Envelope append() {
        Envelope draft = new Envelope(ids.next(), 0, NodeId.of("lead"), WORKER, "message", Optional.of("hello"),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Map.of(), NOW,
                new Trace(1, Route.INTRA_GROUP, "test"));
        AuditEntry audit = new AuditEntry(NOW, "test", "send", "worker", AuditEntry.Decision.ALLOW, "test",
                Optional.empty(), "test");
        return store.append(draft, audit, Optional.empty(), Optional.empty()).envelope();
    }
}
