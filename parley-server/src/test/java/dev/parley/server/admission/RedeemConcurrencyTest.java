package dev.parley.server.admission;

import static dev.parley.server.admission.Admit.exchange;
import static dev.parley.server.admission.Admit.inviteToken;
import static dev.parley.server.admission.Admit.nonce;
import static dev.parley.server.admission.Admit.redeem;
import static dev.parley.server.it.HubFixture.uid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Fifty clients racing one invite through exchange and redeem: exactly one node comes out. */
class RedeemConcurrencyTest {
    static final int CLIENTS = 50;

    @TempDir
    static Path dataDir;
    static HubFixture hub;

    @BeforeAll
    static void startHub() {
        hub = HubFixture.start(dataDir, c -> c.withExchangesPerMinute(100_000));
    }

    @AfterAll
    static void stopHub() {
        if (hub != null) {
            hub.close();
        }
    }

    @Test
    void fiftyParallelExchangesAndRedeemsOfOneUnboundInviteCreateOneNode() throws Exception {
        String token = inviteToken(hub, hub.admin());
        String prefix = uid("race");
        Map<String, Integer> outcomes = race(token, i -> prefix + "-" + i);
        assertEquals(1, outcomes.getOrDefault("201", 0), "exactly one redeem must create a node: " + outcomes);
        long created = hub.get(hub.admin(), "/v1/nodes").items().stream()
                .filter(n -> n.path("id").asText().startsWith(prefix + "-")).count();
        assertEquals(1, created, "exactly one node must exist: " + outcomes);
        assertEquals(CLIENTS - 1, outcomes.getOrDefault("409 ticket_already_used", 0)
                + outcomes.getOrDefault("409 token_already_used", 0), "the others are told the invite is used: " + outcomes);
    }

    @Test
    void fiftyParallelExchangesAndRedeemsOfOneBoundInviteCreateOneNode() throws Exception {
        String node = uid("race-bound");
        String token = inviteToken(hub, hub.admin(), "nodeId", node);
        Map<String, Integer> outcomes = race(token, i -> node);
        assertEquals(1, outcomes.getOrDefault("201", 0), "exactly one redeem must create the node: " + outcomes);
        assertEquals(200, hub.get(hub.admin(), "/v1/nodes/" + node).status());
        outcomes.keySet().forEach(k -> assertTrue(k.equals("201") || k.startsWith("409"),
                "losers get a 409, never a 5xx: " + outcomes));
    }

    private static Map<String, Integer> race(String token, java.util.function.IntFunction<String> nodeIds)
            throws Exception {
        Map<String, Integer> outcomes = new ConcurrentHashMap<>();
        CountDownLatch go = new CountDownLatch(1);
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                String nodeId = nodeIds.apply(i);
                futures.add(pool.submit(() -> {
                    go.await();
                    Resp ex = exchange(hub, token, nodeId, nonce(), null);
                    if (ex.status() != 200) {
                        outcomes.merge(ex.status() + " " + ex.error(), 1, Integer::sum);
                        return null;
                    }
                    Resp r = redeem(hub, ex.text("ticket"));
                    outcomes.merge(r.status() == 201 ? "201" : r.status() + " " + r.error(), 1, Integer::sum);
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        }
        assertEquals(CLIENTS, outcomes.values().stream().mapToInt(Integer::intValue).sum(), outcomes::toString);
        return outcomes;
    }
}
