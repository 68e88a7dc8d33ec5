package dev.parley.server.federation;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.core.OwnerAckPolicy;
import dev.parley.nats.GatewayConfig;
import dev.parley.nats.testing.NatsServer;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.SseClient;
import io.nats.client.Connection;
import io.nats.client.Nats;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Gateways of one federation, each a real hub over real HTTP, joined through a real
 * nats-server that the test starts on a free port with its own store and stops by PID.
 */
class FederationTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    @BeforeEach
    void needsNatsServer() {
        assumeTrue(NatsServer.installed(), "nats-server is not installed (apt-get install nats-server): skipped");
    }

    private HubFixture gateway(String id, NatsServer nats) {
        return gateway(id, nats, OwnerAckPolicy.DEFAULT);
    }

    private HubFixture gateway(String id, NatsServer nats, OwnerAckPolicy ownerAck) {
        return HubFixture.start(tmp.resolve("hub-" + id), c -> c.withGateway(
                Optional.of(new GatewayConfig(id, nats.url(), Optional.empty()).withOwnerAck(ownerAck))));
    }

    @Test
    void threeGatewaysSendReplyAndShareGrants() throws Exception {
        try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats"));
             HubFixture a = gateway("a", nats); HubFixture b = gateway("b", nats); HubFixture c = gateway("c", nats)) {
            String lead = a.createNode("lead", null);
            await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/nodes/lead").status() == 200);
            String worker = b.createNodeResp(b.admin(), "worker", "lead").text("token");
            await().atMost(WAIT).until(() -> "b".equals(a.get(a.admin(), "/v1/nodes/worker").text("gateway")));
            assertEquals("a", a.get(a.admin(), "/v1/nodes/lead").text("gateway"));
            // The id is claimed in the state room: no other gateway can create it, mirrored there yet or not.
            assertError(c.post(c.admin(), "/v1/nodes", obj("id", "worker", "kind", "external")), 409, "node_exists");

            try (SseClient stream = SseClient.open(b, "/v1/inbox/stream", worker, null)) {
                HubFixture.Resp first = a.sendOk(lead, "worker", "one");
                assertTrue(first.get("seq").isNull(), "the seq is the owner's to assign: " + first);
                assertEquals("b", first.text("gateway"));
                assertEquals("accepted", first.text("status"));
                String second = a.sendOk(lead, "worker", "two").text("id");
                SseClient.Frame one = stream.nextEvent(WAIT);
                SseClient.Frame two = stream.nextEvent(WAIT);
                assertEquals(1, one.seq());
                assertEquals("one", one.json().get("text").asText());
                assertEquals(2, two.seq());
                assertEquals("two", two.json().get("text").asText());

                String id = first.text("id");
                await().atMost(WAIT).until(() -> states(a.get(lead, "/v1/messages/" + id).get("timeline"))
                        .containsAll(List.of("accepted", "accepted by b", "delivered")));
                assertEquals(202, b.post(worker, "/v1/messages/" + id + "/reply", obj("text", "done")).status());
                await().atMost(WAIT).until(() -> a.inbox(lead).stream().anyMatch(e -> "reply".equals(e.get("kind").asText())
                        && id.equals(e.get("corrId").asText())));
                await().atMost(WAIT).until(() -> "replied".equals(a.get(lead, "/v1/messages/" + id).text("state")));
                assertEquals(200, b.post(worker, "/v1/messages/" + second + "/ack", obj("status", "processed")).status());
                await().atMost(WAIT).until(() -> "processed".equals(a.get(lead, "/v1/messages/" + second).text("state")));
            }

            // A cross-group send needs a grant; the grant may be made on any gateway.
            String outsider = c.createNode("outsider", null);
            await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/nodes/outsider").status() == 200);
            assertError(a.send(lead, "outsider", "knock"), 403, "acl_denied");
            assertTrue(a.get(a.admin(), "/v1/audit?node=lead&decision=deny").items().stream()
                    .anyMatch(e -> "outsider".equals(e.get("target").asText())), "the refusal is audited on a");
            String grant = c.post(c.admin(), "/v1/grants", obj("from", "lead", "to", "outsider")).text("id");
            await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/grants").items().stream()
                    .anyMatch(g -> grant.equals(g.get("id").asText())));
            a.sendOk(lead, "outsider", "hello");
            await().atMost(WAIT).until(() -> c.inbox(outsider).stream().anyMatch(e -> "hello".equals(e.get("text").asText())));

            // The admin's view of the federation: every gateway, and how far a has taken in each outbox.
            HubFixture.Resp view = a.get(a.admin(), "/v1/gateways");
            assertEquals(200, view.status(), view::toString);
            List<String> ids = new ArrayList<>();
            view.get("gateways").forEach(g -> ids.add(g.get("id").asText()));
            assertEquals(List.of("a", "b", "c"), ids, view::toString);
            JsonNode onB = view.get("gateways").get(1);
            assertTrue(onB.get("present").asBoolean() && onB.get("cursor").asLong() >= 3,
                    "a took b's acks and reply: " + view);
            assertError(a.get(lead, "/v1/gateways"), 403, "forbidden");

            // A2A: worker's card, fetched on a, names its owner; a's own node's card names none.
            JsonNode card = a.get(lead, "/a2a/worker/.well-known/agent-card.json").json();
            assertEquals("b", card.at("/capabilities/extensions/0/params/gateway").asText(), card::toString);
            assertTrue(a.get(lead, "/a2a/lead/.well-known/agent-card.json").json()
                    .at("/capabilities/extensions/0/params/gateway").isMissingNode());
        }
    }

    @Test
    void tasksCrossGatewaysEachPartyMovingTheCopyOnItsOwnGateway() throws Exception {
        try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats"));
             HubFixture a = gateway("a", nats); HubFixture b = gateway("b", nats)) {
            String lead = a.createNode("lead", null);
            await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/nodes/lead").status() == 200);
            String worker = b.createNodeResp(b.admin(), "worker", "lead").text("token");
            await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/nodes/worker").status() == 200);

            // An agent's spec may name the gateway that runs it: the one it is started on, no other.
            assertEquals(201, b.post(b.admin(), "/v1/agents", obj("spec", "id: helper\ncommand: [cat]\ngateway: b\n"))
                    .status());
            assertTrue(a.post(a.admin(), "/v1/agents", obj("spec", "id: helper2\ncommand: [cat]\ngateway: b\n")).body()
                    .contains("this hub is gateway a; start agent helper2 on gateway b"));

            // lead on a hands worker on b a task; worker moves it on b; a's copy follows.
            HubFixture.Resp created = a.post(lead, "/v1/tasks", obj("to", "worker", "title", "review",
                    "input", obj("pr", 7)));
            assertEquals(201, created.status(), created::toString);
            String review = created.text("id");
            await().atMost(WAIT).until(() -> b.get(worker, "/v1/tasks/" + review).status() == 200);
            JsonNode copy = b.get(worker, "/v1/tasks/" + review).json();
            assertEquals(List.of("submitted", "lead", "worker", "review", "7"), List.of(copy.get("state").asText(),
                    copy.get("creator").asText(), copy.get("assignee").asText(), copy.get("title").asText(),
                    copy.at("/input/pr").asText()), copy::toString);
            assertEquals(200, b.post(worker, "/v1/tasks/" + review + "/events", obj("type", "accept",
                    "etaSeconds", 60)).status());
            HubFixture.Resp completed = b.post(worker, "/v1/tasks/" + review + "/events", obj("type", "complete",
                    "result", obj("ok", true), "artifacts", List.of(obj("uri", "https://example.com/r.txt",
                            "mediaType", "text/plain"))));
            assertEquals(200, completed.status(), completed::toString);
            await().atMost(WAIT).until(() -> "completed".equals(a.get(lead, "/v1/tasks/" + review).text("state")));
            JsonNode done = a.get(lead, "/v1/tasks/" + review).json();
            assertEquals(List.of("60", "true", "https://example.com/r.txt"), List.of(done.get("etaSeconds").asText(),
                    done.at("/result/ok").asText(), done.at("/artifacts/0/uri").asText()), done::toString);
            assertEquals(done, a.inbox(lead).getLast().get("data"), "the notice shows the task as it stands on a");
            assertEquals(List.of("task_accept", "task_complete"), a.inbox(lead).stream()
                    .filter(e -> review.equals(e.path("corrId").asText())).map(e -> e.get("kind").asText()).toList());
            assertEquals(1, a.get(lead, "/v1/tasks?assignee=worker").items().size(), "lead lists it on a");

            // The creator cancels on a; worker's copy on b follows, and b refuses a move after it.
            String second = a.post(lead, "/v1/tasks", obj("to", "worker", "title", "second")).text("id");
            await().atMost(WAIT).until(() -> b.get(worker, "/v1/tasks/" + second).status() == 200);
            assertEquals(200, a.post(lead, "/v1/tasks/" + second + "/cancel", obj("reason", "not needed")).status());
            await().atMost(WAIT).until(() -> "canceled".equals(b.get(worker, "/v1/tasks/" + second).text("state")));
            assertError(b.post(worker, "/v1/tasks/" + second + "/events", obj("type", "accept")), 409,
                    "invalid_transition");
            assertError(b.post(worker, "/v1/tasks/" + second + "/cancel", obj()), 403, "forbidden");
            // Had worker completed it before the cancel reached b, the two would cross: a delivers the
            // completion and keeps its copy canceled; an update that crossed it is refused.
            String view = b.get(worker, "/v1/tasks/" + second).body();
            try (Connection raw = Nats.connect(nats.url())) {
                raw.jetStream().publish("parley.out.b.a", forgedTask("0193f0c4-0000-7000-8000-0000000000b1",
                        "worker", "lead", "task_complete", second, view).getBytes(StandardCharsets.UTF_8));
                raw.jetStream().publish("parley.out.b.a", forgedTask("0193f0c4-0000-7000-8000-0000000000b2",
                        "worker", "lead", "task_update", second, view).getBytes(StandardCharsets.UTF_8));
            }
            b.sendOk(worker, "lead", "after the crossing");
            await().atMost(WAIT).until(() -> a.inbox(lead).stream().anyMatch(e -> "after the crossing"
                    .equals(e.get("text").asText())));
            assertEquals(List.of("0193f0c4-0000-7000-8000-0000000000b1"), a.inbox(lead).stream()
                    .map(e -> e.get("id").asText()).filter(id -> id.startsWith("0193f0c4")).toList());
            assertEquals("canceled", a.get(lead, "/v1/tasks/" + second).text("state"), "a finished copy stays");
            assertTrue(a.get(a.admin(), "/v1/audit?action=task.copy").body().contains("worker's complete not taken:"
                    + " task " + second + " is canceled here"), "the crossing is audited");
            assertTrue(a.get(a.admin(), "/v1/audit?decision=deny&action=federation.ingest").body().contains("task "
                    + second + " is canceled here; it cannot take update"), "the update is refused");

            // A2A: a SendMessage on a to worker's card makes the same task; worker completes it on b.
            HubFixture.Resp sent = a.request("POST", "/a2a/worker", lead, ("{\"jsonrpc\":\"2.0\",\"id\":1,"
                    + "\"method\":\"SendMessage\",\"params\":{\"message\":{\"messageId\":\"m-remote\","
                    + "\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"job\"}]},"
                    + "\"configuration\":{\"returnImmediately\":true}}}").getBytes(StandardCharsets.UTF_8),
                    Map.of("A2A-Version", "1.0"));
            String viaA2a = sent.json().at("/result/task/id").asText();
            assertFalse(viaA2a.isEmpty(), sent::toString);
            await().atMost(WAIT).until(() -> b.get(worker, "/v1/tasks/" + viaA2a).status() == 200);
            assertEquals(200, b.post(worker, "/v1/tasks/" + viaA2a + "/events", obj("type", "accept")).status());
            assertEquals(200, b.post(worker, "/v1/tasks/" + viaA2a + "/events", obj("type", "complete")).status());
            await().atMost(WAIT).until(() -> "TASK_STATE_COMPLETED".equals(a.request("GET", "/a2a/worker/tasks/"
                    + viaA2a, lead, null, Map.of("A2A-Version", "1.0")).json().at("/status/state").asText()));

            // Task records that do not hold are refused on b, never delivered, and ingest goes on.
            try (Connection raw = Nats.connect(nats.url())) {
                String reviewed = a.get(lead, "/v1/tasks/" + review).body();
                raw.jetStream().publish("parley.out.a.b", forgedTask("0193f0c4-0000-7000-8000-0000000000a1",
                        "lead", "worker", "task_complete", review, reviewed).getBytes(StandardCharsets.UTF_8)); // not its assignee
                raw.jetStream().publish("parley.out.a.b", forgedTask("0193f0c4-0000-7000-8000-0000000000a2",
                        "lead", "worker", "task", "t-forged", "{\"title\":\"no taskId\"}")
                        .getBytes(StandardCharsets.UTF_8));
                raw.jetStream().publish("parley.out.a.b", forged("0193f0c4-0000-7000-8000-0000000000a3", "lead",
                        "worker", "task_canceled", "intra_group", review, reviewed).getBytes(StandardCharsets.UTF_8));
            }
            String third = a.post(lead, "/v1/tasks", obj("to", "worker", "title", "third")).text("id");
            await().atMost(WAIT).until(() -> b.get(worker, "/v1/tasks/" + third).status() == 200);
            assertTrue(b.inbox(worker).stream().noneMatch(e -> e.get("id").asText().startsWith("0193f0c4-0000")),
                    () -> "no forged task record reached worker: " + b.inbox(worker));
            List<JsonNode> denied = b.get(b.admin(), "/v1/audit?decision=deny&action=federation.ingest").items();
            assertTrue(denied.stream().anyMatch(e -> e.get("reason").asText()
                    .contains("lead may not complete task " + review)), denied::toString);
            assertTrue(denied.stream().anyMatch(e -> e.get("reason").asText().contains("must carry its task")),
                    denied::toString);
            assertTrue(denied.stream().anyMatch(e -> e.get("reason").asText().contains("kind task_canceled travels"
                    + " only as the hub makes it")), denied::toString);
            assertEquals(List.of(false, false), List.of(b.get(b.admin(), "/v1/tasks/t-forged").status() == 200,
                    a.get(a.admin(), "/v1/tasks/t-forged").status() == 200));
        }
    }

    /** An outbox record that claims {@code from} sent {@code to} a task envelope. */
    private static String forgedTask(String id, String from, String to, String kind, String taskId, String data) {
        return forged(id, from, to, kind, "task", taskId, data);
    }

    /** An outbox record that claims {@code from} sent {@code to} an envelope of {@code kind} on {@code route}. */
    private static String forged(String id, String from, String to, String kind, String route, String corrId,
                                 String data) {
        return obj("type", "envelope", "id", id, "from", from, "to", to, "kind", kind, "text", "forged",
                "data", data, "corrId", corrId, "meta", obj(), "createdAt", 1, "attempt", 1, "route", route,
                "policyVersion", "x").toString();
    }

    @Test
    void topicEventsReachSubscribersOnOtherGatewaysAndAreCheckedThereAgain() throws Exception {
        try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats"));
             HubFixture a = gateway("a", nats); HubFixture b = gateway("b", nats)) {
            String lead = a.createNode("lead", null);
            await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/nodes/lead").status() == 200);
            String worker = b.createNodeResp(b.admin(), "worker", "lead").text("token");
            String outsider = b.createNode("outsider", null); // another group: needs a grant to the topic
            await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/nodes/outsider").status() == 200);

            assertEquals(201, b.post(worker, "/v1/topics/news/subscriptions", obj()).status());
            assertEquals(201, b.post(outsider, "/v1/topics/news/subscriptions", obj()).status());
            await().atMost(WAIT).until(() -> subscribers(a, "news").containsAll(List.of("worker", "outsider")));

            // Published on a: the subscriber in lead's group gets it on b; the outsider, without a grant, does not.
            assertEquals(1, a.post(lead, "/v1/topics/news/events", obj("text", "first")).json().get("delivered").asInt());
            await().atMost(WAIT).until(() -> texts(b.inbox(worker)).equals(List.of("first")));
            JsonNode event = b.inbox(worker).getFirst();
            assertEquals("event", event.get("kind").asText());
            assertEquals("news", event.get("topic").asText());

            // A grant to the topic, made on b, lets lead's events reach the outsider; b checks it again.
            assertEquals(201, b.post(b.admin(), "/v1/grants", obj("from", "lead", "to", "topic:news")).status());
            await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/grants").items().size() == 1);
            assertEquals(2, a.post(lead, "/v1/topics/news/events", obj("text", "second")).json().get("delivered").asInt());
            await().atMost(WAIT).until(() -> texts(b.inbox(outsider)).equals(List.of("second"))
                    && texts(b.inbox(worker)).equals(List.of("first", "second")));

            // Unsubscribed on b: a stops publishing to it.
            assertEquals(204, b.delete(worker, "/v1/topics/news/subscriptions").status());
            await().atMost(WAIT).until(() -> !subscribers(a, "news").contains("worker"));
            assertEquals(1, a.post(lead, "/v1/topics/news/events", obj("text", "third")).json().get("delivered").asInt());
            await().atMost(WAIT).until(() -> texts(b.inbox(outsider)).equals(List.of("second", "third")));
            assertEquals(List.of("first", "second"), texts(b.inbox(worker)));

            // A topic event forged into a's outbox for a node that is not subscribed is refused by b.
            try (Connection raw = Nats.connect(nats.url())) {
                String forged = "{\"type\":\"envelope\",\"id\":\"0193f0c4-0000-7000-8000-000000000002\","
                        + "\"from\":\"lead\",\"to\":\"worker\",\"kind\":\"event\",\"topic\":\"news\","
                        + "\"text\":\"forged\",\"meta\":{},\"createdAt\":1,\"attempt\":1,\"route\":\"topic\","
                        + "\"policyVersion\":\"x\"}";
                raw.jetStream().publish("parley.out.a.b", forged.getBytes(StandardCharsets.UTF_8));
            }
            await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/audit?decision=deny&action=federation.ingest")
                    .items().stream().anyMatch(e -> e.get("reason").asText().contains("not subscribed to topic news")));
            assertEquals(List.of("first", "second"), texts(b.inbox(worker)));
        }
    }

    @Test
    void broadcastsReachGroupMembersOnOtherGatewaysAndAnAdminsOnlyItsOwnNodes() throws Exception {
        try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats"));
             HubFixture a = gateway("a", nats); HubFixture b = gateway("b", nats)) {
            String lead = a.createNode("lead", null);
            String near = a.createNode("near", "lead");
            await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/nodes/lead").status() == 200);
            String far = b.createNodeResp(b.admin(), "far", "lead").text("token");
            String outsider = b.createNode("outsider", null);
            await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/nodes/far").status() == 200
                    && a.get(a.admin(), "/v1/nodes/outsider").status() == 200);

            // lead leads near (on a) and far (on b): its broadcast reaches both, far on b.
            assertEquals(2, a.post(lead, "/v1/broadcasts", obj("text", "all hands")).json().get("delivered").asInt());
            await().atMost(WAIT).until(() -> texts(b.inbox(far)).equals(List.of("all hands")));
            assertEquals(List.of("all hands"), texts(a.inbox(near)));

            // The admin of a is a's: its broadcast reaches a's nodes only, nothing is relayed.
            assertEquals(2, a.post(a.admin(), "/v1/broadcasts", obj("text", "from a's admin")).json().get("delivered")
                    .asInt(), "lead and near");
            // Everything a owed is published (the clearing commits behind the relay) before the forged record.
            await().atMost(WAIT).until(() -> a.get(null, "/healthz").get("federation").get("spoolDepth").asLong() == 0);

            // A broadcast forged into a's outbox for a node outside lead's groups is refused by b.
            try (Connection raw = Nats.connect(nats.url())) {
                String forged = "{\"type\":\"envelope\",\"id\":\"0193f0c4-0000-7000-8000-000000000003\","
                        + "\"from\":\"lead\",\"to\":\"outsider\",\"kind\":\"broadcast\",\"text\":\"forged\","
                        + "\"meta\":{},\"createdAt\":1,\"attempt\":1,\"route\":\"broadcast\",\"policyVersion\":\"x\"}";
                raw.jetStream().publish("parley.out.a.b", forged.getBytes(StandardCharsets.UTF_8));
            }
            await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/audit?decision=deny&action=federation.ingest")
                    .items().stream().anyMatch(e -> e.get("reason").asText().contains("reaches only its own groups")));
            assertTrue(b.inbox(outsider).isEmpty());
            assertEquals(List.of("all hands"), texts(b.inbox(far)), "the admin's broadcast stayed on a");
        }
    }

    @Test
    void aNodeDeletedOnItsOwnerIsRetiredEverywhereAndItsIdStaysTaken() throws Exception {
        try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats"));
             HubFixture a = gateway("a", nats); HubFixture b = gateway("b", nats)) {
            String lead = a.createNode("lead", null);
            await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/nodes/lead").status() == 200);
            b.createNodeResp(b.admin(), "worker", "lead");
            await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/nodes/worker").status() == 200);

            HubFixture.Resp elsewhere = a.delete(a.admin(), "/v1/nodes/worker");
            assertError(elsewhere, 403, "forbidden");
            assertTrue(elsewhere.text("message").contains("belongs to gateway b"), elsewhere::toString);

            assertEquals(204, b.delete(b.admin(), "/v1/nodes/worker").status());
            await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/nodes/worker").status() == 404);
            assertError(a.send(lead, "worker", "anyone there?"), 404, "node_not_found");
            assertTrue(a.get(a.admin(), "/v1/audit?action=node.delete").items().stream()
                    .anyMatch(e -> "gateway:b".equals(e.get("actor").asText())), "the retirement is audited on a");

            // Ids are never reused, on any gateway, also one that joins later.
            assertError(a.post(a.admin(), "/v1/nodes", obj("id", "worker")), 409, "node_exists");
            try (HubFixture c = gateway("c", nats)) {
                assertError(c.post(c.admin(), "/v1/nodes", obj("id", "worker")), 409, "node_exists");
            }
        }
    }

    @Test
    void anEnvelopeTheOwnerRefusesFailsOnTheSendersGatewayWithTheReason() throws Exception {
        Path policy = tmp.resolve("b-policy.json");
        java.nio.file.Files.writeString(policy, "{\"rules\":[{\"name\":\"b-keeps-worker-quiet\",\"effect\":\"deny\","
                + "\"when\":\"target.id == 'worker'\"}]}");
        try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats"));
             HubFixture a = gateway("a", nats);
             HubFixture b = HubFixture.start(tmp.resolve("hub-b"), c -> c.withPolicy(Optional.of(policy))
                     .withGateway(Optional.of(new GatewayConfig("b", nats.url(), Optional.empty()))))) {
            String lead = a.createNode("lead", null);
            await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/nodes/lead").status() == 200);
            String worker = b.createNodeResp(b.admin(), "worker", "lead").text("token");
            await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/nodes/worker").status() == 200);

            // a's policy lets it go; b's rule refuses it: a learns so, and neither waits nor publishes again.
            String id = a.sendOk(lead, "worker", "hello?").text("id");
            await().atMost(WAIT).until(() -> "failed".equals(a.get(lead, "/v1/messages/" + id).text("state")));
            String timeline = a.get(lead, "/v1/messages/" + id).get("timeline").toString();
            assertTrue(timeline.contains("on b: refused: policy rule b-keeps-worker-quiet"), timeline);
            assertTrue(b.inbox(worker).isEmpty(), "never delivered");
            assertEquals(0.0, a.metric("parley_federation_republished_total"));
        }
    }

    private static List<String> subscribers(HubFixture hub, String topic) {
        List<String> out = new ArrayList<>();
        hub.get(hub.admin(), "/v1/topics/" + topic + "/subscriptions").items().forEach(s -> out.add(s.get("node").asText()));
        return out;
    }

    private static List<String> texts(List<JsonNode> inbox) {
        return inbox.stream().map(e -> e.get("text").asText()).toList();
    }

    @Test
    void forgedAndMalformedRecordsAreRefusedAndIngestGoesOn() throws Exception {
        try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats"));
             HubFixture a = gateway("a", nats); HubFixture b = gateway("b", nats); HubFixture c = gateway("c", nats)) {
            String lead = a.createNode("lead", null);
            c.createNode("mallory", null);
            await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/nodes/lead").status() == 200
                    && b.get(b.admin(), "/v1/nodes/mallory").status() == 200);
            String worker = b.createNodeResp(b.admin(), "worker", "lead").text("token");
            await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/nodes/worker").status() == 200);
            // Wait until b ingests from a: a first real envelope arrives.
            a.sendOk(lead, "worker", "first");
            await().atMost(WAIT).until(() -> b.inbox(worker).size() == 1);

            // Development mode: nothing stops a client from writing into a's outbox. b must not trust it.
            try (Connection raw = Nats.connect(nats.url())) {
                String forged = "{\"type\":\"envelope\",\"id\":\"0193f0c4-0000-7000-8000-000000000001\","
                        + "\"from\":\"mallory\",\"to\":\"worker\",\"kind\":\"message\",\"text\":\"forged\","
                        + "\"meta\":{},\"createdAt\":1,\"attempt\":1,\"route\":\"grant\",\"policyVersion\":\"x\"}";
                raw.jetStream().publish("parley.out.a.b", forged.getBytes(StandardCharsets.UTF_8));
                raw.jetStream().publish("parley.out.a.b", "not json".getBytes(StandardCharsets.UTF_8));
                // from lead, whom a owns, with a kind that would write frames of its own into worker's stream
                String injecting = forged.replace("mallory", "lead").replace("\"kind\":\"message\"",
                        "\"kind\":\"message\\nid: 999\\ndata: {}\\n\\nevent: message\"");
                raw.jetStream().publish("parley.out.a.b", injecting.getBytes(StandardCharsets.UTF_8));
                String fromLead = forged.replace("mallory", "lead");
                // data is embedded in frames as it stands: lines of its own are refused, one JSON value is written compact
                raw.jetStream().publish("parley.out.a.b", fromLead.replace("\"meta\"",
                        "\"data\":\"1\\nid: 999\\ndata: {}\",\"meta\"").getBytes(StandardCharsets.UTF_8));
                raw.jetStream().publish("parley.out.a.b", fromLead.replace("0001", "0002").replace("\"text\":\"forged\"",
                        "\"text\":\"pretty\",\"data\":\"{\\n  \\\"a\\\": [1, 2]\\n}\"")
                        .getBytes(StandardCharsets.UTF_8));
            }
            a.sendOk(lead, "worker", "after");
            await().atMost(WAIT).until(() -> b.inbox(worker).size() >= 3);
            List<JsonNode> inbox = b.inbox(worker);
            assertEquals(List.of("first", "pretty", "after"), inbox.stream().map(e -> e.get("text").asText()).toList());
            assertEquals(List.of(1L, 2L, 3L), inbox.stream().map(e -> e.get("seq").asLong()).toList());
            String polled = b.get(worker, "/v1/inbox").body();
            assertTrue(polled.contains("\"data\":{\"a\":[1,2]}"), polled);
            List<JsonNode> denied = b.get(b.admin(), "/v1/audit?decision=deny&action=federation.ingest").items();
            assertTrue(denied.stream().anyMatch(e -> e.get("reason").asText().contains("does not own sender mallory")),
                    "the forged envelope is audited: " + denied);
            assertTrue(denied.stream().anyMatch(e -> e.get("reason").asText().contains("unreadable")),
                    "the malformed record is audited: " + denied);
            String metrics = b.get(b.admin(), "/metrics").body();
            assertTrue(metrics.contains("parley_federation_refused_total 1"), metrics);
            assertTrue(metrics.contains("parley_federation_unreadable_total 3"), metrics);
            assertTrue(denied.stream().anyMatch(e -> e.get("reason").asText().contains("kind must match")),
                    "the record whose kind holds a stream's lines is audited: " + denied);
            assertTrue(denied.stream().anyMatch(e -> e.get("reason").asText().contains("data is not one JSON value")),
                    "the record whose data holds a stream's lines is audited: " + denied);
        }
    }

    @Test
    void natsDownSpoolsAndDrainsInOrderOnce() throws Exception {
        try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats"));
             HubFixture a = gateway("a", nats); HubFixture b = gateway("b", nats)) {
            String lead = a.createNode("lead", null);
            a.createNode("peer", "lead");
            await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/nodes/lead").status() == 200);
            String worker = b.createNodeResp(b.admin(), "worker", "lead").text("token");
            await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/nodes/worker").status() == 200);
            List<String> sent = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                sent.add(a.sendOk(lead, "worker", "m" + i).text("id"));
            }

            nats.kill();
            await().atMost(WAIT).until(() -> "spooling".equals(a.get(null, "/healthz").get("federation").get("mode").asText()));
            for (int i = 20; i < 50; i++) {
                HubFixture.Resp r = a.sendOk(lead, "worker", "m" + i);
                assertEquals("spooled", r.text("status"), r.toString());
                sent.add(r.text("id"));
                a.sendOk(lead, "peer", "local " + i); // local traffic never stops
            }
            assertTrue(a.get(null, "/healthz").get("federation").get("spoolDepth").asLong() > 0);

            // What must go through the state room answers 503 and leaves nothing behind.
            assertError(a.post(a.admin(), "/v1/grants", obj("from", "peer", "to", "worker")), 503, "unavailable");
            assertTrue(a.get(a.admin(), "/v1/grants").items().isEmpty(), "no grant half made");
            assertError(a.delete(a.admin(), "/v1/nodes/peer"), 503, "unavailable");
            assertEquals(200, a.get(a.admin(), "/v1/nodes/peer").status(), "the node stays");

            nats.restart();
            await().atMost(Duration.ofSeconds(60)).until(() -> b.inbox(worker).size() >= 50);
            List<JsonNode> inbox = b.inbox(worker);
            assertEquals(50, inbox.size(), "nothing lost, nothing twice");
            for (int i = 0; i < 50; i++) {
                assertEquals(i + 1, inbox.get(i).get("seq").asLong());
                assertEquals("m" + i, inbox.get(i).get("text").asText(), "in order");
                assertEquals(sent.get(i), inbox.get(i).get("id").asText());
            }
            await().atMost(WAIT).until(() -> "connected".equals(a.get(null, "/healthz").get("federation").get("mode")
                    .asText()) && a.get(null, "/healthz").get("federation").get("spoolDepth").asLong() == 0);
        }
    }

    @Test
    void anEnvelopeItsOwnerNeverConfirmsIsPublishedAgainThenDeadLetteredWithANotice() throws Exception {
        try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats"));
             HubFixture a = gateway("a", nats, new OwnerAckPolicy(Duration.ofMillis(300), 3))) {
            String lead = a.createNode("lead", null);
            try (HubFixture b = gateway("b", nats)) {
                await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/nodes/lead").status() == 200);
                b.createNodeResp(b.admin(), "worker", "lead");
                await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/nodes/worker").status() == 200);
            } // b is gone for good: nothing takes what is published for its nodes

            String id = a.sendOk(lead, "worker", "into the void").text("id");
            await().atMost(WAIT).until(() -> "dead_lettered".equals(a.get(lead, "/v1/messages/" + id).text("state")));
            assertEquals(2.0, a.metric("parley_federation_republished_total"), "published three times in all");
            assertEquals(1.0, a.metric("parley_federation_unconfirmed_total"));
            assertEquals(200, a.get(a.admin(), "/v1/dead-letters/" + id).status());
            JsonNode notice = a.inbox(lead).stream().filter(e -> e.get("kind").asText().equals("dead_letter"))
                    .findFirst().orElseThrow(() -> new AssertionError("no dead-letter notice for the sender"));
            assertEquals(id, notice.get("corrId").asText());
            assertTrue(notice.get("text").asText().contains("did not confirm it after 3 publication(s)"),
                    notice.toString());
        }
    }

    @Test
    void anOwnerBackWithinTheAttemptsTakesARepublishedEnvelopeOnce() throws Exception {
        try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats"));
             HubFixture a = gateway("a", nats, new OwnerAckPolicy(Duration.ofMillis(200), 50))) {
            String lead = a.createNode("lead", null);
            String worker;
            try (HubFixture b = gateway("b", nats)) {
                await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/nodes/lead").status() == 200);
                worker = b.createNodeResp(b.admin(), "worker", "lead").text("token");
                await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/nodes/worker").status() == 200);
            }
            String id = a.sendOk(lead, "worker", "once").text("id");
            await().atMost(WAIT).until(() -> a.metric("parley_federation_republished_total") >= 2);
            try (HubFixture again = gateway("b", nats)) {
                await().atMost(WAIT).until(() -> a.get(lead, "/v1/messages/" + id).get("timeline").toString()
                        .contains("accepted by b"));
                List<JsonNode> inbox = again.inbox(worker);
                assertEquals(1, inbox.size(), "published several times, taken once: " + inbox);
                assertEquals(id, inbox.getFirst().get("id").asText());
                assertEquals(0.0, a.metric("parley_federation_unconfirmed_total"));
                // Publications still in flight for the first are taken as duplicates; a later one arrives once.
                String later = a.sendOk(lead, "worker", "later").text("id");
                await().atMost(WAIT).until(() -> a.get(lead, "/v1/messages/" + later).get("timeline").toString()
                        .contains("accepted by b"));
                assertEquals(List.of(id, later), again.inbox(worker).stream().map(e -> e.get("id").asText()).toList());
                assertNotEquals("dead_lettered", a.get(lead, "/v1/messages/" + id).text("state"));
            }
        }
    }

    /**
     * Model item 5: a, owner of worker, is gone; b, its fallback, takes it over by compare-and-set
     * once a's presence has run out, and c's mail for worker follows it there. a back finds
     * worker moved: its token there stops working, and what a held undelivered from c is
     * dead-lettered there with c told. With a and b both gone, no gateway owns worker: c
     * dead-letters its mail with a notice, counted as an incident.
     */
    @Test
    void aFallbackTakesOverANodeWhoseOwnerIsGoneAndMailForANodeNoGatewayOwnsIsDeadLettered() throws Exception {
        Duration presenceRunsOut = Duration.ofSeconds(90);
        try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats"));
             HubFixture c = gateway("c", nats, new OwnerAckPolicy(Duration.ofMillis(500), 60))) {
            String boss = c.createNode("boss", null);
            HubFixture b = gateway("b", nats);
            try {
                HubFixture a = gateway("a", nats);
                String worker;
                String before;
                try {
                    await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/nodes/boss").status() == 200);
                    worker = a.createNodeResp(a.admin(), "worker", "boss").text("token");
                    await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/nodes/worker").status() == 200
                            && c.get(c.admin(), "/v1/nodes/worker").status() == 200);
                    String path = "/v1/nodes/worker/routing";
                    assertError(a.put(a.admin(), path, obj("fallbacks", List.of("zz"))), 400, "invalid_request");
                    assertError(a.put(a.admin(), path, obj("fallbacks", List.of("a"))), 400, "invalid_request");
                    assertError(a.put(a.admin(), path, obj("fallbacks", List.of("b", "b"))), 400, "invalid_request");
                    assertError(a.put(a.admin(), path, obj("fallbacks", List.of("B!"))), 400, "invalid_request");
                    assertError(a.put(a.admin(), path, obj()), 400, "invalid_request");
                    assertError(a.put(worker, path, obj("fallbacks", List.of("b"))), 403, "forbidden");
                    assertError(b.put(b.admin(), path, obj("fallbacks", List.of("c"))), 403, "forbidden");
                    HubFixture.Resp routed = a.put(a.admin(), path, obj("fallbacks", List.of("b")));
                    assertEquals(200, routed.status(), routed.toString());
                    assertEquals("{\"node\":\"worker\",\"owner\":\"a\",\"fallbacks\":[\"b\"]}", routed.body());
                    await().atMost(WAIT).until(() -> c.get(c.admin(), path).body().equals(routed.body()));

                    before = c.sendOk(boss, "worker", "before").text("id");
                    await().atMost(WAIT).until(() -> timeline(c, boss, before).contains("accepted by a"));
                } finally {
                    a.close(); // gone without a word: its presence runs out
                }
                String during = c.sendOk(boss, "worker", "during").text("id");
                await().atMost(presenceRunsOut).until(() -> "b".equals(b.get(b.admin(), "/v1/nodes/worker")
                        .text("gateway")));
                assertEquals("{\"node\":\"worker\",\"owner\":\"b\",\"fallbacks\":[\"a\"]}",
                        b.get(b.admin(), "/v1/nodes/worker/routing").body(), "the gateway it left is its fallback now");
                await().atMost(WAIT).until(() -> timeline(c, boss, during).contains("accepted by b"));
                String moved = b.post(b.admin(), "/v1/nodes/worker/token", null).text("token");
                assertEquals(List.of(during), b.inbox(moved).stream().map(e -> e.get("id").asText()).toList(),
                        "what was sent while a was gone, once");
                String after = c.sendOk(boss, "worker", "after").text("id");
                await().atMost(WAIT).until(() -> b.inbox(moved).size() == 2);
                assertEquals(after, b.inbox(moved).getLast().get("id").asText());
                assertEquals(1.0, b.metric("parley_federation_ownership_moves_total"));
                assertEquals(1.0, c.metric("parley_federation_ownership_moves_total"));
                assertTrue(c.get(c.admin(), "/v1/audit?node=worker&action=node.owner").body()
                        .contains("owner moved from gateway a to gateway b"), "the move is audited");

                try (HubFixture back = gateway("a", nats)) {
                    assertEquals("b", back.get(back.admin(), "/v1/nodes/worker").text("gateway"),
                            "the state room is loaded before the hub serves");
                    assertError(back.get(worker, "/v1/inbox"), 401, "unauthorized");
                    await().atMost(WAIT).until(() -> "dead_lettered".equals(c.get(boss, "/v1/messages/" + before)
                            .text("state")));
                    assertTrue(timeline(c, boss, before).contains("moved to gateway b"), timeline(c, boss, before));
                    assertEquals(200, back.get(back.admin(), "/v1/dead-letters/" + before).status());
                    assertEquals(1.0, back.metric("parley_federation_ownership_moves_total"));
                }
            } finally {
                b.close();
            }
            // Owner b and fallback a both gone: no gateway owns worker.
            String lost = c.sendOk(boss, "worker", "lost").text("id");
            await().atMost(presenceRunsOut).until(() -> "dead_lettered".equals(c.get(boss, "/v1/messages/" + lost)
                    .text("state")));
            assertEquals(1.0, c.metric("parley_federation_unowned_total"));
            JsonNode notice = c.inbox(boss).stream().filter(e -> e.get("kind").asText().equals("dead_letter")
                    && e.get("corrId").asText().equals(lost)).findFirst()
                    .orElseThrow(() -> new AssertionError("no dead-letter notice for the sender"));
            assertTrue(notice.get("text").asText().contains("no gateway owns worker"), notice.toString());

            // An owner written into the state room that is not one of the node's fallbacks is not followed.
            try (Connection raw = Nats.connect(nats.url())) {
                raw.keyValue("parley-state").put("node.worker", ("{\"id\":\"worker\",\"kind\":\"external\","
                        + "\"parent\":\"boss\",\"labels\":{},\"depth\":1,\"createdAt\":0,\"owner\":\"c\"}")
                        .getBytes(StandardCharsets.UTF_8));
            }
            await().atMost(WAIT).until(() -> c.metric("parley_federation_state_skipped_total") >= 1);
            assertEquals("b", c.get(c.admin(), "/v1/nodes/worker").text("gateway"));
        }
    }

    private static String timeline(HubFixture hub, String token, String id) {
        return hub.get(token, "/v1/messages/" + id).get("timeline").toString();
    }

    @Test
    void restartedGatewayTakesEveryAcceptedSendExactlyOnce() throws Exception {
        try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats")); HubFixture a = gateway("a", nats)) {
            String lead = a.createNode("lead", null);
            HubFixture b = gateway("b", nats);
            String worker;
            try {
                await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/nodes/lead").status() == 200);
                worker = b.createNodeResp(b.admin(), "worker", "lead").text("token");
                await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/nodes/worker").status() == 200);
            } catch (RuntimeException | Error e) {
                b.close();
                throw e;
            }
            int senders = 4;
            int each = 25;
            List<String> accepted = Collections.synchronizedList(new ArrayList<>());
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch half = new CountDownLatch(senders * each / 2);
            List<String> senderTokens = new ArrayList<>();
            for (int s = 0; s < senders; s++) {
                senderTokens.add(a.createNode("sender" + s, "lead"));
            }
            await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/nodes/sender" + (senders - 1)).status() == 200);
            List<Thread> threads = new ArrayList<>();
            for (int s = 0; s < senders; s++) {
                int n = s;
                threads.add(Thread.ofVirtual().start(() -> {
                    try {
                        for (int i = 0; i < each; i++) {
                            accepted.add(a.sendOk(senderTokens.get(n), "worker", n + ":" + i).text("id"));
                            half.countDown();
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                        while (half.getCount() > 0) { // nobody waits for a half that never comes
                            half.countDown();
                        }
                    }
                }));
            }
            assertTrue(half.await(2, TimeUnit.MINUTES), "the senders did not get half way");
            b.close(); // a keeps accepting while b is gone
            for (Thread t : threads) {
                t.join();
            }
            assertEquals(null, failure.get());
            try (HubFixture again = gateway("b", nats)) {
                await().atMost(Duration.ofSeconds(60)).until(() -> again.inbox(worker).size() >= senders * each);
                SenderLoad.assertExactlyOnceInOrder(again.inbox(worker), 0, senders, accepted);
            }
        }
    }

    private static List<String> states(JsonNode timeline) {
        List<String> out = new ArrayList<>();
        timeline.forEach(step -> {
            out.add(step.get("state").asText());
            if (step.get("detail").asText().startsWith("accepted by")) {
                out.add(step.get("detail").asText());
            }
        });
        return out;
    }
}
