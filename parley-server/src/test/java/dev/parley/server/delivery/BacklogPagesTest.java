package dev.parley.server.delivery;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.parley.core.Envelope;
import dev.parley.core.NodeId;
import dev.parley.core.Route;
import dev.parley.core.Trace;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.LongPredicate;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * A stream's backlog read ahead: each page is taken once and in order whatever the inbox's seqs
 * look like, a wrong guess of where a page starts costs a read and never an envelope, the two
 * pages ahead are read at once, and dropping them waits for their reads.
 */
class BacklogPagesTest {
    private static final int LIMIT = 4;

    /** Stored seqs, read as the store reads a page: after a seq, at most {@link #LIMIT}, ended early after a seq {@code cut} names. */
    private record Inbox(List<Long> seqs, LongPredicate cut, List<Long> reads) implements LongFunction<List<Envelope>> {
        Inbox(List<Long> seqs, LongPredicate cut) {
            this(seqs, cut, Collections.synchronizedList(new ArrayList<>()));
        }

        @Override
        public List<Envelope> apply(long after) {
            reads.add(after);
            List<Envelope> page = new ArrayList<>();
            for (long seq : seqs) {
                if (seq > after && page.size() < LIMIT) {
                    page.add(envelope(seq));
                    if (cut.test(seq)) {
                        break;
                    }
                }
            }
            return page;
        }
    }

    private static Envelope envelope(long seq) {
        return new Envelope("e" + seq, seq, NodeId.of("lead"), NodeId.of("worker"), "message", Optional.of("m" + seq),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Map.of(),
                Instant.parse("2026-12-06T01:00:00Z"), new Trace(1, Route.INTRA_GROUP, "p"));
    }

    private static List<Long> seqs(long from, long to, long... missing) {
        Set<Long> gone = LongStream.of(missing).boxed().collect(Collectors.toSet());
        return LongStream.rangeClosed(from, to).boxed().filter(seq -> !gone.contains(seq)).toList();
    }

    /** Takes the backlog as a stream does, page after page from seq 0 until one is empty; the seqs of each page. */
    private static List<List<Long>> drain(BacklogPages<List<Envelope>> pages) throws InterruptedException {
        List<List<Long>> taken = new ArrayList<>();
        long position = 0;
        try {
            while (true) {
                List<Envelope> page = pages.after(position);
                pages.readAhead(position, page);
                if (page.isEmpty()) {
                    return taken;
                }
                taken.add(page.stream().map(Envelope::seq).toList());
                position = page.getLast().seq();
            }
        } finally {
            pages.drop();
        }
    }

    private static BacklogPages<List<Envelope>> pages(LongFunction<List<Envelope>> read) {
        return new BacklogPages<>(LIMIT, read, Function.identity());
    }

    private static List<Long> flat(List<List<Long>> pages) {
        return pages.stream().flatMap(List::stream).toList();
    }

    @Test
    void aBacklogWithoutGapsIsTakenWholeAndInOrderReadingNoPageTwice() throws Exception {
        Inbox inbox = new Inbox(seqs(1, 40), seq -> false);
        List<List<Long>> taken = drain(pages(inbox));

        assertEquals(10, taken.size(), "ten full pages: " + taken);
        assertEquals(seqs(1, 40), flat(taken));
        List<Long> reads = List.copyOf(inbox.reads());
        assertEquals(reads.size(), Set.copyOf(reads).size(), "no page is read twice: " + reads);
        for (long after = 0; after <= 40; after += LIMIT) {
            assertTrue(reads.contains(after), "the page after " + after + " was read: " + reads);
        }
    }

    @Test
    void missingSeqsMakeAGuessWrongWhichCostsAReadAndNoEnvelope() throws Exception {
        List<Long> stored = seqs(1, 40, 6, 7, 21, 22, 23, 24, 25);
        Inbox inbox = new Inbox(stored, seq -> false);
        List<List<Long>> taken = drain(pages(inbox));

        assertEquals(stored, flat(taken), "every stored envelope once, in order");
        assertEquals(List.of(5L, 8L, 9L, 10L), taken.get(1), "the page after a gap spans it");
        assertTrue(inbox.reads().contains(10L), "the page after the real end of the page with the gap was read");
    }

    @Test
    void aPageCutShortByItsCharactersIsFollowedByAReadAfterItsLastSeq() throws Exception {
        Inbox inbox = new Inbox(seqs(1, 20), seq -> seq == 6 || seq == 13);
        List<List<Long>> taken = drain(pages(inbox));

        assertEquals(seqs(1, 20), flat(taken));
        assertEquals(List.of(5L, 6L), taken.get(1), "the store ended this page early");
        assertTrue(inbox.reads().contains(6L) && inbox.reads().contains(13L), "read again after each short page");
    }

    @Test
    void theTwoPagesAheadAreReadAtOnce() throws Exception {
        CountDownLatch bothStarted = new CountDownLatch(2);
        AtomicInteger readsThatSawTheOther = new AtomicInteger();
        Inbox stored = new Inbox(seqs(1, 12), seq -> false);
        LongFunction<List<Envelope>> read = after -> {
            if (after == 4 || after == 8) { // each of the two pages ahead waits until the other is being read too
                bothStarted.countDown();
                try {
                    if (bothStarted.await(1, TimeUnit.MINUTES)) {
                        readsThatSawTheOther.incrementAndGet();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return stored.apply(after);
        };
        BacklogPages<List<Envelope>> pages = pages(read);
        try {
            List<Envelope> first = pages.after(0);
            pages.readAhead(0, first);
            assertEquals(List.of(5L, 6L, 7L, 8L), pages.after(4).stream().map(Envelope::seq).toList());
        } finally {
            pages.drop();
        }
        assertEquals(2, readsThatSawTheOther.get(), "the reads after 4 and after 8 ran at the same time");
    }

    @Test
    void droppingThePagesAheadWaitsUntilTheirReadsHaveEnded() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger started = new AtomicInteger();
        AtomicInteger ended = new AtomicInteger();
        Inbox stored = new Inbox(seqs(1, 12), seq -> false);
        LongFunction<List<Envelope>> read = after -> {
            if (after > 0) {
                started.incrementAndGet();
                try {
                    release.await(1, TimeUnit.MINUTES);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                ended.incrementAndGet();
            }
            return stored.apply(after);
        };
        BacklogPages<List<Envelope>> pages = pages(read);
        pages.readAhead(0, pages.after(0));
        await().atMost(Duration.ofMinutes(1)).until(() -> started.get() == 2); // the pages after 4 and 8

        AtomicInteger endedWhenDropped = new AtomicInteger(-1);
        Thread dropping = Thread.ofPlatform().start(() -> {
            pages.drop();
            endedWhenDropped.set(ended.get());
        });
        await().atMost(Duration.ofMinutes(1)).until(() -> dropping.getState() == Thread.State.WAITING
                || dropping.getState() == Thread.State.TERMINATED);
        release.countDown();
        dropping.join();
        assertEquals(2, endedWhenDropped.get(), "both reads had ended when drop returned");
    }
}
