package dev.parley.server.federation;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.nats.GatewayConfig;
import dev.parley.nats.testing.NatsServer;
import dev.parley.server.it.HubFixture;
import io.nats.client.Connection;
import io.nats.client.Nats;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Federation over a NATS cluster of three real nats-server processes with routes, the
 * outboxes and the state room replicated three times: SIGKILL of the server that leads the
 * sending gateway's outbox, under a multi-sender cross-gateway load, loses nothing and
 * doubles nothing, and acknowledgements keep flowing back.
 */
class NatsClusterTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int SENDERS = 4;
    private static final int EACH = 60;

    @TempDir
    Path tmp;

    @BeforeEach
    void needsNatsServer() {
        assumeTrue(NatsServer.installed(), "nats-server is not installed (apt-get install nats-server): skipped");
    }

    private HubFixture gateway(String id, String urls) {
        return HubFixture.start(tmp.resolve("hub-" + id), c -> c.withGateway(
                Optional.of(new GatewayConfig(id, urls, Optional.empty(), 3))));
    }

    @Test
    void killingTheOutboxLeaderUnderLoadLosesNothing() throws Exception {
        List<NatsServer> cluster = NatsServer.cluster(tmp.resolve("nats"), 3);
        String urls = NatsServer.clusterUrl(cluster);
        try (HubFixture a = gateway("a", urls); HubFixture b = gateway("b", urls)) {
            SenderLoad.Parties parties = SenderLoad.place(a, b, SENDERS, WAIT);
            List<String> senders = parties.senders();
            String worker = parties.worker();

            NatsServer leader = leaderOf("PARLEY_OUT_a", urls, cluster);
            List<String> accepted = Collections.synchronizedList(new ArrayList<>());
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch half = new CountDownLatch(SENDERS * EACH / 2);
            List<Thread> threads = new ArrayList<>();
            for (int s = 0; s < SENDERS; s++) {
                int n = s;
                threads.add(Thread.ofVirtual().start(() -> {
                    try {
                        for (int i = 0; i < EACH; i++) {
                            accepted.add(a.sendOk(senders.get(n), "worker", n + ":" + i).text("id"));
                            half.countDown();
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                        while (half.getCount() > 0) {
                            half.countDown();
                        }
                    }
                }));
            }
            assertTrue(half.await(2, TimeUnit.MINUTES), "the senders did not get half way");
            leader.kill(); // SIGKILL: the outbox of a elects a new leader among the two left
            for (Thread t : threads) {
                t.join();
            }
            assertNull(failure.get(), () -> "a send failed while a NATS server was down: " + failure.get());

            await().atMost(Duration.ofSeconds(90)).until(() -> b.inbox(worker).size() >= 1 + SENDERS * EACH);
            SenderLoad.assertExactlyOnceInOrder(b.inbox(worker), 1, SENDERS, accepted); // after the probe

            // acknowledgements come back through b's outbox, replicated on the two servers left
            String last = accepted.getLast();
            await().atMost(Duration.ofSeconds(60)).until(() -> a.get(a.admin(), "/v1/messages/" + last).get("timeline")
                    .toString().contains("accepted by b"));
            await().atMost(WAIT).until(() -> {
                JsonNode federation = a.get(null, "/healthz").get("federation");
                return "connected".equals(federation.get("mode").asText()) && federation.get("spoolDepth").asLong() == 0;
            });
        } finally {
            for (NatsServer server : cluster) {
                server.close();
            }
        }
    }

    /** The server of the cluster that leads {@code stream} now. */
    private static NatsServer leaderOf(String stream, String urls, List<NatsServer> cluster) throws Exception {
        try (Connection probe = Nats.connect(urls)) {
            String name = probe.jetStreamManagement().getStreamInfo(stream).getClusterInfo().getLeader();
            assertTrue(name != null && name.matches("n[1-9]"), "no leader of " + stream + ": " + name);
            return cluster.get(Integer.parseInt(name.substring(1)) - 1);
        }
    }
}
