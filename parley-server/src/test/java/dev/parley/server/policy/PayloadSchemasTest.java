package dev.parley.server.policy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Payload schemas over HTTP: set, read, list, remove; sends, replies and topic events that break them. */
class PayloadSchemasTest {
    private static final Map<String, Object> ORDER = Map.of(
            "type", "object",
            "required", List.of("n"),
            "properties", Map.of(
                    "n", Map.of("type", "integer", "minimum", 1),
                    "tags", Map.of("type", "array", "items", Map.of("type", "string"))));

    @TempDir
    Path dir;
    private HubFixture hub;
    private String lead;
    private String w1;

    @BeforeEach
    void start() {
        hub = HubFixture.start(dir);
        lead = hub.createNode("lead", null);
        w1 = hub.createNode("w1", "lead");
    }

    @AfterEach
    void stop() {
        hub.close();
    }

    private Resp put(String token, String kind, Object schema) {
        return hub.request("PUT", "/v1/schemas/" + kind, token, bytes(schema), Map.of());
    }

    private static byte[] bytes(Object body) {
        try {
            return body instanceof String s ? s.getBytes(StandardCharsets.UTF_8) : HubFixture.JSON.writeValueAsBytes(body);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private Resp send(String token, String to, String kind, Object data) {
        return hub.post(token, "/v1/messages", data == null ? obj("to", to, "kind", kind, "text", "no data")
                : obj("to", to, "kind", kind, "data", data));
    }

    @Test
    void theAdminSetsReadsListsAndRemovesSchemas() {
        Resp set = assertStatus(200, put(hub.admin(), "order", ORDER));
        assertEquals("order", set.text("kind"));
        assertEquals(HubFixture.JSON.valueToTree(ORDER), set.get("schema"));
        String version = set.text("version");
        assertTrue(version.matches("s-[0-9a-f]{12}"), version);
        Resp again = assertStatus(200, put(hub.admin(), "order", ORDER));
        assertEquals(version, again.text("version"), "the same document is the same version");

        assertEquals(again.json(), hub.get(hub.admin(), "/v1/schemas/order").json());
        assertStatus(200, put(hub.admin(), "note", Map.of("type", "object")));
        assertEquals(List.of("note", "order"), hub.get(hub.admin(), "/v1/schemas").items().stream()
                .map(s -> s.get("kind").asText()).toList());

        String changed = assertStatus(200, put(hub.admin(), "order", Map.of("type", "object"))).text("version");
        assertNotEquals(version, changed);

        assertStatus(204, hub.delete(hub.admin(), "/v1/schemas/order"));
        assertError(hub.delete(hub.admin(), "/v1/schemas/order"), 404, "schema_not_found");
        assertError(hub.get(hub.admin(), "/v1/schemas/order"), 404, "schema_not_found");
        assertEquals(1, hub.get(hub.admin(), "/v1/schemas").items().size());

        assertError(put(lead, "order", ORDER), 403, "forbidden");
        assertError(hub.get(lead, "/v1/schemas"), 403, "forbidden");
        assertError(hub.delete(lead, "/v1/schemas/note"), 403, "forbidden");
        assertError(put(null, "order", ORDER), 401, "unauthorized");
        assertError(put(hub.admin(), "Bad", ORDER), 400, "invalid_request");
        assertError(put(hub.admin(), "task", ORDER), 400, "invalid_request");

        List<String> actions = hub.get(hub.admin(), "/v1/audit?node=admin").items().stream()
                .map(e -> e.get("action").asText()).filter(a -> a.startsWith("schema.")).toList();
        assertEquals(List.of("schema.delete", "schema.put", "schema.put", "schema.put", "schema.put"), actions);
    }

    @Test
    void anInvalidSchemaDocumentIsRefusedWithADetail() {
        Resp wrongType = assertError(put(hub.admin(), "order", Map.of("type", "objekt")), 400, "invalid_schema");
        assertEquals("/type", wrongType.text("pointer"));
        assertFalse(wrongType.text("detail").isBlank());
        assertError(put(hub.admin(), "order", Map.of("minimum", "one")), 400, "invalid_schema");
        assertError(put(hub.admin(), "order", Map.of("$ref", "#/$defs/missing")), 400, "invalid_schema");
        Resp remote = assertError(put(hub.admin(), "order", Map.of("$ref", "http://example.com/order.json")), 400,
                "invalid_schema");
        assertTrue(remote.text("detail").contains("$ref"), remote.body());
        assertError(put(hub.admin(), "order", Map.of("$schema", "http://json-schema.org/draft-07/schema#")), 400,
                "invalid_schema");
        assertError(put(hub.admin(), "order", Map.of("pattern", "[")), 400, "invalid_schema");
        assertError(put(hub.admin(), "order", "{not json"), 400, "invalid_request");
        assertError(put(hub.admin(), "order", "[1, 2]"), 400, "invalid_request");
        assertTrue(hub.get(hub.admin(), "/v1/schemas").items().isEmpty(), "nothing was set");
        assertStatus(200, put(hub.admin(), "order", Map.of("$schema", "https://json-schema.org/draft/2020-12/schema",
                "$defs", Map.of("n", Map.of("type", "integer")), "properties", Map.of("n", Map.of("$ref", "#/$defs/n")))));
        assertError(send(lead, "w1", "order", Map.of("n", "one")), 400, "schema_violation");
    }

    @Test
    void aSendThatBreaksTheSchemaIsRefusedWithThePointerAndNothingIsWritten() {
        assertStatus(200, put(hub.admin(), "order", ORDER));
        long auditBefore = hub.get(hub.admin(), "/v1/audit?limit=1000").items().size();

        Resp low = assertError(send(lead, "w1", "order", Map.of("n", 0)), 400, "schema_violation");
        assertEquals("/n", low.text("pointer"));
        assertTrue(low.text("detail").contains("1"), low.body());
        Resp tag = assertError(send(lead, "w1", "order", Map.of("n", 1, "tags", List.of("a", 3))), 400,
                "schema_violation");
        assertEquals("/tags/1", tag.text("pointer"));
        Resp missing = assertError(send(lead, "w1", "order", Map.of("tags", List.of())), 400, "schema_violation");
        assertEquals("", missing.text("pointer"));
        Resp noData = assertError(send(lead, "w1", "order", null), 400, "schema_violation");
        assertEquals("", noData.text("pointer"));
        assertTrue(noData.text("detail").contains("data"), noData.body());
        Resp withId = assertError(hub.post(lead, "/v1/messages", obj("to", "w1", "kind", "order",
                "data", Map.of("n", -1), "messageId", "m-1")), 400, "schema_violation");
        assertEquals("/n", withId.text("pointer"));

        assertTrue(hub.inbox(w1).isEmpty(), "no envelope was written");
        assertEquals(auditBefore, hub.get(hub.admin(), "/v1/audit?limit=1000").items().size(), "no audit was written");
        assertEquals(5.0, hub.metric("parley_schema_violations_total"));

        // The refused messageId was never recorded: the corrected send is a first send, not a duplicate.
        Resp ok = assertStatus(202, hub.post(lead, "/v1/messages", obj("to", "w1", "kind", "order",
                "data", Map.of("n", 2, "tags", List.of("x")), "messageId", "m-1")));
        assertTrue(ok.get("duplicate") == null, ok.body());
        assertStatus(202, send(lead, "w1", "message", Map.of("n", 0))); // another kind: no schema
        assertEquals(2, hub.inbox(w1).size());

        assertStatus(204, hub.delete(hub.admin(), "/v1/schemas/order"));
        assertStatus(202, send(lead, "w1", "order", Map.of("n", 0)));
    }

    @Test
    void repliesAndTopicEventsAreCheckedByTheirKinds() {
        assertStatus(200, put(hub.admin(), "reply", Map.of("type", "object", "required", List.of("ok"))));
        assertStatus(200, put(hub.admin(), "event", Map.of("type", "object",
                "properties", Map.of("status", Map.of("enum", List.of("green", "red"))))));
        String request = hub.sendOk(lead, "w1", "status?").text("id");

        Resp reply = assertError(hub.post(w1, "/v1/messages/" + request + "/reply", obj("data", Map.of("nope", 1))), 400,
                "schema_violation");
        assertEquals("", reply.text("pointer"));
        assertError(hub.post(w1, "/v1/messages/" + request + "/reply", obj("text", "no data")), 400, "schema_violation");
        assertEquals("accepted", hub.status(lead, request).text("state"), "a refused reply moves nothing");
        assertStatus(202, hub.post(w1, "/v1/messages/" + request + "/reply", obj("data", Map.of("ok", true))));
        assertEquals("replied", hub.status(lead, request).text("state"));

        assertStatus(201, hub.post(w1, "/v1/topics/builds/subscriptions", null));
        int before = hub.inbox(w1).size();
        Resp event = assertError(hub.post(lead, "/v1/topics/builds/events", obj("data", Map.of("status", "blue"))), 400,
                "schema_violation");
        assertEquals("/status", event.text("pointer"));
        assertEquals(before, hub.inbox(w1).size(), "no subscriber got the event");
        assertStatus(202, hub.post(lead, "/v1/topics/builds/events", obj("data", Map.of("status", "green"))));
        JsonNode delivered = hub.inbox(w1).getLast();
        assertEquals("green", delivered.at("/data/status").asText());
    }

    @Test
    void schemasSurviveARestart() {
        String version = assertStatus(200, put(hub.admin(), "order", ORDER)).text("version");
        hub.close();
        hub = HubFixture.start(dir);
        assertEquals(version, hub.get(hub.admin(), "/v1/schemas/order").text("version"));
        String token = assertStatus(200, hub.post(hub.admin(), "/v1/nodes/lead/token", null)).text("token");
        assertEquals("/n", assertError(send(token, "w1", "order", Map.of("n", 0)), 400, "schema_violation")
                .text("pointer"));
    }
}
