package dev.parley.bench;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.parley.bench.http.HttpConnection;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The store {@code bench growth} measures on: its template send and its prefilled envelopes
 * must all count as delivered, like a hub whose readers have kept up, so the streams of a
 * run carry nothing but the run's own sends. A real hub on a real SQLite file, real streams.
 */
class GrowthStoreTest {

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void cursorlessStreamsOnAPrefilledStoreCarryOnlyTheRunsSends(@TempDir Path dir) throws Exception {
        PrintWriter err = new PrintWriter(new StringWriter());
        ParleyWorkload work = new ParleyWorkload(1, 2, 64, err);
        BenchGrowthCommand.seed(dir, work, 64);
        EnvelopePrefill.fill(dir, work.inboxIds, work.senderIds, 99, BenchSupport.text(64), err);

        try (BenchHub hub = BenchHub.inProcess(c -> BenchGrowthCommand.onDir(c, dir))) {
            try {
                work.openStreams(hub.host(), hub.port());
                long[] sent = new long[work.inboxes];
                HttpConnection conn = new HttpConnection(hub.host(), hub.port(), 30_000);
                try {
                    for (int i = 0; i < work.inboxes; i++) {
                        HttpConnection.Response res = conn.call("POST", "/v1/messages", work.senderToken(0),
                                "{\"to\":\"" + work.inboxIds[i] + "\",\"text\":\"live\"}");
                        assertEquals(202, res.status(), res.body());
                        sent[i] = BenchSupport.JSON.readTree(res.body()).get("seq").asLong();
                    }
                } finally {
                    conn.close();
                }
                // a stream replays before it goes live, so once the live send is there the replay is over
                await().atMost(Duration.ofSeconds(60)).until(() -> {
                    for (int i = 0; i < work.inboxes; i++) {
                        if (work.arrivals(i).seenAt(sent[i]) == Long.MIN_VALUE) {
                            return false;
                        }
                    }
                    return true;
                });
                for (int i = 0; i < work.inboxes; i++) {
                    for (long seq = 1; seq < sent[i]; seq++) {
                        assertEquals(Long.MIN_VALUE, work.arrivals(i).seenAt(seq), "the stream of " + work.inboxIds[i]
                                + " replayed seq " + seq + ", stored before the run");
                    }
                }
            } finally {
                work.close();
            }
        }
    }
}
