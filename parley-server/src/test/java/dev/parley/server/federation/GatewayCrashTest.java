package dev.parley.server.federation;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.nats.testing.NatsServer;
import dev.parley.nats.testing.ServerProcess;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Two gateways as separate OS processes under a multi-sender cross-gateway load; the
 * receiving gateway and then the sending one are killed with SIGKILL and restarted on the
 * same data. Every send answered 202 reaches the target's inbox exactly once, its seqs are
 * gap-free, and each sender's order is kept.
 */
class GatewayCrashTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ADMIN = "pa_crash-test-admin";
    /** A fresh JVM on a loaded two-core machine may take long to answer; a bound for a hang, not a measure. */
    private static final Duration STARTUP = Duration.ofSeconds(120);
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path tmp;

    @BeforeEach
    void needsNatsServer() {
        assumeTrue(NatsServer.installed(), "nats-server is not installed (apt-get install nats-server): skipped");
    }

    /** One gateway process: its port, data and log, restartable. */
    private final class Gw implements AutoCloseable {
        final String id;
        final int port;
        final NatsServer nats;
        Process process;

        Gw(String id, NatsServer nats) throws IOException {
            this.id = id;
            this.port = ServerProcess.freePort();
            this.nats = nats;
        }

        String base() {
            return "http://127.0.0.1:" + port;
        }

        void start() throws IOException {
            Path log = tmp.resolve("gateway-" + id + ".log");
            long from = ServerProcess.logSize(log);
            process = GatewayProcess.spawn(tmp.resolve("data-" + id), port, ADMIN, id, nats.url(), log);
            // its own line: whatever answers on the port may be another server that took it first
            ServerProcess.awaitAnnounced(process, log, from, "listening on " + base() + " ", STARTUP);
        }

        void kill() throws InterruptedException {
            process.destroyForcibly().waitFor();
        }

        @Override
        public void close() throws InterruptedException {
            if (process != null && process.isAlive()) {
                kill();
            }
        }
    }

    @Test
    void sigkilledGatewaysDeliverEveryAcceptedSendExactlyOnce() throws Exception {
        try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats")); Gw a = new Gw("a", nats); Gw b = new Gw("b", nats)) {
            a.start();
            b.start();
            int senders = 4;
            int phase = 40; // 202s answered in each phase: before the kills, while b is down, after both restarts
            create(a, ADMIN, "lead", null);
            List<String> tokens = new ArrayList<>();
            for (int s = 0; s < senders; s++) {
                tokens.add(create(a, ADMIN, "sender" + s, "lead"));
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> call(b, "GET", "/v1/nodes/sender" + (senders - 1), ADMIN,
                    null).statusCode() == 200);
            String worker = create(b, ADMIN, "worker", "lead");
            await().atMost(Duration.ofSeconds(30)).until(() -> call(a, "GET", "/v1/nodes/worker", ADMIN, null)
                    .statusCode() == 200);

            List<String> accepted = Collections.synchronizedList(new ArrayList<>());
            AtomicInteger answered = new AtomicInteger();
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> threads = new ArrayList<>();
            for (int s = 0; s < senders; s++) {
                int n = s;
                threads.add(Thread.ofVirtual().start(() -> {
                    // Until told to stop, never for a count: the kills must land while the load runs,
                    // however fast the machine answers.
                    for (int i = 0; !stop.get(); i++) {
                        // A send whose answer is lost with the gateway is not counted: it may or may not be in.
                        try {
                            HttpResponse<String> r = call(a, "POST", "/v1/messages", tokens.get(n),
                                    Map.of("to", "worker", "text", n + ":" + i));
                            if (r.statusCode() == 202) {
                                accepted.add(JSON.readTree(r.body()).get("id").asText());
                                answered.incrementAndGet();
                            }
                        } catch (IOException | InterruptedException e) {
                            await().atMost(STARTUP).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                                    .until(() -> stop.get() || call(a, "GET", "/healthz", null, null).statusCode() == 200);
                        }
                    }
                }));
            }
            try {
                await().atMost(STARTUP).until(() -> answered.get() >= phase);
                b.kill(); // the receiver dies under load; a keeps accepting
                int atB = answered.get();
                await().atMost(STARTUP).until(() -> answered.get() >= atB + phase);
                a.kill(); // the sender dies with envelopes committed and not yet published
                int atA = answered.get();
                b.start();
                a.start();
                await().atMost(STARTUP).until(() -> answered.get() >= atA + phase);
            } finally {
                stop.set(true);
                for (Thread t : threads) {
                    t.join();
                }
            }

            await().atMost(STARTUP).until(() -> inbox(b, worker).size() >= accepted.size());
            List<JsonNode> inbox = inbox(b, worker);
            Set<String> ids = new HashSet<>();
            int[] last = new int[senders];
            java.util.Arrays.fill(last, -1);
            for (int i = 0; i < inbox.size(); i++) {
                JsonNode e = inbox.get(i);
                assertEquals(i + 1, e.get("seq").asLong(), "seqs gap-free");
                assertTrue(ids.add(e.get("id").asText()), "nothing twice: " + e);
                String[] text = e.get("text").asText().split(":");
                int sender = Integer.parseInt(text[0]);
                int n = Integer.parseInt(text[1]);
                assertTrue(n > last[sender], "order per sender kept: " + n + " after " + last[sender]);
                last[sender] = n;
            }
            assertTrue(ids.containsAll(accepted), "every 202 delivered");
            assertTrue(accepted.size() >= 3 * phase, "the load went on across the kills");
        }
    }

    private String create(Gw gw, String token, String id, String parent) throws Exception {
        Map<String, Object> body = parent == null ? Map.of("id", id) : Map.of("id", id, "parent", parent);
        HttpResponse<String> r = call(gw, "POST", "/v1/nodes", token, body);
        assertEquals(201, r.statusCode(), r.body());
        return JSON.readTree(r.body()).get("token").asText();
    }

    private List<JsonNode> inbox(Gw gw, String token) throws Exception {
        List<JsonNode> all = new ArrayList<>();
        long after = 0;
        while (true) {
            JsonNode page = JSON.readTree(call(gw, "GET", "/v1/inbox?after=" + after + "&limit=1000", token, null).body());
            if (page.get("items").isEmpty()) {
                return all;
            }
            page.get("items").forEach(all::add);
            after = page.get("next").asLong();
        }
    }

    private HttpResponse<String> call(Gw gw, String method, String path, String token, Object body)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(gw.base() + path)).timeout(Duration.ofSeconds(20))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body)));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
