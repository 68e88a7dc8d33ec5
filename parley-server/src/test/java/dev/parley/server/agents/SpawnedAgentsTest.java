package dev.parley.server.agents;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Delegation to a provisioned child: a node hands a task to a managed agent the hub creates
 * for it from a template (an agent the admin gave the node), with at most the node's reach;
 * the child runs the task, the creator gets its result, and the child is recycled. Real
 * processes on a real hub; each child waits for its own gate file, so the test decides when
 * it may finish.
 */
class SpawnedAgentsTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    /** The template: writes its pid, waits for the gate named after the child, then shouts its input. */
    private String template(Path gates) {
        return """
                id: shout
                parent: lead
                command: [sh, -c, "echo $$ > \\"$GATES/$PARLEY_AGENT.pid\\"; while [ ! -e \\"$GATES/$PARLEY_AGENT\\" ]; do sleep 0.05; done; tr a-z A-Z"]
                env: {GATES: %s}
                skills: [shouting]
                wake: on-message
                idleTimeout: 20s
                """.formatted(gates);
    }

    @Test
    void aTaskSpawnedFromATemplateRunsOnAChildWithAtMostItsCreatorsReachAndTheChildIsRecycled() throws Exception {
        Path gates = Files.createDirectories(tmp.resolve("gates"));
        Path data = tmp.resolve("hub");
        try (HubFixture hub = HubFixture.start(data)) {
            String lead = hub.createNode("lead", null);
            hub.createNode("other", null);
            hub.createNode("far", null);
            String until = java.time.Instant.now().plus(java.time.Duration.ofHours(1)).truncatedTo(
                    java.time.temporal.ChronoUnit.SECONDS).toString();
            assertEquals(201, hub.post(hub.admin(), "/v1/grants", obj("from", "lead", "to", "other", "expiresAt", until))
                    .status());
            assertEquals(201, hub.post(hub.admin(), "/v1/agents", obj("spec", template(gates))).status());
            // A template need not run: stopped, it still serves as one.
            assertEquals("stopped", hub.post(lead, "/v1/agents/shout/stop", obj()).text("state"));

            // Beyond the creator's reach: refused, audited, nothing created.
            assertError(hub.post(lead, "/v1/tasks", obj("title", "t", "input", "x",
                    "spawn", obj("id", "shout-far", "template", "shout", "capabilities", List.of("far")))), 403, "forbidden");
            assertError(hub.post(lead, "/v1/tasks", obj("title", "t", "input", "x",
                    "spawn", obj("id", "shout-none", "template", "shout", "capabilities", List.of("nobody")))), 403,
                    "forbidden");
            assertTrue(hub.get(hub.admin(), "/v1/audit?action=agent.spawn&decision=deny").body()
                    .contains("capability far beyond the creator's reach"));
            assertEquals(404, hub.get(hub.admin(), "/v1/nodes/shout-far").status(), "nothing created");

            HubFixture.Resp created = hub.post(lead, "/v1/tasks", obj("title", "shout it", "input", "hello world",
                    "spawn", obj("id", "shout-1", "template", "shout", "capabilities", List.of("other"))));
            assertEquals(201, created.status(), created::toString);
            String task = created.text("id");
            assertEquals("shout-1", created.text("assignee"));
            assertTrue(created.get("assigneeToken") == null, "the hub runs the child: its token is no one's");

            // While it works: a managed child of lead, its one capability a grant from it (not to it).
            await().atMost(WAIT).until(() -> Files.exists(gates.resolve("shout-1.pid")));
            JsonNode child = hub.get(lead, "/v1/agents/shout-1").json();
            assertEquals(List.of("lead", "running"), List.of(child.get("parent").asText(), child.get("state").asText()),
                    child::toString);
            assertEquals("managed", hub.get(hub.admin(), "/v1/nodes/shout-1").text("kind"));
            assertEquals(Set.of("lead->other", "shout-1->other"), grants(hub));
            // lead reaches other through a grant that ends in an hour: so does its child
            assertEquals(Set.of(until), hub.get(hub.admin(), "/v1/grants").items().stream()
                    .map(g -> java.time.Instant.parse(g.get("expiresAt").asText()).toString()).collect(Collectors.toSet()));
            assertEquals("accepted", hub.get(lead, "/v1/tasks/" + task).text("state"));

            Files.createFile(gates.resolve("shout-1"));
            await().atMost(WAIT).until(() -> "completed".equals(hub.get(lead, "/v1/tasks/" + task).text("state")));
            JsonNode done = hub.get(lead, "/v1/tasks/" + task).json();
            assertEquals("HELLO WORLD", done.get("result").get("text").asText(), done::toString);
            // Recycled: node, agent and files gone (its grant, as any deleted node's, names an id never used again).
            // The deletion is the transaction after the task's end (a hub stopped between them retires it at start),
            // so a reader may see the task ended an instant before the child is gone.
            await().atMost(WAIT).until(() -> hub.get(hub.admin(), "/v1/nodes/shout-1").status() == 404);
            await().atMost(WAIT).until(() -> hub.get(hub.admin(), "/v1/agents/shout-1").status() == 404);
            await().atMost(WAIT).until(() -> !Files.exists(data.resolve("agents").resolve("shout-1"))
                    && !Files.exists(data.resolve("agents").resolve("shout-1.log")));
            List<String> kinds = hub.inbox(lead).stream().map(e -> e.get("kind").asText()).toList();
            assertTrue(kinds.containsAll(List.of("task_accept", "task_complete")), kinds::toString);
        }
    }

    @Test
    void aCanceledTaskKillsItsChildAndARepeatedMessageIdSpawnsNoSecondChild() throws Exception {
        Path gates = Files.createDirectories(tmp.resolve("gates"));
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub"))) {
            String lead = hub.createNode("lead", null);
            String other = hub.createNode("other", null);
            assertEquals(201, hub.post(hub.admin(), "/v1/agents", obj("spec", template(gates))).status());

            String task = hub.post(lead, "/v1/tasks", obj("title", "never", "input", "x", "messageId", "m-1",
                    "spawn", obj("id", "shout-2", "template", "shout"))).text("id");
            // The same messageId again, naming another child: the first task is the answer, no second child.
            HubFixture.Resp again = hub.post(lead, "/v1/tasks", obj("title", "never", "input", "x", "messageId", "m-1",
                    "spawn", obj("id", "shout-3", "template", "shout")));
            assertEquals(200, again.status(), again::toString);
            assertEquals(task, again.text("id"));
            assertEquals(404, hub.get(hub.admin(), "/v1/nodes/shout-3").status());

            await().atMost(WAIT).until(() -> Files.exists(gates.resolve("shout-2.pid")));
            long pid = Long.parseLong(Files.readString(gates.resolve("shout-2.pid")).strip());
            assertEquals("canceled", hub.post(lead, "/v1/tasks/" + task + "/cancel", obj("reason", "changed my mind"))
                    .text("state"));
            await().atMost(WAIT).until(() -> !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
            assertEquals(404, hub.get(hub.admin(), "/v1/nodes/shout-2").status());

            // Only the template's own group may use it; refusals say what is wrong.
            assertError(hub.post(other, "/v1/tasks", obj("title", "t", "spawn", obj("id", "x1", "template", "shout"))),
                    404, "node_not_found");
            assertError(hub.post(lead, "/v1/tasks", obj("title", "t", "spawn", obj("id", "x2", "template", "lead"))),
                    404, "node_not_found");
            assertError(hub.post(lead, "/v1/tasks", obj("title", "t", "ephemeral", false,
                    "spawn", obj("id", "x3", "template", "shout"))), 400, "invalid_request");
            assertError(hub.post(lead, "/v1/tasks", obj("title", "t",
                    "spawn", obj("id", "x4", "template", "shout", "kind", "agent"))), 400, "invalid_request");
            assertError(hub.post(lead, "/v1/tasks", obj("title", "t",
                    "spawn", obj("id", "x5", "capabilities", List.of("other")))), 400, "invalid_request");
            for (String id : List.of("x1", "x2", "x3", "x4", "x5")) {
                assertEquals(404, hub.get(hub.admin(), "/v1/nodes/" + id).status(), id);
            }
        }
    }

    @Test
    void aChildTheHubStoppedUnderFinishesItsTaskAfterTheRestart() throws Exception {
        Path gates = Files.createDirectories(tmp.resolve("gates"));
        Path data = tmp.resolve("hub");
        String lead;
        String task;
        try (HubFixture hub = HubFixture.start(data)) {
            lead = hub.createNode("lead", null);
            assertEquals(201, hub.post(hub.admin(), "/v1/agents", obj("spec", template(gates))).status());
            task = hub.post(lead, "/v1/tasks", obj("title", "later", "input", "after the restart",
                    "spawn", obj("id", "shout-4", "template", "shout"))).text("id");
            await().atMost(WAIT).until(() -> Files.exists(gates.resolve("shout-4.pid")));
        }
        Files.createFile(gates.resolve("shout-4"));
        try (HubFixture hub = HubFixture.start(data)) {
            await().atMost(WAIT).until(() -> "completed".equals(hub.get(lead, "/v1/tasks/" + task).text("state")));
            assertEquals("AFTER THE RESTART", hub.get(lead, "/v1/tasks/" + task).get("result").get("text").asText());
            await().atMost(WAIT).until(() -> hub.get(hub.admin(), "/v1/nodes/shout-4").status() == 404);
        }
    }

    @Test
    void aProcessChildThatEndsForGoodFailsItsTaskAndIsRecycled() {
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub"))) {
            String lead = hub.createNode("lead", null);
            assertEquals(201, hub.post(hub.admin(), "/v1/agents", obj("spec", """
                    id: quitter
                    parent: lead
                    runner: process
                    restart: never
                    command: [sh, -c, "exit 3"]
                    """)).status());
            hub.post(hub.admin(), "/v1/agents/quitter/stop", obj());
            String task = hub.post(lead, "/v1/tasks", obj("title", "try", "spawn", obj("id", "quitter-1",
                    "template", "quitter"))).text("id");
            await().atMost(WAIT).until(() -> "failed".equals(hub.get(lead, "/v1/tasks/" + task).text("state")));
            assertTrue(hub.get(lead, "/v1/tasks/" + task).text("reason").contains("exited with status 3"),
                    () -> hub.get(lead, "/v1/tasks/" + task).toString());
            await().atMost(WAIT).until(() -> hub.get(hub.admin(), "/v1/nodes/quitter-1").status() == 404);
            await().atMost(WAIT).until(() -> hub.get(hub.admin(), "/v1/agents").items().stream() // the child is no longer run
                    .map(a -> a.get("id").asText()).toList(), List.of("quitter")::equals);
        }
    }

    private static Set<String> grants(HubFixture hub) {
        return hub.get(hub.admin(), "/v1/grants").items().stream()
                .map(g -> g.get("from").asText() + "->" + g.get("to").asText()).collect(Collectors.toSet());
    }
}
