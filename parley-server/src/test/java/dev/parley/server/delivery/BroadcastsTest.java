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
import java.util.Set;
import java.util.TreeSet;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Broadcasts against a real hub. Topology: lead (root) with coder w1 (managed) and
 * reviewer w2; other (root) with o1.
 */
class BroadcastsTest {
    private static final List<String> EVERYONE = List.of("lead", "w1", "w2", "other", "o1");

    @TempDir
    Path dir;
    private HubFixture hub;
    private String lead;
    private String w1;

    @BeforeEach
    void start() {
        hub = HubFixture.start(dir);
        lead = node("lead", null, "external", Map.of("role", "lead"));
        w1 = node("w1", "lead", "managed", Map.of("role", "coder", "lang", "java"));
        node("w2", "lead", "external", Map.of("role", "reviewer"));
        hub.createNode("other", null);
        hub.createNode("o1", "other");
    }

    @AfterEach
    void stop() {
        hub.close();
    }

    @Test
    void theAdminReachesAnyLiveNodeTheFilterSelectsAsTheHub() {
        var all = assertStatus(202, broadcast(hub.admin(), Map.of()));
        assertEquals(5, all.num("delivered"));
        for (String node : EVERYONE) {
            JsonNode envelope = inboxOf(node).getFirst();
            assertEquals("broadcast", envelope.get("kind").asText());
            assertEquals("parley", envelope.get("from").asText());
            assertEquals(all.text("id"), envelope.get("corrId").asText());
            assertEquals("broadcast", envelope.get("trace").get("route").asText());
        }

        assertEquals(Set.of("w1"), receiversOf(broadcast(hub.admin(),
                Map.of("group", "lead", "labels", Map.of("role", "coder")))));
        assertEquals(Set.of("w1"), receiversOf(broadcast(hub.admin(), Map.of("kind", "managed"))));
        assertEquals(Set.of("other", "o1"), receiversOf(broadcast(hub.admin(), Map.of("group", "other"))));
        assertEquals(Set.of(), receiversOf(broadcast(hub.admin(),
                Map.of("labels", Map.of("role", "coder", "lang", "go")))));
        assertEquals(5, hub.metric("parley_broadcasts_total"));
    }

    @Test
    void aNodeReachesOnlyItsOwnGroupsAndNeverItself() {
        assertEquals(Set.of("lead", "w2"), receiversOf(broadcast(w1, Map.of())));
        assertEquals(Set.of("w1", "w2"), receiversOf(broadcast(lead, Map.of())));
        assertEquals(Set.of("w1", "w2"), receiversOf(broadcast(lead, Map.of("group", "lead"))));
        assertEquals(Set.of("w2"), receiversOf(broadcast(w1,
                Map.of("group", "lead", "labels", Map.of("role", "reviewer")))));
        assertEquals(Set.of(), receiversOf(broadcast(w1, Map.of("group", "w1"))), "w1 leads no children");
        assertEquals("w1", inboxOf("w2").getFirst().get("from").asText());
        assertTrue(inboxOf("other").isEmpty() && inboxOf("o1").isEmpty());
    }

    @Test
    void filtersANodeMayNotUseAreRefusedAndNothingIsDelivered() {
        assertError(broadcast(w1, Map.of("group", "other")), 403, "forbidden");
        assertError(broadcast(lead, Map.of("group", "other")), 403, "forbidden");
        assertError(broadcast(w1, Map.of("group", "w2")), 403, "forbidden");
        assertError(broadcast(w1, Map.of("group", "Not An Id")), 400, "invalid_node_id");
        assertError(broadcast(w1, Map.of("kind", "robot")), 400, "invalid_request");
        assertError(broadcast(w1, Map.of("labels", Map.of("role", 1))), 400, "invalid_request");
        assertError(hub.post(w1, "/v1/broadcasts", obj("filter", "lead", "text", "x")), 400, "invalid_request");
        assertError(hub.post(w1, "/v1/broadcasts", obj("filter", Map.of())), 400, "invalid_request");
        assertError(broadcast(hub.admin(), Map.of("group", "ghost")), 404, "node_not_found");

        for (String node : EVERYONE) {
            assertTrue(inboxOf(node).isEmpty(), node + " received nothing");
        }
        List<JsonNode> denials = hub.get(hub.admin(), "/v1/audit?node=w1&decision=deny").items();
        assertEquals(2, denials.size());
        assertEquals("broadcast", denials.getFirst().get("action").asText());
        assertEquals(0, hub.metric("parley_broadcasts_total"));
    }

    private String node(String id, String parent, String kind, Map<String, String> labels) {
        return assertStatus(201, hub.post(hub.admin(), "/v1/nodes", obj("id", id, "parent", parent, "kind", kind,
                "labels", labels))).text("token");
    }

    private HubFixture.Resp broadcast(String token, Map<String, Object> filter) {
        return hub.post(token, "/v1/broadcasts", obj("filter", filter, "text", "heads up"));
    }

    private List<JsonNode> inboxOf(String node) {
        return hub.inboxAll(hub.admin(), "/v1/nodes/" + node + "/inbox");
    }

    /** The nodes whose inbox holds the broadcast of this (accepted) answer. */
    private Set<String> receiversOf(HubFixture.Resp answer) {
        String id = assertStatus(202, answer).text("id");
        Set<String> out = new TreeSet<>();
        for (String node : EVERYONE) {
            if (inboxOf(node).stream().anyMatch(e -> e.get("corrId").asText().equals(id))) {
                out.add(node);
            }
        }
        assertEquals(out.size(), answer.num("delivered"));
        return out;
    }
}
