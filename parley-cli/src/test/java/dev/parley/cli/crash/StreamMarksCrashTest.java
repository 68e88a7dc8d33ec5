package dev.parley.cli.crash;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.bench.http.HttpConnection;
import dev.parley.bench.http.SseStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Delivery marks across SIGKILL. Four nodes read their inboxes on streams without a cursor, the
 * hub is killed with SIGKILL, and restarted on the same data. Before any stream reconnects,
 * every envelope the store says is delivered must be one its reader got (a mark follows its
 * frame's write, and the kernel still sends what a dead process wrote); the others are
 * undelivered. A stream without a cursor then replays exactly those undelivered ones: every
 * accepted send reaches its reader, and the only ones it gets twice are frames written before
 * the kill whose marks were not yet committed. Once killed under load (ten senders), once with
 * the marks of a whole backlog held back, so that the kill falls between frames and marks.
 */
class StreamMarksCrashTest {
    private static final int READERS = 4;
    private static final int SENDERS_A_NODE = 2;
    private static final int KILL_AFTER_ACCEPTED = 1_500;
    private static final int KILL_AFTER_FRAMES = 500;
    private static final int BACKLOG = 100;
    private static final byte[] SEQ = "\"seq\":".getBytes(StandardCharsets.US_ASCII);

    @TempDir
    Path tmp;

    private Path data;
    private ChildHub hub;
    private final Map<String, String> tokens = new LinkedHashMap<>();
    private final List<String> readers = new ArrayList<>();
    /** Seqs each reader's send was answered 202 with, by reader. */
    private final Map<String, Set<Long>> acceptedSeqs = new ConcurrentHashMap<>();

    @BeforeEach
    void dataDirectory() throws IOException {
        data = Files.createDirectories(tmp.resolve("data"));
    }

    @AfterEach
    void killHub() throws InterruptedException {
        if (hub != null) {
            hub.close();
        }
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void underLoadEveryEnvelopeTheStoreSaysDeliveredWasReadAndTheRestIsReplayed() throws Exception {
        startWithReaders();
        Session before = new Session(hub.port());
        Senders senders = new Senders(hub.port());
        senders.start();
        await("sends accepted and frames read before the kill").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> senders.accepted.get() >= KILL_AFTER_ACCEPTED && before.frames() >= KILL_AFTER_FRAMES);
        int exit = hub.kill();
        senders.stopAndJoin();
        assertTrue(senders.unexpected.isEmpty(), "answers other than 202/429: " + senders.unexpected);
        Restart restart = restartAfter(before);
        System.out.printf("stream marks crash under load: exit %d, %d sends accepted, %d frames read before the kill;"
                        + " after the restart %d envelopes delivered, %d undelivered, %d of them read before the kill%n",
                exit, senders.accepted.get(), before.frames(), restart.delivered(), restart.undelivered(),
                restart.lostMarks());
    }

    /**
     * The kill made to fall between frames and their marks: the test holds the store's write
     * lock while the streams replay a backlog, so the frames are written and their marks wait.
     * After the restart every one of them is undelivered and replayed: each read twice, none lost.
     */
    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void framesWhoseMarksTheKillLostAreReplayedAndNothingElse() throws Exception {
        startWithReaders();
        Senders senders = new Senders(hub.port());
        senders.start();
        await("a backlog in every inbox").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
                .until(() -> acceptedSeqs.values().stream().allMatch(seqs -> seqs.size() >= BACKLOG));
        senders.stopAndJoin();
        assertTrue(senders.unexpected.isEmpty(), "answers other than 202/429: " + senders.unexpected);
        int backlog = acceptedSeqs.values().stream().mapToInt(Set::size).sum();
        Session before;
        int exit;
        try (Connection db = DriverManager.getConnection("jdbc:sqlite:" + data.resolve("parley.db"));
             Statement lock = db.createStatement()) {
            lock.execute("PRAGMA busy_timeout = 10000");
            // The hub's writer now waits; past its busy timeout (10 s) a job fails and its marks go back
            // in line (DeliveryMarks), so however long the replay takes, none is committed before the kill.
            lock.execute("BEGIN IMMEDIATE");
            before = new Session(hub.port());
            await("the backlog read while its marks wait").atMost(Duration.ofSeconds(60))
                    .until(() -> before.frames() == backlog);
            exit = hub.kill();
        }
        Restart restart = restartAfter(before);
        assertEquals(0, restart.delivered(), "no mark could be committed before the kill");
        assertEquals(backlog, restart.lostMarks(), "every frame read before the kill is undelivered after it");
        System.out.printf("stream marks crash with the marks held: exit %d, %d envelopes read before the kill, all"
                + " replayed after it%n", exit, backlog);
    }

    private void startWithReaders() throws IOException {
        hub = new ChildHub(data, tmp.resolve("hub.log"));
        hub.start();
        tokens.put("lead", hub.createNode("lead", null));
        for (int i = 0; i < READERS; i++) {
            String id = "r" + i;
            tokens.put(id, hub.createNode(id, "lead"));
            readers.add(id);
            acceptedSeqs.put(id, ConcurrentHashMap.newKeySet());
        }
    }

    /** What the store said after the restart: envelopes delivered, undelivered, and undelivered ones read before. */
    private record Restart(int delivered, int undelivered, int lostMarks) {
    }

    /**
     * Restarts the killed hub and checks, before any stream reconnects, that every envelope the
     * store says is delivered was read; then that a stream without a cursor replays exactly the
     * undelivered ones and every accepted send has reached its reader.
     */
    private Restart restartAfter(Session before) throws Exception {
        await("the streams end with the hub").atMost(Duration.ofSeconds(15)).until(before::allEnded);
        before.close();
        hub.start();
        Map<String, Set<Long>> undelivered = new LinkedHashMap<>();
        int delivered = 0;
        int lostMarks = 0;
        try (HttpConnection c = hub.connect(30_000)) {
            for (String r : readers) {
                Set<Long> open = new TreeSet<>();
                for (JsonNode envelope : hub.readInbox(c, r)) {
                    long seq = envelope.path("seq").asLong();
                    String state = state(c, envelope.path("id").asText());
                    if (state.equals("accepted")) {
                        open.add(seq);
                        if (before.got(r, seq)) {
                            lostMarks++;
                        }
                    } else {
                        assertEquals("delivered", state, "envelope " + seq + " to " + r);
                        assertTrue(before.got(r, seq), "the store says envelope " + seq + " to " + r
                                + " was delivered, but its reader never got it" + hub.logTail());
                        delivered++;
                    }
                }
                undelivered.put(r, open);
            }
        }

        // A send after the restart to each reader: once a stream has it, everything it replays is there (seq order).
        Map<String, Long> last = new LinkedHashMap<>();
        try (HttpConnection c = hub.connect(10_000)) {
            for (String r : readers) {
                HttpConnection.Response res = c.call("POST", "/v1/messages", tokens.get("lead"),
                        "{\"to\":\"" + r + "\",\"text\":\"after the restart\"}");
                assertEquals(202, res.status(), res.body());
                last.put(r, ChildHub.JSON.readTree(res.body()).path("seq").asLong());
            }
        }
        try (Session after = new Session(hub.port())) {
            await("each reader gets the send made after the restart").atMost(Duration.ofSeconds(60))
                    .until(() -> readers.stream().allMatch(r -> after.got(r, last.get(r))));
            for (String r : readers) {
                Set<Long> expected = new TreeSet<>(undelivered.get(r));
                expected.add(last.get(r));
                assertEquals(expected, after.seqs(r), "reader " + r + ": a stream without a cursor replays exactly"
                        + " the envelopes the store had not marked delivered, then goes live");
                assertEquals(0, after.repeats(r), "reader " + r + " got a frame twice on one stream");
                Set<Long> lost = new TreeSet<>(acceptedSeqs.get(r));
                lost.removeIf(seq -> before.got(r, seq) || after.got(r, seq));
                assertTrue(lost.isEmpty(), "reader " + r + " never got these accepted sends: " + lost);
            }
        }
        return new Restart(delivered, undelivered.values().stream().mapToInt(Set::size).sum(), lostMarks);
    }

    private static String state(HttpConnection c, String id) throws IOException {
        HttpConnection.Response res = c.call("GET", "/v1/messages/" + id, ChildHub.ADMIN, null);
        assertEquals(200, res.status(), "GET /v1/messages/" + id + ": " + res.body());
        return ChildHub.JSON.readTree(res.body()).path("state").asText();
    }

    /** One stream without a cursor a reader, opened as the reader, each on a thread of its own. */
    private final class Session implements AutoCloseable {
        private final Map<String, Map<Long, Integer>> seen = new ConcurrentHashMap<>();
        private final List<SseStream> streams = new ArrayList<>();
        private final AtomicInteger ended = new AtomicInteger();
        private final AtomicInteger frames = new AtomicInteger();

        Session(int port) throws IOException, InterruptedException {
            CountDownLatch ready = new CountDownLatch(READERS);
            for (String r : readers) {
                Map<Long, Integer> got = new ConcurrentHashMap<>();
                seen.put(r, got);
                SseStream stream = new HttpConnection("127.0.0.1", port, 10_000).openStream("/v1/inbox/stream",
                        tokens.get(r), "", new SseStream.Listener() {
                            @Override
                            public void onComment(String text) {
                                if (text.strip().equals("parley ready")) {
                                    ready.countDown();
                                }
                            }

                            @Override
                            public void onEvent(long id, String event, byte[] data, int dataLength) {
                                got.merge(id, 1, Integer::sum);
                                frames.incrementAndGet();
                            }

                            @Override
                            public void onEnd(String error) {
                                ended.incrementAndGet();
                            }
                        }, false);
                streams.add(stream);
                Thread.ofVirtual().name("stream-" + r).start(stream);
            }
            assertTrue(ready.await(30, TimeUnit.SECONDS), "the streams did not open");
        }

        int frames() {
            return frames.get();
        }

        boolean got(String reader, long seq) {
            return seen.get(reader).containsKey(seq);
        }

        Set<Long> seqs(String reader) {
            return new TreeSet<>(seen.get(reader).keySet());
        }

        long repeats(String reader) {
            return seen.get(reader).values().stream().filter(n -> n > 1).count();
        }

        boolean allEnded() {
            return ended.get() == READERS;
        }

        @Override
        public void close() {
            streams.forEach(SseStream::close);
        }
    }

    /** Two senders a node (the lead and each reader), each sending to the readers in turn, until stopped. */
    private final class Senders extends SendLoops {
        final AtomicInteger accepted = new AtomicInteger();
        private final int port;
        private final List<String> from = new ArrayList<>(tokens.keySet());

        Senders(int port) {
            this.port = port;
        }

        void start() {
            start(from.size() * SENDERS_A_NODE, "sender");
        }

        @Override
        void run(int s) {
            String sender = from.get(s % from.size());
            List<String> to = new ArrayList<>(readers);
            to.remove(sender);
            try (HttpConnection conn = new HttpConnection("127.0.0.1", port, 10_000)) {
                for (int k = 0; running(); k++) {
                    String target = to.get((s + k) % to.size());
                    byte[] body = ("{\"to\":\"" + target + "\",\"text\":\"s" + s + "-" + k + "\"}")
                            .getBytes(StandardCharsets.UTF_8);
                    int status;
                    try {
                        status = conn.exchange(HttpConnection.head("POST", "/v1/messages", conn.hostHeader(),
                                tokens.get(sender), "application/json", body.length), body);
                    } catch (IOException e) {
                        pause(); // the hub is gone: the outcome of this one is not known, nor needed
                        continue;
                    }
                    if (status == 202) {
                        acceptedSeqs.get(target).add(conn.bodyLongField(SEQ));
                        accepted.incrementAndGet();
                    } else {
                        if (status != 429) {
                            unexpected.add(status + " " + conn.bodyText());
                        }
                        pause();
                    }
                }
            }
        }
    }
}
