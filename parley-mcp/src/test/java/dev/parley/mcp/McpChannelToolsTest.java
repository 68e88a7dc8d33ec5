package dev.parley.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The transport-free parts of the MCP surface against a scripted hub port: argument checks,
 * refusals as {@code isError}, the channel notification shape, the permission verdicts,
 * message checks, and the repush rules.
 */
class McpChannelToolsTest {

    /** A hub port that records what it was asked and answers from a script. */
    private static final class ScriptedHub implements HubPort {
        final List<String> calls = new ArrayList<>();
        final Map<String, String> states = new HashMap<>();
        HubRefusal refuseSends;

        private static JsonNode parse(String json) {
            try {
                return McpJson.parse(json);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public JsonNode node(String id) {
            calls.add("node " + id);
            return parse("{\"id\":\"" + id + "\",\"parent\":null}");
        }

        @Override
        public JsonNode send(ObjectNode request) {
            calls.add("send " + request);
            if (refuseSends != null) {
                throw refuseSends;
            }
            return parse("{\"id\":\"m-1\",\"seq\":3,\"to\":\"" + request.path("to").asText() + "\",\"status\":\"accepted\"}");
        }

        @Override
        public JsonNode permission(ObjectNode request) {
            calls.add("permission " + request);
            return McpJson.object().put("verdict", "deny").put("decidedBy", "nobody").put("reason", "scripted");
        }

        @Override
        public JsonNode reply(String id, ObjectNode body) {
            calls.add("reply " + id + " " + body);
            return parse("{\"id\":\"r-1\",\"seq\":1,\"to\":\"lead\",\"status\":\"accepted\"}");
        }

        @Override
        public JsonNode ack(String id, ObjectNode body) {
            calls.add("ack " + id + " " + body);
            states.put(id, body.path("status").asText());
            return parse("{\"id\":\"" + id + "\",\"state\":\"" + body.path("status").asText() + "\"}");
        }

        @Override
        public JsonNode message(String id) {
            calls.add("message " + id);
            if (!states.containsKey(id)) {
                throw new HubRefusal("message_not_found", "message " + id + " does not exist", 404);
            }
            return parse("{\"id\":\"" + id + "\",\"state\":\"" + states.get(id) + "\",\"timeline\":[]}");
        }

        @Override
        public JsonNode inbox(long after, int limit) {
            calls.add("inbox " + after + " " + limit);
            return parse("{\"items\":[],\"next\":" + after + "}");
        }

        @Override
        public JsonNode peers() {
            calls.add("peers");
            return parse("{\"node\":\"worker\",\"items\":[]}");
        }
    }

    private static JsonNode json(String text) {
        return ScriptedHub.parse(text);
    }

    @Test
    void toolsCheckArgumentsBeforeAskingTheHub() {
        ScriptedHub hub = new ScriptedHub();
        ChannelTools tools = new ChannelTools(hub);

        ToolResult sent = tools.call("send", json("{\"to\":\"lead\",\"text\":\"hi\",\"thread_id\":\"t\",\"data\":[1]}"));
        assertFalse(sent.isError(), sent.text());
        assertEquals("send {\"to\":\"lead\",\"text\":\"hi\",\"data\":[1],\"threadId\":\"t\"}", hub.calls.getLast());

        for (String bad : List.of("{\"to\":\"lead\"}", "{\"to\":5,\"text\":\"x\"}", "[1]", "\"to lead\"",
                "{\"to\":\"lead\",\"text\":\"x\",\"kind\":\"reply\"}")) {
            int before = hub.calls.size();
            ToolResult result = tools.call("send", json(bad));
            assertTrue(result.isError(), bad);
            assertTrue(result.text().startsWith("send: "), result.text());
            assertEquals(before, hub.calls.size(), "no hub call for " + bad);
        }
        assertTrue(tools.call("ack", json("{\"id\":\"m\",\"status\":\"done\"}")).text().contains("processed or failed"));
        assertTrue(tools.call("inbox", json("{\"limit\":0}")).isError());
        assertTrue(tools.call("inbox", json("{\"after\":1.5}")).isError());
        assertTrue(tools.call("peers", json("{\"x\":1}")).text().contains("takes none"));
        assertFalse(tools.call("peers", null).isError(), "no arguments at all is fine");
        assertTrue(tools.call("nope", null).isError());

        hub.refuseSends = new HubRefusal("acl_denied", "acl denied: different groups", 403);
        ToolResult refused = tools.call("send", json("{\"to\":\"x\",\"text\":\"y\"}"));
        assertTrue(refused.isError());
        assertEquals("send refused by the hub: acl_denied: acl denied: different groups", refused.text());
        ObjectNode wire = refused.toJson();
        assertTrue(wire.path("isError").asBoolean());
        assertEquals("text", wire.path("content").get(0).path("type").asText());
    }

    @Test
    void anEnvelopeBecomesChannelContentAndMeta() {
        Map<String, Object> params = ChannelNotification.params(json("{\"id\":\"e1\",\"seq\":4,\"from\":\"lead\","
                + "\"to\":\"worker\",\"kind\":\"event\",\"text\":null,\"data\":{\"a\":[1,2]},\"corrId\":\"c1\","
                + "\"threadId\":null,\"topic\":\"builds\",\"meta\":{\"x-y\":\"z\"}}"));
        assertEquals("{\"a\":[1,2]}", params.get("content"));
        assertEquals(Map.of("from", "lead", "id", "e1", "kind", "event", "corr_id", "c1", "topic", "builds"),
                params.get("meta"));
        assertEquals("", ChannelNotification.params(json("{\"id\":\"e2\",\"data\":null}")).get("content"));
    }

    @Test
    void messagesAreCheckedBeforeAnyoneHandlesThem() {
        assertEquals(JsonRpc.PARSE_ERROR, code(JsonRpc.parse("{")));
        assertEquals(JsonRpc.INVALID_REQUEST, code(JsonRpc.parse("[]")));
        assertEquals(JsonRpc.INVALID_REQUEST, code(JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}")));
        assertEquals(JsonRpc.INVALID_REQUEST, code(JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"id\":1}")));
        assertEquals(JsonRpc.INVALID_PARAMS, code(JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":3}")));
        assertTrue(JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":3}").answer().isEmpty(),
                "a bad notification gets no answer");
        assertEquals(JsonRpc.Kind.RESPONSE, JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}").kind().orElseThrow());
        assertEquals(JsonRpc.Kind.NOTIFICATION, JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"method\":\"n\"}").kind().orElseThrow());
        assertEquals(JsonRpc.Kind.REQUEST, JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"m\"}").kind().orElseThrow());
    }

    private static int code(JsonRpc.Checked checked) {
        assertFalse(checked.accepted());
        return checked.answer().orElseThrow().path("error").path("code").asInt();
    }

    @Test
    void anOpenEnvelopeIsPushedAgainUntilSettledOrTheLimit() {
        ScriptedHub hub = new ScriptedHub();
        AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-01-01T00:00:00Z"));
        List<String> pushed = new ArrayList<>();
        Repusher repusher = new Repusher(hub, Duration.ofSeconds(60), 3, e -> pushed.add(e.path("id").asText()),
                now::get);
        hub.states.put("a", "delivered");
        hub.states.put("b", "delivered");
        repusher.pushed(json("{\"id\":\"a\"}"));
        repusher.pushed(json("{\"id\":\"b\"}"));
        repusher.pushed(json("{\"id\":\"gone\"}"));

        repusher.sweep();
        assertEquals(List.of(), pushed, "nothing is due yet");
        now.set(now.get().plusSeconds(61));
        hub.states.put("b", "replied");
        repusher.sweep();
        assertEquals(List.of("a"), pushed, "open a again; b settled; gone forgotten");
        assertEquals(1, repusher.watching());
        now.set(now.get().plusSeconds(61));
        repusher.sweep();
        now.set(now.get().plusSeconds(61));
        repusher.sweep();
        assertEquals(List.of("a", "a"), pushed, "the third push was the limit");
        assertEquals(0, repusher.watching());
    }
}
