package dev.parley.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The drain after a load run: it must wait for every acknowledged send itself, never for a
 * count of arrivals. The state below is the one {@code bench growth} reached on a busy
 * machine: the stream replayed an envelope accepted before the run (the store's template,
 * seq 1), so the reader's count already equalled the run's acknowledged sends while the
 * last one (seq 2) was still between its 202 and the reader.
 */
class ArrivalsDrainTest {

    private static SendLog oneSendTo(int inbox, long seq) {
        SendLog log = new SendLog();
        log.record(10, 20, inbox, seq);
        return log;
    }

    @Test
    void anEnvelopeFromBeforeTheRunDoesNotStandInForASendStillOnItsWay() throws Exception {
        InboxArrivals reader = new InboxArrivals(null);
        reader.arrived(1, 5); // replayed: accepted before the run, in no send log
        SendLog[] logs = {oneSendTo(0, 2)};
        InboxArrivals[] readers = {reader};

        assertEquals(1, LoadResult.awaitArrivals(logs, readers, 0), "seq 2 has not arrived yet");
        assertEquals(1, LoadResult.compute(logs, readers, 0, 100).lost);
    }

    @Test
    void theDrainEndsWhenTheLastSendArrives() throws Exception {
        InboxArrivals reader = new InboxArrivals(null);
        reader.arrived(1, 5);
        SendLog[] logs = {oneSendTo(0, 2)};
        InboxArrivals[] readers = {reader};

        CompletableFuture<Long> drained = CompletableFuture.supplyAsync(() -> {
            try {
                return LoadResult.awaitArrivals(logs, readers, TimeUnit.MINUTES.toNanos(10));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        reader.arrived(2, 30);

        // far inside the 10-minute drain: it ended because seq 2 arrived, not at its deadline
        assertEquals(0, drained.get(60, TimeUnit.SECONDS));
        LoadResult r = LoadResult.compute(logs, readers, 0, 100);
        assertEquals(0, r.lost);
        assertEquals(1, r.seen);
    }
}
