package dev.parley.server.admission;

import static dev.parley.server.admission.Admit.exchange;
import static dev.parley.server.admission.Admit.inviteToken;
import static dev.parley.server.admission.Admit.nonce;
import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.HubFixture.uid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.parley.server.HubConfig;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Token buckets per node and per client address, with 429 rate_limited and Retry-After. */
class RateLimitTest {
    @TempDir
    Path dataDir;

    /** Asserts a 429 with the contract's body and a Retry-After of whole seconds, at least 1. */
    static long assertRateLimited(Resp r) {
        assertError(r, 429, "rate_limited");
        String header = r.headers().firstValue("Retry-After").orElseThrow(() -> new AssertionError("no Retry-After: " + r));
        assertTrue(header.matches("\\d+"), "Retry-After must be whole seconds: " + header);
        long seconds = Long.parseLong(header);
        assertTrue(seconds >= 1, "Retry-After must be at least 1: " + header);
        assertTrue(r.get("retryAfter") != null && r.get("retryAfter").isNumber(), "retryAfter in the body: " + r);
        assertEquals(seconds, r.num("retryAfter"));
        return seconds;
    }

    /**
     * The hub's monotonic clock for rate buckets, held still by the tests below: a bucket then
     * refills only when a test moves it, so counts are exact however slow the machine is.
     */
    private final AtomicLong ticker = new AtomicLong();

    private HubFixture startHub(UnaryOperator<HubConfig> customize) {
        return HubFixture.start(dataDir, customize, ticker::get);
    }

    @Test
    void aFloodOfExchangesFromOneAddressIsRateLimitedWhileNodesKeepSending() {
        try (HubFixture hub = startHub(UnaryOperator.identity())) {
            String node = uid("rl-sender");
            String nodeToken = hub.createNode(node, null);
            String invitee = uid("rl-invitee");
            String token = inviteToken(hub, hub.admin(), "nodeId", invitee);
            int ok = 0;
            Resp limited = null;
            for (int i = 0; i < 40 && limited == null; i++) {
                Resp r = exchange(hub, token, invitee, nonce(), null);
                if (r.status() == 429) {
                    limited = r;
                } else {
                    assertEquals(200, r.status(), r::toString);
                    ok++;
                    hub.sendOk(nodeToken, node, "still sending " + i);
                }
            }
            assertEquals(30, ok, "the default allows 30 exchanges a minute from one address");
            long retryAfter = assertRateLimited(limited);
            assertTrue(retryAfter <= 2, "one more exchange frees up within 2 s at 30/min: " + retryAfter);
            // the rate check comes before every other check: even a malformed or unknown exchange gets 429
            assertRateLimited(hub.post(null, "/v1/auth/exchange", obj()));
            assertRateLimited(exchange(hub, "pi_unknown", invitee, nonce(), null));
            // while a node's ordinary requests keep working
            for (int i = 0; i < 20; i++) {
                hub.sendOk(nodeToken, node, "after the flood " + i);
            }
            assertEquals(200, hub.get(nodeToken, "/v1/inbox").status());
            // and the admin is never limited
            assertEquals(201, Admit.invite(hub, hub.admin()).status());
            assertTrue(hub.metric("parley_rate_limited_total") >= 3, "rate-limited requests are counted");
            Resp metrics = hub.get(hub.admin(), "/metrics");
            assertTrue(metrics.body().contains("parley_auth_exchanges_total{outcome=\"issued\"} 30"), metrics.body());
            assertTrue(metrics.body().contains("parley_auth_exchanges_total{outcome=\"rate_limited\"}"), metrics.body());
            assertTrue(metrics.body().contains("parley_rate_limited_total{scope=\"address\"}"), metrics.body());
        }
    }

    @Test
    void aNodeOverItsRateGets429OnEveryRouteAndTheOthersDoNot() {
        try (HubFixture hub = startHub(c -> c.withNodeRate(1, 5))) {
            String slow = uid("rl-slow");
            String slowToken = hub.createNode(slow, null);
            String other = uid("rl-other");
            String otherToken = hub.createNode(other, null);
            for (int i = 0; i < 5; i++) {
                hub.sendOk(slowToken, slow, "burst " + i);
            }
            assertRateLimited(hub.send(slowToken, slow, "one too many"));
            assertRateLimited(hub.get(slowToken, "/v1/inbox"));
            assertRateLimited(hub.get(slowToken, "/v1/nodes/" + slow));
            assertRateLimited(hub.get(slowToken, "/v1/no-such-route"));
            // other nodes and the admin are unaffected
            hub.sendOk(otherToken, other, "fine");
            for (int i = 0; i < 20; i++) {
                assertEquals(200, hub.get(hub.admin(), "/v1/nodes").status());
            }
            // a bad token is refused as unauthorized, not counted against anyone
            assertError(hub.get("pn_bogus", "/v1/inbox"), 401, "unauthorized");
            assertTrue(hub.metric("parley_rate_limited_total") >= 4);
        }
    }

    @Test
    void limitsAreSetByTheAdminReadBackAndKeptAcrossRestarts() {
        String node = uid("rl-set");
        String nodeToken;
        try (HubFixture hub = startHub(UnaryOperator.identity())) {
            nodeToken = hub.createNode(node, null);
            String path = "/v1/nodes/" + node + "/limits";
            Resp def = hub.get(nodeToken, path);
            assertEquals(200, def.status(), def::toString);
            assertEquals(200.0, def.get("rate").asDouble());
            assertEquals(400, def.num("burst"));
            assertTrue(def.get("default").asBoolean());

            assertError(hub.request("PUT", path, nodeToken, bytes(obj("rate", 5, "burst", 10)), java.util.Map.of()),
                    403, "forbidden");
            assertError(put(hub, path, obj("rate", 0, "burst", 10)), 400, "invalid_request");
            assertError(put(hub, path, obj("rate", -1, "burst", 10)), 400, "invalid_request");
            assertError(put(hub, path, obj("rate", 5, "burst", 0)), 400, "invalid_request");
            assertError(put(hub, path, obj("rate", "5", "burst", 10)), 400, "invalid_request");
            assertError(put(hub, path, obj("rate", 5)), 400, "invalid_request");
            assertError(put(hub, "/v1/nodes/" + uid("rl-ghost") + "/limits", obj("rate", 5, "burst", 10)), 404,
                    "node_not_found");
            assertError(hub.get(hub.createNode(uid("rl-nosy"), null), path), 403, "forbidden");

            Resp set = put(hub, path, obj("rate", 2.5, "burst", 3));
            assertEquals(200, set.status(), set::toString);
            assertEquals(2.5, set.get("rate").asDouble());
            assertEquals(3, set.num("burst"));
            assertFalse(set.get("default").asBoolean());
            // it takes effect at once: the bucket now holds at most 3
            int accepted = 0;
            for (int i = 0; i < 6; i++) {
                if (hub.send(nodeToken, node, "m" + i).status() == 202) {
                    accepted++;
                }
            }
            assertEquals(3, accepted, "the new burst applies at once");
        }
        try (HubFixture again = HubFixture.start(dataDir)) {
            Resp kept = again.get(again.admin(), "/v1/nodes/" + node + "/limits");
            assertEquals(2.5, kept.get("rate").asDouble(), kept::toString);
            assertEquals(3, kept.num("burst"));
            Resp reset = again.delete(again.admin(), "/v1/nodes/" + node + "/limits");
            assertEquals(200, reset.status(), reset::toString);
            assertTrue(reset.get("default").asBoolean());
            assertEquals(400, reset.num("burst"));
        }
    }

    @Test
    void aNodeAt50PerSecondBurst50SendingFlatOutFor10sGets550Accepted() throws Exception {
        try (HubFixture hub = startHub(UnaryOperator.identity())) {
            String node = uid("rl-acc");
            String token = hub.createNode(node, null);
            assertEquals(200, put(hub, "/v1/nodes/" + node + "/limits", obj("rate", 50, "burst", 50)).status());
            AtomicInteger accepted = new AtomicInteger();
            AtomicInteger limited = new AtomicInteger();
            AtomicInteger transport = new AtomicInteger();
            AtomicBoolean unexpected = new AtomicBoolean();
            // Ten seconds of hub time in steps of 100 ms; in each step four senders go flat out,
            // each until the bucket refuses it, so every token the rate yields is taken.
            for (int step = 0; step <= 100; step++) {
                if (step > 0) {
                    ticker.addAndGet(TimeUnit.MILLISECONDS.toNanos(100));
                }
                try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                    List<Future<?>> senders = new ArrayList<>();
                    for (int t = 0; t < 4; t++) {
                        senders.add(pool.submit(() -> {
                            while (true) {
                                Resp r;
                                try {
                                    r = hub.send(token, node, "flat out");
                                } catch (AssertionError lost) {
                                    // The JDK client, reusing a pooled connection within microseconds, can race its
                                    // own pool ("Data received while in pool"); the hub's inbox below is the count.
                                    transport.incrementAndGet();
                                    continue;
                                }
                                switch (r.status()) {
                                    case 202 -> accepted.incrementAndGet();
                                    case 429 -> {
                                        limited.incrementAndGet();
                                        return null;
                                    }
                                    default -> {
                                        unexpected.set(true);
                                        return null;
                                    }
                                }
                            }
                        }));
                    }
                    for (Future<?> f : senders) {
                        f.get(60, TimeUnit.SECONDS);
                    }
                }
            }
            assertFalse(unexpected.get(), "only 202 and 429 expected");
            // read as the admin, who is never limited (the node's bucket is empty right now)
            int stored = hub.inboxAll(hub.admin(), "/v1/nodes/" + node + "/inbox").size();
            assertTrue(stored >= accepted.get() && stored <= accepted.get() + transport.get(),
                    "every 202 is in the inbox: " + stored + " stored, " + accepted.get() + " answered 202");
            // the burst, then 50/s for 10 s; ±1 only for the bucket's floating-point refill
            int expected = 50 + 50 * 10;
            assertTrue(Math.abs(stored - expected) <= 1, "accepted " + stored + ", expected " + expected);
            assertEquals(4 * 101, limited.get(), "each sender stopped at its first refusal in every step");
            assertTrue(transport.get() * 100 <= accepted.get() + limited.get(),
                    "transport hiccups must stay rare: " + transport.get());
        }
    }

    @Test
    void veryLongHeadersGetACleanClientError() {
        try (HubFixture hub = HubFixture.start(dataDir)) {
            String node = uid("rl-long");
            String token = hub.createNode(node, null);
            Resp huge = hub.request("GET", "/v1/nodes", null, null,
                    java.util.Map.of("Authorization", "Bearer " + "a".repeat(64 * 1024)));
            assertTrue(huge.status() >= 400 && huge.status() < 500, "a 64 KiB Authorization header: " + huge.status());
            assertEquals("invalid_request", huge.error(), () -> "the contract's error body: " + huge);
            // no body: a server that refuses at the headers closes without reading one, and unread bytes
            // would turn its answer into a connection reset on the client side (a TCP race, not the hub)
            Resp hugeOnAuth = hub.request("POST", "/v1/auth/exchange", null, null,
                    java.util.Map.of("X-Padding", "b".repeat(64 * 1024)));
            assertTrue(hugeOnAuth.status() >= 400 && hugeOnAuth.status() < 500, "a 64 KiB header: " + hugeOnAuth.status());
            assertEquals("invalid_request", hugeOnAuth.error(), () -> "the contract's error body: " + hugeOnAuth);
            // a long but acceptable header with a wrong token: 401 with the contract's body
            assertError(hub.request("GET", "/v1/nodes", null, null,
                    java.util.Map.of("Authorization", "Bearer " + "a".repeat(4 * 1024))), 401, "unauthorized");
            hub.sendOk(token, node, "the hub still serves");
            hub.assertStillServes();
        }
    }

    private static Resp put(HubFixture hub, String path, Object body) {
        return hub.request("PUT", path, hub.admin(), bytes(body), java.util.Map.of());
    }

    private static byte[] bytes(Object body) {
        try {
            return HubFixture.JSON.writeValueAsBytes(body);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
