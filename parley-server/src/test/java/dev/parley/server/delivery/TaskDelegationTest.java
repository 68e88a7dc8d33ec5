package dev.parley.server.delivery;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Tasks and delegation against a real hub. Topology: lead (root) with w1 and w2; other (root) with o1. */
class TaskDelegationTest {
    @TempDir
    Path dir;
    private HubFixture hub;
    private String lead;
    private String w1;
    private String w2;
    private String o1;

    @BeforeEach
    void start() {
        hub = HubFixture.start(dir);
        lead = hub.createNode("lead", null);
        w1 = hub.createNode("w1", "lead");
        w2 = hub.createNode("w2", "lead");
        hub.createNode("other", null);
        o1 = hub.createNode("o1", "other");
    }

    @AfterEach
    void stop() {
        hub.close();
    }

    @Test
    void aSpawnedEphemeralChildAcceptsUpdatesCompletesAndIsRemoved() {
        JsonNode created = assertStatus(201, hub.post(lead, "/v1/tasks", obj("spawn", Map.of("id", "helper",
                "labels", Map.of("role", "tester")), "title", "run the tests", "input", Map.of("suite", "all"),
                "ephemeral", true))).json();
        String id = created.get("id").asText();
        assertEquals("submitted", created.get("state").asText());
        assertEquals("helper", created.get("assignee").asText());
        assertEquals("lead", created.get("creator").asText());
        assertTrue(created.get("ephemeral").asBoolean());
        String helper = created.get("assigneeToken").asText();
        assertTrue(helper.startsWith("pn_"));

        JsonNode child = assertStatus(200, hub.get(hub.admin(), "/v1/nodes/helper")).json();
        assertEquals("lead", child.get("parent").asText());
        assertEquals("tester", child.get("labels").get("role").asText());
        JsonNode handed = inboxOf("helper").getFirst();
        assertEquals("task", handed.get("kind").asText());
        assertEquals("lead", handed.get("from").asText());
        assertEquals(id, handed.get("corrId").asText());
        assertEquals("task", handed.get("trace").get("route").asText());
        assertEquals(id, handed.get("data").get("taskId").asText());
        assertEquals("run the tests", handed.get("data").get("title").asText());
        assertEquals("all", handed.get("data").get("input").get("suite").asText());
        // the spawned child reaches its group only
        assertError(hub.post(helper, "/v1/messages", Map.of("to", "o1", "text", "hi")), 403, "acl_denied");

        JsonNode accepted = assertStatus(200, event(helper, id, Map.of("type", "accept", "etaSeconds", 30))).json();
        assertEquals("accepted", accepted.get("state").asText());
        assertEquals(30, accepted.get("etaSeconds").asLong());
        JsonNode working = assertStatus(200, event(helper, id, Map.of("type", "update", "progress", Map.of("pct", 50))))
                .json();
        assertEquals("working", working.get("state").asText());
        assertEquals(50, working.get("progress").get("pct").asInt());
        JsonNode completed = assertStatus(200, event(helper, id, Map.of("type", "complete",
                "result", Map.of("passed", 120),
                "artifacts", List.of(Map.of("uri", "file:///tmp/report.html", "mediaType", "text/html"),
                        Map.of("uri", "https://ci.example/run/7"))))).json();
        assertEquals("completed", completed.get("state").asText());
        assertEquals(120, completed.get("result").get("passed").asInt());
        assertEquals("text/html", completed.get("artifacts").get(0).get("mediaType").asText());
        assertEquals("application/octet-stream", completed.get("artifacts").get(1).get("mediaType").asText());

        List<JsonNode> told = inboxOf("lead");
        assertEquals(List.of("task_accept", "task_update", "task_complete"), kinds(told));
        assertEquals(List.of("accepted", "working", "completed"),
                told.stream().map(e -> e.get("data").get("state").asText()).toList());
        for (JsonNode envelope : told) {
            assertEquals("helper", envelope.get("from").asText());
            assertEquals(id, envelope.get("corrId").asText());
            assertEquals("task", envelope.get("trace").get("route").asText());
        }
        JsonNode lastArtifact = told.getLast().get("data").get("artifacts").get(1);
        assertEquals("https://ci.example/run/7", lastArtifact.get("uri").asText());

        assertError(hub.get(helper, "/v1/inbox"), 401, "unauthorized");
        assertError(hub.get(hub.admin(), "/v1/nodes/helper"), 404, "node_not_found");
        assertEquals(1, inboxOf("helper").size(), "the deleted child's inbox is kept");
        assertEquals(completed, assertStatus(200, hub.get(lead, "/v1/tasks/" + id)).json());
        assertEquals(1, hub.metric("parley_tasks_total{state=\"completed\"}"));
    }

    @Test
    void anEphemeralTaskThatFailsRemovesItsChildAndTellsTheCreatorWhy() {
        JsonNode created = assertStatus(201, hub.post(lead, "/v1/tasks", obj("spawn", Map.of("id", "probe"),
                "title", "probe", "ephemeral", true))).json();
        String probe = created.get("assigneeToken").asText();
        String id = created.get("id").asText();
        assertStatus(200, event(probe, id, Map.of("type", "fail", "reason", "no network")));
        JsonNode failed = inboxOf("lead").getLast();
        assertEquals("task_failed", failed.get("kind").asText());
        assertEquals("no network", failed.get("data").get("reason").asText());
        assertError(hub.get(probe, "/v1/inbox"), 401, "unauthorized");
    }

    @Test
    void theCreatorCancelsAndTheAssigneeIsTold() {
        String id = task(lead, "w1").get("id").asText();
        assertStatus(200, hub.get(w1, "/v1/tasks/" + id));
        assertStatus(200, event(w1, id, Map.of("type", "accept")));

        JsonNode canceled = assertStatus(200, hub.post(lead, "/v1/tasks/" + id + "/cancel",
                obj("reason", "plans changed"))).json();
        assertEquals("canceled", canceled.get("state").asText());
        JsonNode told = inboxOf("w1").getLast();
        assertEquals("task_canceled", told.get("kind").asText());
        assertEquals("lead", told.get("from").asText());
        assertEquals("plans changed", told.get("data").get("reason").asText());

        assertError(event(w1, id, Map.of("type", "complete")), 409, "invalid_transition");
        assertError(hub.post(lead, "/v1/tasks/" + id + "/cancel", null), 409, "invalid_transition");
        assertStatus(200, hub.get(w1, "/v1/inbox")); // a task to an existing node never deletes it
    }

    @Test
    void creationWithBadInputIsRefusedAndCreatesNothing() {
        assertError(hub.post(lead, "/v1/tasks", Map.of("to", "w1")), 400, "invalid_request");
        assertError(hub.post(lead, "/v1/tasks", Map.of("to", "w1", "title", "  ")), 400, "invalid_request");
        assertError(hub.post(lead, "/v1/tasks", Map.of("title", "t")), 400, "invalid_request");
        assertError(hub.post(lead, "/v1/tasks", Map.of("to", "w1", "spawn", Map.of("id", "x"), "title", "t")),
                400, "invalid_request");
        assertError(hub.post(lead, "/v1/tasks", Map.of("to", "w1", "title", "t", "ephemeral", true)),
                400, "invalid_request");
        assertError(hub.post(lead, "/v1/tasks", Map.of("to", "Bad Id", "title", "t")), 400, "invalid_node_id");
        assertError(hub.post(lead, "/v1/tasks", Map.of("to", "ghost", "title", "t")), 404, "node_not_found");
        JsonNode denied = assertError(hub.post(lead, "/v1/tasks", Map.of("to", "o1", "title", "t")), 403, "acl_denied")
                .json();
        assertTrue(denied.get("reason").asText().contains("different groups"));
        assertError(hub.post(hub.admin(), "/v1/tasks", Map.of("to", "w1", "title", "t")), 403, "forbidden");
        assertError(hub.post(w1, "/v1/tasks", Map.of("spawn", Map.of("id", "grandchild"), "title", "t")),
                403, "depth_limit");
        assertError(hub.post(lead, "/v1/tasks", Map.of("spawn", Map.of("id", "w2"), "title", "t")), 409, "node_exists");
        assertError(hub.post(lead, "/v1/tasks", Map.of("spawn", Map.of("id", "kid", "kind", "robot"), "title", "t")),
                400, "invalid_request");

        assertTrue(assertStatus(200, hub.get(hub.admin(), "/v1/tasks")).items().isEmpty());
        assertError(hub.get(hub.admin(), "/v1/nodes/grandchild"), 404, "node_not_found");
        assertError(hub.get(hub.admin(), "/v1/nodes/kid"), 404, "node_not_found");
        for (String node : List.of("w1", "w2", "o1")) {
            assertTrue(inboxOf(node).isEmpty(), node + " received nothing");
        }
        List<JsonNode> denials = hub.get(hub.admin(), "/v1/audit?node=lead&decision=deny").items();
        assertEquals(List.of("o1", "ghost"), denials.stream().map(a -> a.get("target").asText()).toList());
    }

    @Test
    void outOfOrderMovesAndOtherNodesAreRefusedAndChangeNothing() {
        String id = task(lead, "w1").get("id").asText();
        assertError(event(w1, id, Map.of("type", "complete")), 409, "invalid_transition");
        assertError(event(w1, id, Map.of("type", "update")), 409, "invalid_transition");
        assertError(event(lead, id, Map.of("type", "accept")), 403, "forbidden");
        assertError(event(w2, id, Map.of("type", "accept")), 404, "task_not_found"); // not theirs: as if none
        assertError(event(hub.admin(), id, Map.of("type", "accept")), 403, "forbidden");
        assertError(hub.post(w1, "/v1/tasks/" + id + "/cancel", null), 403, "forbidden");
        assertError(hub.get(w2, "/v1/tasks/" + id), 404, "task_not_found");
        assertError(hub.get(o1, "/v1/tasks/" + id), 404, "task_not_found");
        assertError(event(w1, id, Map.of("type", "begin")), 400, "invalid_request");
        assertError(event(w1, id, Map.of("type", "cancel")), 400, "invalid_request");
        assertError(event(w1, id, Map.of()), 400, "invalid_request");
        assertError(event(w1, id, Map.of("type", "accept", "etaSeconds", -1)), 400, "invalid_request");
        assertError(event(w1, id, Map.of("type", "accept", "etaSeconds", "soon")), 400, "invalid_request");
        assertEquals("submitted", hub.get(lead, "/v1/tasks/" + id).json().get("state").asText());

        assertStatus(200, event(w1, id, Map.of("type", "accept")));
        assertError(event(w1, id, Map.of("type", "accept")), 409, "invalid_transition");
        assertError(event(w1, id, Map.of("type", "complete", "artifacts", List.of(Map.of("uri", "report.html")))),
                400, "invalid_request");
        assertError(event(w1, id, Map.of("type", "complete", "artifacts", List.of(Map.of("mediaType", "text/html")))),
                400, "invalid_request");
        assertError(event(w1, id, Map.of("type", "complete", "artifacts", "file:///x")), 400, "invalid_request");

        JsonNode task = assertStatus(200, hub.get(w1, "/v1/tasks/" + id)).json();
        assertEquals("accepted", task.get("state").asText());
        assertTrue(task.get("artifacts").isEmpty());
        assertEquals(List.of("task_accept"), kinds(inboxOf("lead")));

        String unknown = "0190f0c4-0000-7000-8000-000000000000";
        assertError(event(w1, unknown, Map.of("type", "accept")), 404, "task_not_found");
        assertError(hub.post(lead, "/v1/tasks/" + unknown + "/cancel", null), 404, "task_not_found");
        assertError(hub.get(lead, "/v1/tasks/" + unknown), 404, "task_not_found");
        assertError(hub.get(hub.admin(), "/v1/tasks/not-a-task"), 404, "task_not_found");
    }

    @Test
    void aNodeListsTheTasksItCreatedOrIsAssigned() {
        String toW1 = task(lead, "w1").get("id").asText();
        String toW2 = task(lead, "w2").get("id").asText();
        String fromW2 = task(w2, "w1").get("id").asText();
        assertStatus(200, event(w1, toW1, Map.of("type", "accept")));

        assertEquals(List.of(fromW2, toW1), ids(assertStatus(200, hub.get(w1, "/v1/tasks"))));
        assertEquals(List.of(fromW2, toW2, toW1), ids(assertStatus(200, hub.get(hub.admin(), "/v1/tasks"))));
        assertEquals(List.of(toW2, toW1), ids(assertStatus(200, hub.get(lead, "/v1/tasks"))));
        assertEquals(List.of(toW2), ids(assertStatus(200, hub.get(lead, "/v1/tasks?assignee=w2"))));
        assertEquals(List.of(toW1), ids(assertStatus(200, hub.get(lead, "/v1/tasks?state=accepted"))));
        assertEquals(List.of(), ids(assertStatus(200, hub.get(o1, "/v1/tasks"))));
        assertEquals(List.of(fromW2), ids(assertStatus(200, hub.get(hub.admin(), "/v1/tasks?limit=1"))));
        assertError(hub.get(lead, "/v1/tasks?state=done"), 400, "invalid_request");
        assertError(hub.get(lead, "/v1/tasks?assignee=Bad%20Id"), 400, "invalid_node_id");
        assertError(hub.get(lead, "/v1/tasks?limit=0"), 400, "invalid_request");
    }

    private JsonNode task(String creator, String assignee) {
        return assertStatus(201, hub.post(creator, "/v1/tasks", obj("to", assignee, "title", "work for " + assignee)))
                .json();
    }

    private HubFixture.Resp event(String token, String taskId, Map<String, Object> body) {
        return hub.post(token, "/v1/tasks/" + taskId + "/events", body);
    }

    private List<JsonNode> inboxOf(String node) {
        return hub.inboxAll(hub.admin(), "/v1/nodes/" + node + "/inbox");
    }

    private static List<String> kinds(List<JsonNode> envelopes) {
        return envelopes.stream().map(e -> e.get("kind").asText()).toList();
    }

    private static List<String> ids(HubFixture.Resp page) {
        return page.items().stream().map(t -> t.get("id").asText()).toList();
    }

}
