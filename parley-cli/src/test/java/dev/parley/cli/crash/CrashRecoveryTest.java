package dev.parley.cli.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.bench.http.HttpConnection;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Durability under SIGKILL: a hub runs as a child process, 32 concurrent senders post to eight
 * inboxes, and the hub is killed with SIGKILL while sends are in flight; after a restart on the
 * same data directory every envelope that was answered 202 must be in its inbox exactly once
 * with the seq it was answered with, each inbox's seqs must run 1, 2, 3, … without gaps, and no
 * envelope may appear twice. Requests whose outcome is unknown (the connection died under
 * them) are retried with the same {@code messageId}: the hub must answer either a fresh 202 or
 * 200 {@code "duplicate": true} with the first answer, and each such request must then appear
 * exactly once. Requests that never reached the hub, or were refused, must not appear at all.
 * Three kill/restart cycles, each with more sends.
 */
class CrashRecoveryTest {
    private static final String ADMIN = ChildHub.ADMIN;
    private static final ObjectMapper JSON = ChildHub.JSON;
    private static final int WORKERS = 8;
    private static final int SENDERS = 32;
    private static final int CYCLES = 3;
    private static final String PADDING = " " + "x".repeat(200);

    @TempDir
    Path tmp;

    private ChildHub hub;

    /** What became of one send attempt, keyed by its marker (text prefix and messageId). */
    private sealed interface Outcome {
    }

    private record Accepted(String from, String to, String id, long seq) implements Outcome {
    }

    /** The connection failed after the request may have been written: committed or not. */
    private record Unknown(String from, String to) implements Outcome {
    }

    /** Never reached the hub (connection refused) or answered with an error: must not exist. */
    private record NotCommitted(String why) implements Outcome {
    }

    private final Map<String, Outcome> ledger = new ConcurrentHashMap<>();
    private final Map<String, String> tokens = new LinkedHashMap<>();
    private final List<String> workers = new ArrayList<>();

    @AfterEach
    void killHub() throws InterruptedException {
        if (hub != null) {
            hub.close();
        }
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void everyAcceptedSendSurvivesSigkillExactlyOnce() throws Exception {
        hub = new ChildHub(Files.createDirectories(tmp.resolve("data")), tmp.resolve("hub.log"));
        long t0 = System.nanoTime();
        hub.start();

        tokens.put("lead", hub.createNode("lead", null));
        for (int i = 0; i < WORKERS; i++) {
            String id = "w" + i;
            tokens.put(id, hub.createNode(id, "lead"));
            workers.add(id);
        }
        List<String> senderNodes = new ArrayList<>(tokens.keySet());

        for (int cycle = 1; cycle <= CYCLES; cycle++) {
            int threshold = 400 * cycle;
            CountDownLatch enough = new CountDownLatch(threshold);
            AtomicInteger accepted = new AtomicInteger();
            SendPhase phase = new SendPhase(cycle, senderNodes, enough, accepted);
            phase.start(SENDERS, "crash-sender");

            assertTrue(enough.await(45, TimeUnit.SECONDS),
                    "cycle " + cycle + ": only " + accepted.get() + " of " + threshold
                            + " sends accepted in 45 s; unexpected answers: " + phase.unexpected + hub.logTail());
            int exit = hub.kill();
            phase.stopAndJoin();
            assertTrue(phase.unexpected.isEmpty(), "cycle " + cycle + ": answers other than 202/429: " + phase.unexpected);

            hub.start();
            int[] retried = retryUnknown();
            Totals totals = verify();
            System.out.printf("crash cycle %d: exit %d, %d accepted this cycle; in flight at the kill: %d "
                            + "(committed %d, not committed %d); %d envelopes in %d inboxes verified; %.1f s elapsed%n",
                    cycle, exit, accepted.get(), retried[0] + retried[1], retried[1], retried[0], totals.envelopes,
                    WORKERS, (System.nanoTime() - t0) / 1e9);
        }
    }

    // ---- sending ----

    private static byte[] sendBody(String to, String marker) {
        return JSON.createObjectNode().put("to", to).put("text", marker + PADDING).put("messageId", marker)
                .toString().getBytes(StandardCharsets.UTF_8);
    }

    /** The senders of one cycle, each as one of the nodes, to the workers in turn. */
    private final class SendPhase extends SendLoops {
        private final int cycle;
        private final List<String> senderNodes;
        private final CountDownLatch enough;
        private final AtomicInteger accepted;
        private final int hubPort = hub.port();

        SendPhase(int cycle, List<String> senderNodes, CountDownLatch enough, AtomicInteger accepted) {
            this.cycle = cycle;
            this.senderNodes = senderNodes;
            this.enough = enough;
            this.accepted = accepted;
        }

        @Override
        void run(int s) {
            String from = senderNodes.get(s % senderNodes.size());
            String token = tokens.get(from);
            HttpConnection conn = new HttpConnection("127.0.0.1", hubPort, 10_000);
            int k = 0;
            try {
                while (running()) {
                    String to = workers.get((s + k) % WORKERS);
                    if (to.equals(from)) {
                        to = workers.get((s + k + 1) % WORKERS);
                    }
                    String marker = "c" + cycle + "-s" + s + "-" + k++;
                    byte[] body = sendBody(to, marker);
                    byte[] head = HttpConnection.head("POST", "/v1/messages", conn.hostHeader(), token,
                            "application/json", body.length);
                    int status;
                    try {
                        status = conn.exchange(head, body);
                    } catch (ConnectException e) {
                        ledger.put(marker, new NotCommitted("connection refused"));
                        pause();
                        continue;
                    } catch (IOException e) {
                        // the request may have been written and committed before the connection died
                        ledger.put(marker, new Unknown(from, to));
                        pause();
                        continue;
                    }
                    if (status == 202) {
                        JsonNode r = JSON.readTree(conn.bodyText());
                        ledger.put(marker, new Accepted(from, r.path("to").asText(), r.path("id").asText(),
                                r.path("seq").asLong(-1)));
                        if (!to.equals(r.path("to").asText())) {
                            unexpected.add(marker + ": 202 names to=" + r.path("to").asText() + ", sent to " + to);
                        }
                        accepted.incrementAndGet();
                        enough.countDown();
                    } else {
                        ledger.put(marker, new NotCommitted("HTTP " + status));
                        if (status != 429) {
                            unexpected.add(marker + " -> " + status + " " + conn.bodyText());
                        }
                        pause();
                    }
                }
            } catch (IOException e) {
                unexpected.add("sender " + s + ": " + e);
            } finally {
                conn.close();
            }
        }
    }

    // ---- verification ----

    /**
     * Sends every request whose outcome is unknown again, same sender and messageId: a fresh
     * 202 (it had not been committed) or 200 duplicate (it had). Returns {fresh, duplicate}.
     */
    private int[] retryUnknown() throws IOException {
        int fresh = 0;
        int dup = 0;
        HttpConnection c = hub.connect(10_000);
        try {
            for (Map.Entry<String, Outcome> e : ledger.entrySet()) {
                if (!(e.getValue() instanceof Unknown u)) {
                    continue;
                }
                String marker = e.getKey();
                byte[] body = sendBody(u.to(), marker);
                byte[] head = HttpConnection.head("POST", "/v1/messages", c.hostHeader(), tokens.get(u.from()),
                        "application/json", body.length);
                int status = c.exchange(head, body);
                String text = c.bodyText();
                JsonNode r = JSON.readTree(text);
                if (status == 202) {
                    fresh++;
                    assertFalse(r.path("duplicate").asBoolean(false), "202 marked duplicate: " + text);
                } else if (status == 200) {
                    dup++;
                    assertTrue(r.path("duplicate").asBoolean(false),
                            "a resent messageId answered 200 without \"duplicate\": true: " + text);
                } else {
                    fail("resending " + marker + " (same messageId) answered " + status + ": " + text);
                }
                assertEquals(u.to(), r.path("to").asText(), "resend of " + marker + ": " + text);
                e.setValue(new Accepted(u.from(), u.to(), r.path("id").asText(), r.path("seq").asLong(-1)));
            }
        } finally {
            c.close();
        }
        return new int[] {fresh, dup};
    }


    private record Totals(int envelopes) {
    }

    private Totals verify() throws IOException {
        Map<String, JsonNode> byId = new HashMap<>();
        Map<String, String> markerToId = new HashMap<>();
        int total = 0;
        HttpConnection c = hub.connect(30_000);
        try {
            for (String w : workers) {
                List<JsonNode> items = hub.readInbox(c, w);
                for (int i = 0; i < items.size(); i++) {
                    JsonNode env = items.get(i);
                    long seq = env.path("seq").asLong(-1);
                    assertEquals(i + 1, seq, "inbox " + w + ": seqs must run 1, 2, 3, … without gaps; position " + i
                            + " holds " + env);
                    String id = env.path("id").asText();
                    assertFalse(id.isEmpty(), "envelope without id: " + env);
                    JsonNode previous = byId.put(id, env);
                    assertTrue(previous == null, "envelope id " + id + " appears twice: " + previous + " and " + env);
                    assertEquals(w, env.path("to").asText(), "envelope in inbox " + w + ": " + env);
                    String marker = env.path("text").asText().split(" ", 2)[0];
                    String other = markerToId.put(marker, id);
                    assertTrue(other == null, "request " + marker + " was committed twice: ids " + other + " and " + id);
                }
                assertEquals(ids(items), auditedSendsTo(c, w), "inbox " + w + ": every envelope audited once, folded"
                        + " into the audit's by-node index before the kill or not");
                total += items.size();
            }
        } finally {
            c.close();
        }
        int accepted = 0;
        for (Map.Entry<String, Outcome> e : ledger.entrySet()) {
            String marker = e.getKey();
            switch (e.getValue()) {
                case Accepted a -> {
                    accepted++;
                    JsonNode env = byId.get(a.id());
                    assertNotNull(env, "envelope " + a.id() + " (" + marker + ", seq " + a.seq() + " to " + a.to()
                            + ") was answered 202 but is missing after the restart");
                    assertEquals(a.seq(), env.path("seq").asLong(), "seq of " + a.id() + " changed: " + env);
                    assertEquals(a.to(), env.path("to").asText(), env.toString());
                    assertEquals(a.from(), env.path("from").asText(), env.toString());
                    assertEquals(a.id(), markerToId.get(marker), "request " + marker + " is held by another envelope");
                }
                case NotCommitted n -> assertFalse(markerToId.containsKey(marker),
                        "request " + marker + " (" + n.why() + ") is in an inbox: " + byId.get(markerToId.get(marker)));
                case Unknown u -> fail("unresolved request " + marker + " " + u);
            }
        }
        Set<String> known = new HashSet<>(ledger.keySet());
        for (String marker : markerToId.keySet()) {
            assertTrue(known.contains(marker), "an envelope nobody sent: " + byId.get(markerToId.get(marker)));
        }
        assertEquals(accepted, total, "inboxes hold exactly the accepted envelopes");
        return new Totals(total);
    }

    private static Set<String> ids(List<JsonNode> envelopes) {
        return envelopes.stream().map(e -> e.path("id").asText()).collect(Collectors.toSet());
    }

    /** The envelope ids of the allowed sends to {@code node} in the audit log, found by node; each must be there once. */
    private Set<String> auditedSendsTo(HttpConnection c, String node) throws IOException {
        HttpConnection.Response res = c.call("GET", "/v1/audit?node=" + node + "&action=send&decision=allow&format=jsonl",
                ADMIN, null);
        assertEquals(200, res.status(), "GET audit of " + node + ": " + res.body());
        Set<String> audited = new HashSet<>();
        for (String line : res.body().split("\n")) {
            JsonNode entry = JSON.readTree(line);
            if (entry.path("target").asText().equals(node)) {
                String id = entry.path("envelopeId").asText();
                assertTrue(audited.add(id), "the send of " + id + " is audited twice");
            }
        }
        return audited;
    }
}
