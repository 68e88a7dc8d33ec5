package dev.parley.server.traces;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static dev.parley.server.it.HubFixture.JSON;
import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Traces over HTTP: W3C traceparent in, one trace across agents and a reply, turns recorded and read under the ACL. */
class TracesTest {
    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String CALLER_SPAN = "00f067aa0ba902b7";

    @TempDir
    Path dataDir;

    @Test
    void aConversationAcrossTwoAgentsAndAReplyIsOneTraceAndEachTurnIsSeenByItsNodeAndParent() {
        try (HubFixture hub = HubFixture.start(dataDir)) {
            String lead = hub.createNode("lead", null);
            String w1 = hub.createNodeResp(lead, "w1", "lead").text("token");
            String w2 = hub.createNodeResp(lead, "w2", "lead").text("token");
            String other = hub.createNode("other", null);

            Resp sent = send(hub, lead, "w1", "summarize the logs", "00-" + TRACE + "-" + CALLER_SPAN + "-01");
            String task = sent.text("id");
            JsonNode envelope = hub.inbox(w1).getFirst();
            assertEquals(task, envelope.get("id").asText());
            assertEquals(TRACE, envelope.at("/trace/traceId").asText());
            String envelopeSpan = envelope.at("/trace/traceparent").asText().split("-")[2];
            assertNotEquals(CALLER_SPAN, envelopeSpan);

            // w1's turn: it asks w2 on the way, with its own traceparent
            Resp first = record(hub, w1, task + ".1", task, events(
                    message("e1", "user", "summarize the logs"),
                    toolCall("e2", "c1", "Bash", "execute")));
            assertStatus(200, first);
            assertEquals(TRACE, first.text("traceId"));
            assertEquals(2, first.num("accepted"));
            String turnSpan = first.text("spanId");
            Resp asked = send(hub, w1, "w2", "count the errors", "00-" + TRACE + "-" + turnSpan + "-01");
            JsonNode toW2 = hub.inbox(w2).getFirst();
            assertEquals(TRACE, toW2.at("/trace/traceId").asText());
            assertStatus(200, record(hub, w2, "t", asked.text("id"), events(message("e1", "user", "count the errors"),
                    message("e2", "assistant", "3 errors"), stop("e3"))));
            assertStatus(202, hub.post(w2, "/v1/messages/" + asked.text("id") + "/reply", obj("text", "3 errors")));
            assertStatus(200, record(hub, w1, task + ".1", task, events(
                    result("e3", "c1"), message("e4", "assistant", "3 errors in the logs"), stop("e5"))));
            Resp reply = hub.post(w1, "/v1/messages/" + task + "/reply", obj("text", "3 errors in the logs"));
            assertStatus(202, reply);
            JsonNode replyEnvelope = hub.inbox(lead).stream().filter(e -> e.get("kind").asText().equals("reply"))
                    .findFirst().orElseThrow();
            assertEquals(TRACE, replyEnvelope.at("/trace/traceId").asText(), "the reply continues the conversation");

            // the parent sees both turns; each child its own; an outsider none
            Resp all = hub.get(lead, "/v1/traces/" + TRACE);
            assertStatus(200, all);
            assertEquals(List.of("w1", "w2"), all.get("turns").findValuesAsText("node").stream().sorted().toList());
            JsonNode w1Turn = turnOf(all, "w1");
            assertEquals(envelopeSpan, w1Turn.get("parentSpanId").asText(), "a turn's span follows its envelope's");
            assertEquals(List.of("message", "tool_call", "tool_result", "message", "stop"),
                    w1Turn.get("events").findValuesAsText("type"));
            assertEquals("e2", w1Turn.at("/events/2/parentId").asText(), "a result nests under its call");
            assertTrue(w1Turn.has("stoppedAt"));
            assertEquals(List.of("w1"), hub.get(w1, "/v1/traces/" + TRACE).get("turns").findValuesAsText("node"));
            assertEquals(List.of("w2"), hub.get(w2, "/v1/traces/" + TRACE).get("turns").findValuesAsText("node"));
            assertError(hub.get(other, "/v1/traces/" + TRACE), 404, "trace_not_found");
            assertEquals(2, hub.get(hub.admin(), "/v1/traces/" + TRACE).get("turns").size());

            Resp ofMessage = hub.get(w1, "/v1/messages/" + task + "/trace");
            assertStatus(200, ofMessage);
            assertEquals(TRACE, ofMessage.text("traceId"));
            assertEquals(1, ofMessage.get("turns").size());
            assertError(hub.get(other, "/v1/messages/" + task + "/trace"), 404, "message_not_found");
        }
        // the turns outlive the hub
        try (HubFixture again = HubFixture.start(dataDir)) {
            assertEquals(2, again.get(again.admin(), "/v1/traces/" + TRACE).get("turns").size());
        }
    }

    @Test
    void turnsRefuseWhatBreaksTheContractOrTheirHistory() {
        try (HubFixture hub = HubFixture.start(dataDir)) {
            String lead = hub.createNode("lead", null);
            String w1 = hub.createNodeResp(lead, "w1", "lead").text("token");
            String sentId = send(hub, lead, "w1", "hi", "not-a-traceparent").text("id");
            JsonNode envelope = hub.inbox(w1).getFirst();
            assertEquals(32, envelope.at("/trace/traceId").asText().length(), "a malformed traceparent starts a trace");

            ObjectNode badKind = toolCall("e1", "c1", "Bash", "launch");
            Resp refused = record(hub, w1, "t1", sentId, events(badKind));
            assertError(refused, 400, "invalid_request");
            assertTrue(refused.json().get("message").asText().startsWith("events[0]: kind: one of read, edit"), refused.body());
            ObjectNode extra = message("e1", "user", "x");
            extra.put("secret", "y");
            assertError(record(hub, w1, "t1", sentId, events(extra)), 400, "invalid_request");
            assertError(record(hub, lead, "t1", sentId, events(message("e1", "user", "x"))), 403, "forbidden");
            assertError(record(hub, hub.admin(), "t1", sentId, events(message("e1", "user", "x"))), 403, "forbidden");
            assertError(record(hub, w1, "../x", sentId, events(message("e1", "user", "x"))), 404, "not_found");
            assertError(record(hub, w1, "t1", "no-such-envelope", events(message("e1", "user", "x"))), 404,
                    "message_not_found");
            assertError(hub.post(w1, "/v1/traces/t1/events", obj("envelope", sentId, "adapter", "echo")), 400,
                    "invalid_request");
            assertError(hub.request("POST", "/v1/traces/t1/events", w1, ("{\"envelope\":\"" + sentId
                    + "\",\"adapter\":\"echo\",\"events\":[{\"type\":\"usage\",\"id\":\"e1\",\"at\":"
                    + "\"2026-11-25T09:00:00Z\",\"costUsd\":1e400}]}").getBytes(StandardCharsets.UTF_8), Map.of()), 400,
                    "invalid_request");
            assertError(record(hub, w1, "t1", sentId, events(base("thought", "e1").put("at", "+999999999-12-31T23:59:59Z")
                    .put("text", "far"))), 400, "invalid_request");

            assertEquals(1, record(hub, w1, "t1", sentId, events(message("e1", "user", "x"))).num("accepted"));
            assertEquals(0, record(hub, w1, "t1", sentId, events(message("e1", "user", "x"))).num("accepted"),
                    "a retried event is taken once");
            assertError(record(hub, w1, "t1", sentId, events(message("e1", "user", "other words"))), 409, "turn_conflict");
            assertError(record(hub, w1, "t1", sentId, events(stop("e2"), message("e3", "user", "x"))), 409,
                    "turn_conflict");
            assertStatus(200, record(hub, w1, "t1", sentId, events(stop("e2"))));
            assertError(record(hub, w1, "t1", sentId, events(message("e3", "user", "late"))), 409, "turn_conflict");

            ArrayNode many = JSON.createArrayNode();
            for (int k = 0; k < 501; k++) {
                many.add(message("m" + k, "user", "x"));
            }
            assertError(record(hub, w1, "t2", sentId, many), 413, "payload_too_large");
            assertError(hub.get(lead, "/v1/traces/NOT-HEX"), 400, "invalid_request");
        }
    }

    @Test
    void turnsOfOthersInATraceNeverPushANodesOwnOutOfItsView() {
        try (HubFixture hub = HubFixture.start(dataDir)) {
            String lead = hub.createNode("lead", null);
            String w1 = hub.createNodeResp(lead, "w1", "lead").text("token");
            String intruder = hub.createNode("intruder", null);
            String traceparent = "00-" + TRACE + "-" + CALLER_SPAN + "-01";
            String mine = send(hub, lead, "w1", "work", traceparent).text("id");
            // a stranger joins the trace (any caller may name it) and floods it with turns first
            String own = send(hub, intruder, "intruder", "noise", traceparent).text("id");
            for (int k = 0; k <= 100; k++) {
                assertStatus(200, record(hub, intruder, "n" + k, own, events(stop("e1"))));
            }
            assertStatus(200, record(hub, w1, "t1", mine, events(message("e1", "user", "work"), stop("e2"))));
            Resp seen = hub.get(lead, "/v1/traces/" + TRACE);
            assertEquals(List.of("w1"), seen.get("turns").findValuesAsText("node"));
            assertEquals(false, seen.get("truncated").asBoolean());
            Resp flooded = hub.get(intruder, "/v1/traces/" + TRACE);
            assertEquals(100, flooded.get("turns").size(), "at most 100 turns an answer");
            assertEquals(true, flooded.get("truncated").asBoolean());
        }
    }

    private static JsonNode turnOf(Resp trace, String node) {
        for (JsonNode turn : trace.get("turns")) {
            if (turn.get("node").asText().equals(node)) {
                return turn;
            }
        }
        throw new AssertionError("no turn of " + node + " in " + trace);
    }

    private static Resp send(HubFixture hub, String token, String to, String text, String traceparent) {
        Resp r = hub.request("POST", "/v1/messages", token, obj("to", to, "text", text).toString()
                .getBytes(StandardCharsets.UTF_8), Map.of("traceparent", traceparent, "Content-Type", "application/json"));
        assertStatus(202, r);
        return r;
    }

    private static Resp record(HubFixture hub, String token, String turn, String envelope, ArrayNode events) {
        ObjectNode body = obj("envelope", envelope, "adapter", "command");
        body.set("events", events);
        return hub.post(token, "/v1/traces/" + turn + "/events", body);
    }

    private static ArrayNode events(ObjectNode... items) {
        ArrayNode out = JSON.createArrayNode();
        for (ObjectNode item : items) {
            out.add(item);
        }
        return out;
    }

    private static ObjectNode base(String type, String id) {
        return obj("type", type, "id", id, "at", "2026-11-25T09:00:00Z");
    }

    private static ObjectNode message(String id, String role, String text) {
        return base("message", id).put("role", role).put("text", text);
    }

    private static ObjectNode toolCall(String id, String callId, String tool, String kind) {
        ObjectNode call = base("tool_call", id).put("callId", callId).put("tool", tool).put("kind", kind);
        call.putObject("input").put("command", "grep -c ERROR app.log");
        return call;
    }

    private static ObjectNode result(String id, String callId) {
        return base("tool_result", id).put("parentId", "e2").put("callId", callId).put("error", false).put("output", "3");
    }

    private static ObjectNode stop(String id) {
        return base("stop", id).put("reason", "end_turn");
    }
}
