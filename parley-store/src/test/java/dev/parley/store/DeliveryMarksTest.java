package dev.parley.store;

import dev.parley.core.AuditEntry;
import dev.parley.core.DeliveryState;
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
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The delivery marks of a catch-up, which pile up while the writer is behind, on a real store:
 * committed a few pages at a time, every one of them.
 */
class DeliveryMarksTest {
    private static final NodeId LEAD = NodeId.of("lead");
    private static final NodeId WORKER = NodeId.of("worker");
    private static final Instant NOW = Instant.parse("2026-12-06T10:00:00.000Z");
    private static final int PAGE = 256;

    @TempDir
    Path dir;
    private final UuidV7 ids = new UuidV7(InstantSource.system());
    private SqliteStore store;

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    /**
     * Eight pages marked while the writer is held (the test holds it in its commit observer)
     * are committed at most {@link DeliveryMarks#ENVELOPES_PER_JOB} envelopes a commit, not in
     * one commit of all of them: that commit took seconds in a catch-up, and sends and reads
     * waited for it.
     */
    @Test
    void marksPiledUpBehindTheWriterAreCommittedAFewPagesAtATime() throws Exception {
        AtomicBoolean hold = new AtomicBoolean();
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<AtomicInteger> markedPerCommit = new CopyOnWriteArrayList<>(List.of(new AtomicInteger()));
        store = SqliteStore.open(dir, new Notifier() {
            @Override
            public void committed(Envelope envelope) {
            }

            @Override
            public void delivered(List<Envelope> envelopes, Instant at) {
                markedPerCommit.getLast().addAndGet(envelopes.size());
            }
        }, new CommitObserver() {
            @Override
            public void committed(int jobs, long nanos) { // on the writer's thread: holding here holds the writer
                if (hold.getAndSet(false)) {
                    holding.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }

            @Override
            public void announcing(long nanos, long endedAt) {
                markedPerCommit.add(new AtomicInteger());
            }
        });
        try (var sends = Executors.newVirtualThreadPerTaskExecutor()) {
            List<CompletableFuture<Void>> appended = new ArrayList<>();
            for (int i = 0; i < 8 * PAGE; i++) {
                appended.add(CompletableFuture.runAsync(() -> store.append(draft(), audit(), Optional.empty(),
                        Optional.empty()), sends));
            }
            appended.forEach(CompletableFuture::join);
        }
        List<List<Envelope>> pages = new ArrayList<>();
        for (long after = 0; after < 8 * PAGE; after += PAGE) {
            pages.add(store.inboxAfter(WORKER, after, PAGE));
        }

        try {
            hold.set(true);
            store.markDelivered(pages.getFirst(), NOW, Optional.empty());
            assertTrue(holding.await(10, TimeUnit.SECONDS), "the writer is held in a commit");
            for (List<Envelope> page : pages.subList(1, pages.size())) {
                store.markDelivered(page, NOW, Optional.empty());
            }
        } finally {
            release.countDown();
        }
        await().atMost(Duration.ofSeconds(30)).until(
                () -> markedPerCommit.stream().mapToInt(AtomicInteger::get).sum() == 8 * PAGE);

        List<Integer> commits = markedPerCommit.stream().map(AtomicInteger::get).filter(n -> n > 0).toList();
        assertTrue(commits.stream().allMatch(n -> n <= DeliveryMarks.ENVELOPES_PER_JOB),
                () -> "envelopes marked per commit: " + commits);
        assertTrue(commits.size() >= 2, () -> "envelopes marked per commit: " + commits);
        for (List<Envelope> page : pages) {
            for (Envelope envelope : page) {
                assertEquals(DeliveryState.DELIVERED, store.message(envelope.id()).orElseThrow().state());
            }
        }
    }

    private Envelope draft() {
        return new Envelope(ids.next(), 0, LEAD, WORKER, "message", Optional.of("hello"), Optional.empty(),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Map.of(), NOW,
                new Trace(1, Route.INTRA_GROUP, "test"));
    }

    private static AuditEntry audit() {
        return new AuditEntry(NOW, "test", "send", "x", AuditEntry.Decision.ALLOW, "test", Optional.empty(), "test");
    }
}
