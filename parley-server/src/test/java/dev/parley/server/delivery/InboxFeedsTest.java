package dev.parley.server.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.parley.core.Envelope;
import dev.parley.core.InboxReader;
import dev.parley.core.NodeId;
import dev.parley.core.Route;
import dev.parley.core.Trace;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** The feed's ring starts small and grows as envelopes come; what it answers must not change with its size. */
class InboxFeedsTest {
    private static final NodeId WORKER = NodeId.of("worker");

    private static Envelope envelope(long seq) {
        return new Envelope("e" + seq, seq, NodeId.of("lead"), WORKER, "message", Optional.of("m" + seq),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Map.of(),
                Instant.parse("2026-11-28T08:00:00Z"), new Trace(1, Route.INTRA_GROUP, "p"));
    }

    private static List<Long> seqs(List<Envelope> envelopes) {
        return envelopes == null ? null : envelopes.stream().map(Envelope::seq).toList();
    }

    private static List<Long> range(long from, long to) {
        return LongStream.rangeClosed(from, to).boxed().toList();
    }

    @Test
    void whileTheRingGrowsEveryEnvelopeStaysInItsPlaceAndAFullRingKeepsTheLast512() {
        InboxFeeds feeds = new InboxFeeds();
        InboxFeeds.Feed feed = feeds.acquire(WORKER, InboxReader.OWNER);
        assertNull(feed.after(0, 10), "an empty ring proves nothing: the reader asks the store");

        for (long seq = 1; seq <= 700; seq++) {
            feeds.committed(envelope(seq));
            // across each doubling (8, 16, ... 512) and then the wrap, the ring holds every seq since the first
            long first = Math.max(1, seq - 511);
            assertEquals(range(first, seq), seqs(feed.after(first - 1, 1000)), "after " + seq + " commits");
        }
        assertNull(feed.after(187, 10), "seq 188 left the ring: the reader asks the store");
        assertEquals(range(189, 198), seqs(feed.after(188, 10)));
    }

    @Test
    void aGapEmptiesTheRingAndItFillsAgainFromTheNextSeq() {
        InboxFeeds feeds = new InboxFeeds();
        InboxFeeds.Feed feed = feeds.acquire(WORKER, InboxReader.OWNER);
        for (long seq = 1; seq <= 20; seq++) {
            feeds.committed(envelope(seq));
        }
        feeds.committed(envelope(30));
        assertNull(feed.after(20, 10), "21..29 were never in the ring");
        assertEquals(List.of(30L), seqs(feed.after(29, 10)));
        for (long seq = 31; seq <= 60; seq++) {
            feeds.committed(envelope(seq));
        }
        assertEquals(range(30, 60), seqs(feed.after(29, 100)));
    }
}
