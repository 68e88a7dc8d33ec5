package dev.parley.server.federation;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.nats.GatewayConfig;
import dev.parley.nats.testing.NatsServer;
import dev.parley.nats.testing.ServerProcess;
import dev.parley.server.it.HubFixture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Three gateways as three OS processes on one nats-server: sends, replies, acks, topics and
 * broadcasts across them, and the sender's timelines show what happened on the other hosts.
 */
class GatewayProcessesTest {
    private static final String ADMIN = "pa_gateway-processes-test-admin-0123456789ab";
    /** A fresh JVM on a loaded two-core machine may take long to answer; a bound for a hang, not a measure. */
    private static final Duration STARTUP = Duration.ofSeconds(120);
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Map<String, String> A2A_V1 = Map.of("A2A-Version", "1.0");

    @TempDir
    Path tmp;

    @BeforeEach
    void needsNatsServer() {
        assumeTrue(NatsServer.installed(), "nats-server is not installed (apt-get install nats-server): skipped");
    }

    @Test
    void threeGatewayProcessesSendReplyAckPublishAndBroadcastAcrossEachOther() throws Exception {
        List<Process> processes = new ArrayList<>();
        List<Path> logs = new ArrayList<>();
        try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats"))) {
            List<HubFixture> gateways = new ArrayList<>();
            for (String id : List.of("a", "b", "c")) {
                int port = ServerProcess.freePort();
                Path log = tmp.resolve("gateway-" + id + ".log");
                processes.add(GatewayProcess.spawn(tmp.resolve("data-" + id), port, ADMIN, id, nats.url(), log));
                logs.add(log);
                gateways.add(HubFixture.remote("http://127.0.0.1:" + port, ADMIN));
            }
            // each one's own line: whatever answers on a port may be another server that took it first
            for (int i = 0; i < gateways.size(); i++) {
                ServerProcess.awaitAnnounced(processes.get(i), logs.get(i), 0,
                        "listening on " + gateways.get(i).url() + " ", STARTUP);
            }
            run(gateways.get(0), gateways.get(1), gateways.get(2));
        } finally {
            for (Process p : processes) {
                p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * Model item 5 with a real crash: gateway a, owner of worker, is a process killed with
     * SIGKILL; b, worker's fallback, takes worker over once a's presence has run out, and b's
     * mail for worker, sent while a was dead, is worker's to read at b.
     */
    @Test
    void aFallbackTakesOverTheNodeOfAGatewayProcessKilledWithSigkill() throws Exception {
        Process owner = null;
        try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats"));
             HubFixture b = HubFixture.start(tmp.resolve("hub-b"), config -> config.withGateway(
                     Optional.of(new GatewayConfig("b", nats.url(), Optional.empty()))))) {
            int port = ServerProcess.freePort();
            Path log = tmp.resolve("gateway-a.log");
            owner = GatewayProcess.spawn(tmp.resolve("data-a"), port, ADMIN, "a", nats.url(), log);
            HubFixture a = HubFixture.remote("http://127.0.0.1:" + port, ADMIN);
            ServerProcess.awaitAnnounced(owner, log, 0, "listening on " + a.url() + " ", STARTUP);
            String lead = b.createNode("lead", null);
            await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/nodes/lead").status() == 200);
            a.createNodeResp(a.admin(), "worker", "lead");
            await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/nodes/worker").status() == 200);
            // a accepts b as a fallback once it has seen b's presence
            await().atMost(WAIT).until(() -> a.put(a.admin(), "/v1/nodes/worker/routing",
                    obj("fallbacks", List.of("b"))).status() == 200);
            String before = b.sendOk(lead, "worker", "before").text("id");
            await().atMost(WAIT).until(() -> b.get(lead, "/v1/messages/" + before).get("timeline").toString()
                    .contains("accepted by a"));

            owner.destroyForcibly().waitFor(); // SIGKILL: no goodbye, a's presence runs out
            String during = b.sendOk(lead, "worker", "during").text("id");
            await().atMost(Duration.ofSeconds(90)).until(() -> "b".equals(b.get(b.admin(), "/v1/nodes/worker")
                    .text("gateway")));
            assertEquals("{\"node\":\"worker\",\"owner\":\"b\",\"fallbacks\":[\"a\"]}",
                    b.get(b.admin(), "/v1/nodes/worker/routing").body());
            String token = b.post(b.admin(), "/v1/nodes/worker/token", null).text("token");
            // b's own copies become worker's inbox: "before", which a had taken, is there again
            // (at least once around a move, docs/federation.md), and "during" once.
            assertEquals(List.of(before, during), b.inbox(token).stream().map(e -> e.get("id").asText()).toList());
            assertTrue(b.get(b.admin(), "/v1/audit?node=worker&action=node.owner").body()
                    .contains("owner moved from gateway a to gateway b"), "the move is audited");
            String after = b.sendOk(lead, "worker", "after").text("id");
            assertEquals(List.of(before, during, after), b.inbox(token).stream().map(e -> e.get("id").asText())
                    .toList(), "a local send now");
        } finally {
            if (owner != null) {
                owner.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    private void run(HubFixture a, HubFixture b, HubFixture c) {
        String lead = a.createNode("lead", null);
        await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/nodes/lead").status() == 200
                && c.get(c.admin(), "/v1/nodes/lead").status() == 200);
        String worker = b.createNodeResp(b.admin(), "worker", "lead").text("token");
        String helper = c.createNodeResp(c.admin(), "helper", "lead").text("token");
        await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/nodes/worker").status() == 200
                && a.get(a.admin(), "/v1/nodes/helper").status() == 200 && b.get(b.admin(), "/v1/nodes/helper")
                .status() == 200 && c.get(c.admin(), "/v1/nodes/worker").status() == 200);

        // a -> b: a send, read on b, replied on b; a's timeline shows each step on b.
        String asked = a.sendOk(lead, "worker", "status?").text("id");
        await().atMost(WAIT).until(() -> texts(b.inbox(worker)).contains("status?"));
        assertEquals(202, b.post(worker, "/v1/messages/" + asked + "/reply", obj("text", "all green")).status());
        await().atMost(WAIT).until(() -> a.inbox(lead).stream().anyMatch(e -> "reply".equals(e.get("kind").asText())
                && asked.equals(e.get("corrId").asText()) && "all green".equals(e.get("text").asText())));
        await().atMost(WAIT).until(() -> "replied".equals(a.get(lead, "/v1/messages/" + asked).text("state")));
        String timeline = a.get(lead, "/v1/messages/" + asked).get("timeline").toString();
        assertEquals(true, timeline.contains("accepted by b") && timeline.contains("on b: "), timeline);

        // a -> c: a send acked as processed on c.
        String job = a.sendOk(lead, "helper", "do it").text("id");
        await().atMost(WAIT).until(() -> texts(c.inbox(helper)).contains("do it"));
        assertEquals(200, c.post(helper, "/v1/messages/" + job + "/ack", obj("status", "processed")).status());
        await().atMost(WAIT).until(() -> "processed".equals(a.get(lead, "/v1/messages/" + job).text("state")));

        // b -> c: a topic event from worker to its sibling's subscription on c.
        assertEquals(201, c.post(helper, "/v1/topics/ops/subscriptions", obj()).status());
        await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/topics/ops/subscriptions").items().size() == 1);
        assertEquals(1, b.post(worker, "/v1/topics/ops/events", obj("text", "deployed")).json().get("delivered")
                .asInt());
        await().atMost(WAIT).until(() -> texts(c.inbox(helper)).contains("deployed"));

        // a -> b and c: lead's broadcast to the group it leads.
        assertEquals(2, a.post(lead, "/v1/broadcasts", obj("text", "stand-up")).json().get("delivered").asInt());
        await().atMost(WAIT).until(() -> texts(b.inbox(worker)).contains("stand-up")
                && texts(c.inbox(helper)).contains("stand-up"));

        // c -> a: helper hands lead a task over A2A (lead's card, fetched on c); lead completes it on a.
        JsonNode card = c.get(helper, "/a2a/lead/.well-known/agent-card.json").json();
        assertEquals("a", card.at("/capabilities/extensions/0/params/gateway").asText(), card::toString);
        HubFixture.Resp sent = c.request("POST", "/a2a/lead", helper, ("{\"jsonrpc\":\"2.0\",\"id\":1,"
                + "\"method\":\"SendMessage\",\"params\":{\"message\":{\"messageId\":\"m-1\","
                + "\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"sign off\"}]},"
                + "\"configuration\":{\"returnImmediately\":true}}}").getBytes(StandardCharsets.UTF_8), A2A_V1);
        String task = sent.json().at("/result/task/id").asText();
        assertEquals(false, task.isEmpty(), sent::toString);
        await().atMost(WAIT).until(() -> a.get(lead, "/v1/tasks/" + task).status() == 200);
        assertEquals(200, a.post(lead, "/v1/tasks/" + task + "/events", obj("type", "accept")).status());
        assertEquals(200, a.post(lead, "/v1/tasks/" + task + "/events", obj("type", "complete",
                "result", obj("signed", true))).status());
        await().atMost(WAIT).until(() -> "TASK_STATE_COMPLETED".equals(c.request("GET", "/a2a/lead/tasks/" + task,
                helper, null, A2A_V1).json().at("/status/state").asText()));
        assertEquals("completed", c.get(helper, "/v1/tasks/" + task).text("state"));
    }

    private static List<String> texts(List<JsonNode> inbox) {
        return inbox.stream().map(e -> e.get("text").asText()).toList();
    }
}
