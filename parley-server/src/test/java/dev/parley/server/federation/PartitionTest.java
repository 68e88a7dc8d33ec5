package dev.parley.server.federation;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.nats.GatewayConfig;
import dev.parley.nats.testing.NatsServer;
import dev.parley.server.it.HubFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A network partition, for real: gateway a runs in its own network namespace, reached by the
 * test over one veth link and reaching nats-server over another; that second link is taken
 * down under a cross-gateway load and brought back. Needs root and {@code ip netns}; skipped,
 * saying so, where they are not available.
 */
class PartitionTest {
    private static final String ADMIN = "pa_partition-test-admin-token-0123456789abcdef";
    private static final Duration STARTUP = Duration.ofSeconds(120);
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int SENDERS = 2;

    @TempDir
    Path tmp;

    @Test
    void aGatewayCutOffFromNatsSpoolsAndDeliversEverythingOnceTheLinkIsBack() throws Exception {
        assumeTrue(NatsServer.installed(), "nats-server is not installed (apt-get install nats-server): skipped");
        try (Namespace ns = Namespace.create(); NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats"), "0.0.0.0");
             HubFixture b = HubFixture.start(tmp.resolve("hub-b"), c -> c.withGateway(
                     Optional.of(new GatewayConfig("b", nats.url(), Optional.empty()))))) {
            Process process = GatewayProcess.spawn(ns.exec(), tmp.resolve("hub-a"), 7421, ADMIN, "a",
                    "nats://" + ns.natsSide() + ":" + nats.port(), ns.gatewaySide(), tmp.resolve("gateway-a.log"));
            try {
                HubFixture a = HubFixture.remote("http://" + ns.gatewaySide() + ":7421", ADMIN);
                await().atMost(STARTUP).ignoreExceptions().until(() -> a.get(null, "/healthz").status() == 200);
                run(a, b, ns);
            } finally {
                process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    private void run(HubFixture a, HubFixture b, Namespace ns) throws Exception {
        SenderLoad.Parties parties = SenderLoad.place(a, b, SENDERS, WAIT);
        String lead = parties.lead();
        List<String> senders = parties.senders();
        String worker = parties.worker();
        String peer = a.createNode("peer", "lead");

        List<String> accepted = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean spooled = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int s = 0; s < SENDERS; s++) {
            int n = s;
            threads.add(Thread.ofVirtual().start(() -> {
                try {
                    for (int i = 0; !stop.get(); i++) {
                        HubFixture.Resp r = a.sendOk(senders.get(n), "worker", n + ":" + i);
                        accepted.add(r.text("id"));
                        if ("spooled".equals(r.text("status"))) {
                            spooled.set(true);
                        }
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // a steady load, not a flood
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }));
        }
        try {
            await().atMost(WAIT).until(() -> accepted.size() >= 20);
            ns.cut();
            // a notices (its publications go unanswered) and spools; its local traffic goes on.
            await().atMost(WAIT).until(() -> "spooling".equals(federation(a).get("mode").asText()) && spooled.get());
            a.sendOk(lead, "peer", "local while cut off");
            // b sees a leave presence once a's entry expires.
            await().atMost(WAIT).until(() -> !present(b, "a"));
            int beforeRestore = accepted.size();

            ns.restore();
            await().atMost(WAIT).until(() -> accepted.size() >= beforeRestore + 20);
        } finally {
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
        }
        assertNull(failure.get(), () -> "a send failed on the cut-off gateway: " + failure.get());

        await().atMost(WAIT).until(() -> "connected".equals(federation(a).get("mode").asText())
                && federation(a).get("spoolDepth").asLong() == 0);
        await().atMost(WAIT).until(() -> b.inbox(worker).size() >= 1 + accepted.size());
        SenderLoad.assertExactlyOnceInOrder(b.inbox(worker), 1, SENDERS, accepted);
        await().atMost(WAIT).until(() -> present(b, "a"));
        assertEquals(List.of("local while cut off"), a.inbox(peer).stream()
                .map(e -> e.get("text").asText()).toList());
    }

    private static JsonNode federation(HubFixture hub) {
        return hub.get(null, "/healthz").get("federation");
    }

    private static boolean present(HubFixture hub, String gateway) {
        for (JsonNode g : hub.get(hub.admin(), "/v1/gateways").get("gateways")) {
            if (g.get("id").asText().equals(gateway)) {
                return g.get("present").asBoolean();
            }
        }
        return false;
    }

    /**
     * A network namespace for gateway a with two veth links to this one: {@code 10.213.N.0/30}
     * carries the test's HTTP to a, {@code 10.214.N.0/30} a's traffic with nats-server. Only the
     * second is ever cut.
     */
    private record Namespace(String name, int n) implements AutoCloseable {
        static Namespace create() throws IOException, InterruptedException {
            int n = (int) (ProcessHandle.current().pid() % 250) + 1;
            Namespace ns = new Namespace("parley-pt-" + n, n);
            ns.close(); // one left behind by a run that was killed, with its links
            String setUp = ns.ip("netns", "add", ns.name);
            assumeTrue(setUp.isEmpty(), "skipped: a network namespace needs root and ip netns (ip said: " + setUp + ")");
            try {
                ns.link("pth" + n, "ptg" + n, "10.213." + n);
                ns.link("pnh" + n, "png" + n, "10.214." + n);
                ns.must("netns", "exec", ns.name, "ip", "link", "set", "lo", "up");
            } catch (IOException | RuntimeException e) {
                ns.close();
                throw e;
            }
            return ns;
        }

        String gatewaySide() {
            return "10.213." + n + ".2";
        }

        String natsSide() {
            return "10.214." + n + ".1";
        }

        List<String> exec() {
            return List.of("ip", "netns", "exec", name);
        }

        void cut() throws IOException, InterruptedException {
            must("link", "set", "pnh" + n, "down");
        }

        void restore() throws IOException, InterruptedException {
            must("link", "set", "pnh" + n, "up");
        }

        private void link(String host, String guest, String net) throws IOException, InterruptedException {
            must("link", "add", host, "type", "veth", "peer", "name", guest);
            must("link", "set", guest, "netns", name);
            must("addr", "add", net + ".1/30", "dev", host);
            must("link", "set", host, "up");
            must("netns", "exec", name, "ip", "addr", "add", net + ".2/30", "dev", guest);
            must("netns", "exec", name, "ip", "link", "set", guest, "up");
        }

        private void must(String... args) throws IOException, InterruptedException {
            String out = ip(args);
            if (!out.isEmpty()) {
                throw new IllegalStateException("ip " + String.join(" ", args) + ": " + out);
            }
        }

        /** Runs {@code ip args}; its output, empty when it succeeded silently. */
        private String ip(String... args) throws IOException, InterruptedException {
            List<String> command = new ArrayList<>(List.of("ip"));
            command.addAll(List.of(args));
            Process p;
            try {
                p = new ProcessBuilder(command).redirectErrorStream(true).start();
            } catch (IOException e) {
                return "cannot run ip: " + e.getMessage();
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            int code = p.waitFor();
            return code == 0 ? out : (out.isEmpty() ? "exit " + code : out);
        }

        /** Deleting the namespace deletes its veth ends, and with them their peers here. */
        @Override
        public void close() throws IOException, InterruptedException {
            ip("netns", "del", name);
        }
    }
}
