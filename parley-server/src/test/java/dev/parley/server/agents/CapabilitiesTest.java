package dev.parley.server.agents;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.server.it.HubFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import static dev.parley.server.it.HubFixture.JSON;
import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Capabilities on a real hub: publish (who may, what is refused), the catalog and the owner's
 * card, {@code skill_distribution} tasks to the other active agents (once), tasks addressed to
 * the capability routed to its owner, and every misfire class raising one review: a result
 * that breaks the contract, a failure, a task past its ETA (the hub's clock moved on by the
 * test), routing misses; then unpublish.
 */
class CapabilitiesTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    private final AtomicLong ahead = new AtomicLong();
    private final Instant base = Instant.ofEpochMilli(System.currentTimeMillis());
    private final InstantSource clock = () -> base.plusMillis(ahead.get());

    private static ObjectNode declaration(String id, String owner) throws Exception {
        return obj("capabilityId", id, "owner", owner,
                "delegationSkill", obj("ref", "skills/summarize-delegate", "version", "1.0"),
                "executorSkill", obj("ref", "skills/summarize", "version", "2.1"),
                "contract", JSON.readTree("""
                        {"type": "object", "required": ["summary"], "properties": {"summary": {"type": "string"}}}"""),
                "etaSeconds", 60);
    }

    @Test
    void aPublishedCapabilityRoutesItsTasksDistributesItsSkillAndEachMisfireRaisesAReview() throws Exception {
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub"), config -> config.withSweepInterval(Duration.ofDays(1)),
                System::nanoTime, clock)) {
            String lead = hub.createNode("lead", null);
            String worker = hub.createNode("worker", "lead");
            String other = hub.createNode("other", null);
            for (String agent : List.of("learner:lead", "resting:lead", "far:other")) {
                assertEquals(201, hub.post(hub.admin(), "/v1/agents", obj("spec", """
                        id: %s
                        parent: %s
                        command: [cat]
                        """.formatted(agent.split(":")[0], agent.split(":")[1]))).status());
            }
            hub.post(hub.admin(), "/v1/agents/resting/stop", obj());

            // Who may publish, and what is refused.
            assertError(hub.post(other, "/v1/capabilities", declaration("cap.summarize", "worker")), 403, "forbidden");
            assertError(hub.post(lead, "/v1/capabilities", declaration("summarize", "worker")), 400, "invalid_request");
            ObjectNode badContract = declaration("cap.summarize", "worker");
            badContract.set("contract", JSON.readTree("{\"type\": 12}"));
            assertError(hub.post(lead, "/v1/capabilities", badContract), 400, "invalid_schema");
            assertError(hub.post(lead, "/v1/capabilities", declaration("cap.summarize", "nobody")), 404, "node_not_found");
            // A node's contract may not run regular expressions on the hub; the admin's may.
            ObjectNode patterned = declaration("cap.patterned", "worker");
            patterned.set("contract", JSON.readTree("{\"properties\": {\"id\": {\"type\": \"string\", \"pattern\": \"^(a+)+$\"}}}"));
            assertTrue(assertError(hub.post(lead, "/v1/capabilities", patterned), 400, "invalid_schema").body()
                    .contains("may not use pattern"));
            assertEquals(201, hub.post(hub.admin(), "/v1/capabilities", patterned).status());
            assertEquals(204, hub.delete(hub.admin(), "/v1/capabilities/cap.patterned").status());

            // The owner's parent publishes it: a distribution task to each other active agent the owner may
            // reach (not the stopped one, not far in another group: refused and audited, as any task).
            HubFixture.Resp published = hub.post(lead, "/v1/capabilities", declaration("cap.summarize", "worker"));
            assertEquals(201, published.status(), published::toString);
            assertEquals(List.of("learner"), published.get("distributionTasks").findValuesAsText("assignee"));
            String distribution = published.get("distributionTasks").get(0).get("id").asText();
            assertTrue(hub.get(hub.admin(), "/v1/audit?action=task.create&decision=deny").body().contains("far"));
            // Published again by the admin, who acts hub-wide: far gets one now, learner none twice.
            assertEquals(List.of("far"), hub.post(hub.admin(), "/v1/capabilities", declaration("cap.summarize", "worker"))
                    .get("distributionTasks").findValuesAsText("assignee"));
            assertEquals(List.of(), hub.post(lead, "/v1/capabilities", declaration("cap.summarize", "worker"))
                    .get("distributionTasks").findValuesAsText("assignee"), "published again: none twice");
            // The learner (a command agent) takes its task: it gets the delegation skill as input.
            await().atMost(WAIT).until(() -> "completed".equals(hub.get(worker, "/v1/tasks/" + distribution).text("state")));
            JsonNode learnt = JSON.readTree(hub.get(worker, "/v1/tasks/" + distribution).get("result").get("text").asText());
            assertEquals(Map.of("type", "skill_distribution", "capabilityId", "cap.summarize", "version", "1.0"),
                    Map.of("type", learnt.get("type").asText(), "capabilityId", learnt.get("capabilityId").asText(),
                            "version", learnt.at("/delegationSkill/version").asText()), learnt::toString);
            assertError(hub.post(other, "/v1/capabilities", declaration("cap.summarize", "other")), 409,
                    "capability_taken");

            // The catalog (any node) and the owner's card.
            assertEquals(List.of("cap.summarize"), hub.get(other, "/v1/capabilities").items().stream()
                    .map(c -> c.get("capabilityId").asText()).toList());
            assertEquals("2.1", hub.get(other, "/v1/capabilities/cap.summarize").get("executorSkill").get("version").asText());
            assertTrue(hub.get(lead, "/a2a/worker/.well-known/agent-card.json").get("skills").findValuesAsText("id")
                    .contains("cap.summarize"));

            // Routed to the owner; a result that meets the contract raises nothing.
            String good = route(hub, lead);
            finish(hub, worker, good, obj("type", "complete", "result", obj("summary", "short")));
            String broken = route(hub, lead);
            finish(hub, worker, broken, obj("type", "complete", "result", obj("wrong", 1)));
            String failed = route(hub, lead);
            finish(hub, worker, failed, obj("type", "fail", "reason", "model unavailable"));
            String slow = route(hub, lead);
            assertEquals(200, hub.post(worker, "/v1/tasks/" + slow + "/events", obj("type", "accept")).status());
            hub.hub().sweep();
            assertEquals(2, reviews(hub, lead).size(), "within its ETA: no review yet");
            ahead.addAndGet(Duration.ofSeconds(61).toMillis());
            hub.hub().sweep();
            hub.hub().sweep();
            // Three tasks its owner cannot be reached for, within ten minutes: one review with the three samples.
            for (int i = 0; i < 3; i++) {
                assertError(hub.post(other, "/v1/tasks", obj("to", "cap.summarize", "title", "try " + i)), 403,
                        "acl_denied");
            }

            List<JsonNode> reviews = reviews(hub, lead);
            Map<String, JsonNode> byFailure = reviews.stream().collect(Collectors.toMap(r -> r.get("failure").asText(),
                    r -> r));
            assertEquals(4, reviews.size(), reviews::toString);
            assertEquals(broken, byFailure.get("contract_violation").get("sampleIds").get(0).asText());
            assertEquals(failed, byFailure.get("terminal_failure").get("sampleIds").get(0).asText());
            assertEquals(slow, byFailure.get("eta_breach").get("sampleIds").get(0).asText());
            assertEquals(3, byFailure.get("routing_miss").get("sampleIds").size());
            for (JsonNode review : reviews) {
                assertEquals(List.of("cap.summarize", "1.0", "2.1"), List.of(review.get("capabilityId").asText(),
                        review.at("/delegationSkill/version").asText(), review.at("/executorSkill/version").asText()));
            }
            assertTrue(hub.get(hub.admin(), "/v1/audit?action=capability.route&decision=deny").body()
                    .contains(byFailure.get("routing_miss").get("sampleIds").get(0).asText()), "each miss audited by its id");
            // The owner is told of each, by the hub; only its stewards read the reviews.
            assertEquals(4, hub.inbox(worker).stream().filter(e -> e.get("kind").asText().equals("skill_review"))
                    .count());
            assertError(hub.get(other, "/v1/capabilities/cap.summarize/reviews"), 404, "capability_not_found");
            assertError(hub.send(other, "worker", "x"), 403, "acl_denied");
            assertError(hub.post(lead, "/v1/messages", obj("to", "worker", "kind", "skill_review", "text", "forged")), 400,
                    "invalid_request");

            // Unpublished: no routing, not in the catalog or the card; its reviews stay.
            assertError(hub.delete(other, "/v1/capabilities/cap.summarize"), 403, "forbidden");
            assertEquals(204, hub.delete(worker, "/v1/capabilities/cap.summarize").status());
            assertError(hub.post(lead, "/v1/tasks", obj("to", "cap.summarize", "title", "late")), 404,
                    "capability_not_found");
            assertEquals(List.of(), hub.get(other, "/v1/capabilities").items());
            assertFalse(hub.get(lead, "/a2a/worker/.well-known/agent-card.json").get("skills").findValuesAsText("id")
                    .contains("cap.summarize"));
            assertEquals(4, reviews(hub, lead).size());
            assertError(hub.post(hub.admin(), "/v1/nodes", obj("id", "cap.fake")), 400, "invalid_request");
        }
    }

    private static String route(HubFixture hub, String creator) {
        HubFixture.Resp created = hub.post(creator, "/v1/tasks", obj("to", "cap.summarize", "title", "summarize this",
                "input", "a long text"));
        assertEquals(201, created.status(), created::toString);
        assertEquals("worker", created.text("assignee"));
        return created.text("id");
    }

    private static void finish(HubFixture hub, String assignee, String task, ObjectNode end) {
        assertEquals(200, hub.post(assignee, "/v1/tasks/" + task + "/events", obj("type", "accept")).status());
        HubFixture.Resp ended = hub.post(assignee, "/v1/tasks/" + task + "/events", end);
        assertEquals(200, ended.status(), ended::toString);
    }

    private static List<JsonNode> reviews(HubFixture hub, String token) {
        return hub.get(token, "/v1/capabilities/cap.summarize/reviews").items();
    }
}
