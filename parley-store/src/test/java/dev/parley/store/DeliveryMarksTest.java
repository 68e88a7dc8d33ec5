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

import java.io.IOException;
import java.io.UncheckedIOException;
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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The delivery marks of a catch-up, which pile up while the writer is behind, on a real store:
 * committed a few pages at a time, every one of them, and no more of one inbox waiting at once
 * than the bound.
 */
class DeliveryMarksTest {
    private static final NodeId LEAD = NodeId.of("lead");
    private static final NodeId WORKER = NodeId.of("worker");
    private static final NodeId OTHER = NodeId.of("other");
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
        List<AtomicInteger> markedPerCommit = new CopyOnWriteArrayList<>(List.of(new AtomicInteger()));
        HeldWriter held = open(marked -> markedPerCommit.getLast().addAndGet(marked.size()),
                () -> markedPerCommit.add(new AtomicInteger()));
        List<List<Envelope>> pages = pages(WORKER, 8);

        try {
            held.holdNextCommit();
            store.markDelivered(pages.getFirst(), NOW, Optional.empty(), () -> { });
            held.awaitHolding();
            for (List<Envelope> page : pages.subList(1, pages.size())) {
                store.markDelivered(page, NOW, Optional.empty(), () -> { });
            }
        } finally {
            held.release();
        }
        await().atMost(Duration.ofSeconds(30)).until(
                () -> markedPerCommit.stream().mapToInt(AtomicInteger::get).sum() == 8 * PAGE);

        List<Integer> commits = markedPerCommit.stream().map(AtomicInteger::get).filter(n -> n > 0).toList();
        assertTrue(commits.stream().allMatch(n -> n <= DeliveryMarks.ENVELOPES_PER_JOB),
                () -> "envelopes marked per commit: " + commits);
        assertTrue(commits.size() >= 2, () -> "envelopes marked per commit: " + commits);
        assertAllDelivered(pages);
    }

    /**
     * A stream whose inbox already has {@link DeliveryMarks#UNCOMMITTED_PER_INBOX} envelopes
     * waiting for their marks' commit (a catch-up ahead of the writer, held here in a commit)
     * waits before it queues more, so what waits in memory stays bounded; a stream of another
     * inbox does not wait for it. Once the writer commits, the waiting one goes on.
     */
    @Test
    void aStreamAheadOfItsInboxsMarksWaitsForThemWhileOtherInboxesGoOn() throws Exception {
        HeldWriter held = open(marked -> { }, () -> { });
        List<Envelope> page = pages(WORKER, 1).getFirst();
        List<Envelope> other = pages(OTHER, 1).getFirst();
        int room = DeliveryMarks.UNCOMMITTED_PER_INBOX / PAGE;

        try (var streams = Executors.newVirtualThreadPerTaskExecutor()) {
            CompletableFuture<Thread> waiting = new CompletableFuture<>();
            Future<?> past;
            try {
                held.holdNextCommit();
                store.markDelivered(page, NOW, Optional.empty(), () -> { });
                held.awaitHolding();
                for (int i = 1; i < room; i++) { // the same page again: marking twice changes nothing
                    store.markDelivered(page, NOW, Optional.empty(), () -> { });
                }
                past = streams.submit(() -> {
                    waiting.complete(Thread.currentThread());
                    store.markDelivered(page, NOW, Optional.empty(), () -> { });
                });
                Thread stream = waiting.get(10, TimeUnit.SECONDS);
                await().atMost(Duration.ofSeconds(10)).until(() -> stream.getState() == Thread.State.TIMED_WAITING);
                assertFalse(past.isDone(), "the writer is held: the inbox's marks cannot be committed");
                streams.submit(() -> store.markDelivered(other, NOW, Optional.empty(), () -> { })).get(10, TimeUnit.SECONDS);
            } finally {
                held.release();
            }
            past.get(30, TimeUnit.SECONDS);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> store.undeliveredAfter(WORKER, 0, PAGE).isEmpty()
                && store.undeliveredAfter(OTHER, 0, PAGE).isEmpty());
    }

    /**
     * While a stream waits for its inbox's marks it hears about it once a second (it writes its
     * heartbeat then); should that fail (the client is gone), the wait ends with the failure and
     * the stream's mark is kept all the same, to be committed with the others: its envelopes
     * were written.
     */
    @Test
    void aStreamThatEndsWhileItsMarksWaitHasThemCommittedAllTheSame() throws Exception {
        HeldWriter held = open(marked -> { }, () -> { });
        List<List<Envelope>> pages = pages(WORKER, 2);
        int room = DeliveryMarks.UNCOMMITTED_PER_INBOX / PAGE;
        AtomicInteger heard = new AtomicInteger();

        try (var streams = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<?> ended;
            try {
                held.holdNextCommit();
                store.markDelivered(pages.getFirst(), NOW, Optional.empty(), () -> { });
                held.awaitHolding();
                for (int i = 1; i < room; i++) {
                    store.markDelivered(pages.getFirst(), NOW, Optional.empty(), () -> { });
                }
                ended = streams.submit(() -> store.markDelivered(pages.getLast(), NOW, Optional.empty(), () -> {
                    heard.incrementAndGet();
                    throw new UncheckedIOException(new IOException("the client is gone"));
                }));
                ExecutionException failure = assertThrows(ExecutionException.class,
                        () -> ended.get(10, TimeUnit.SECONDS));
                assertEquals("the client is gone", failure.getCause().getCause().getMessage());
                assertEquals(1, heard.get());
            } finally {
                held.release();
            }
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> store.undeliveredAfter(WORKER, 0, 2 * PAGE).isEmpty());
    }

    /** Opens the store with a writer the test can hold; {@code delivered} and {@code announcing} see the notifier's calls. */
    private HeldWriter open(java.util.function.Consumer<List<Envelope>> delivered, Runnable announcing) {
        HeldWriter held = new HeldWriter(announcing);
        store = SqliteStore.open(dir, new Notifier() {
            @Override
            public void committed(Envelope envelope) {
            }

            @Override
            public void delivered(List<Envelope> envelopes, Instant at) {
                delivered.accept(envelopes);
            }
        }, held);
        return held;
    }

    /** {@code count} pages of {@code inbox}, appended concurrently as senders would, read back in order. */
    private List<List<Envelope>> pages(NodeId inbox, int count) {
        try (var sends = Executors.newVirtualThreadPerTaskExecutor()) {
            List<CompletableFuture<Void>> appended = new ArrayList<>();
            for (int i = 0; i < count * PAGE; i++) {
                appended.add(CompletableFuture.runAsync(() -> store.append(draft(inbox), audit(), Optional.empty(),
                        Optional.empty()), sends));
            }
            appended.forEach(CompletableFuture::join);
        }
        List<List<Envelope>> pages = new ArrayList<>();
        long head = store.headSeq(inbox) - (long) count * PAGE;
        for (long after = head; after < head + (long) count * PAGE; after += PAGE) {
            pages.add(store.inboxAfter(inbox, after, PAGE));
        }
        return pages;
    }

    private void assertAllDelivered(List<List<Envelope>> pages) {
        for (List<Envelope> page : pages) {
            for (Envelope envelope : page) {
                assertEquals(DeliveryState.DELIVERED, store.message(envelope.id()).orElseThrow().state());
            }
        }
    }

    /** Holds the writer in the commit observer, on the writer's thread, from the next commit until released. */
    private static final class HeldWriter implements CommitObserver {
        private final AtomicBoolean hold = new AtomicBoolean();
        private final CountDownLatch holding = new CountDownLatch(1);
        private final CountDownLatch release = new CountDownLatch(1);
        private final Runnable announcing;

        HeldWriter(Runnable announcing) {
            this.announcing = announcing;
        }

        void holdNextCommit() {
            hold.set(true);
        }

        void awaitHolding() throws InterruptedException {
            assertTrue(holding.await(10, TimeUnit.SECONDS), "the writer is held in a commit");
        }

        void release() {
            release.countDown();
        }

        @Override
        public void committed(int jobs, long nanos) {
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
            announcing.run();
        }
    }

    private Envelope draft(NodeId inbox) {
        return new Envelope(ids.next(), 0, LEAD, inbox, "message", Optional.of("hello"), Optional.empty(),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Map.of(), NOW,
                new Trace(1, Route.INTRA_GROUP, "test"));
    }

    private static AuditEntry audit() {
        return new AuditEntry(NOW, "test", "send", "x", AuditEntry.Decision.ALLOW, "test", Optional.empty(), "test");
    }
}
