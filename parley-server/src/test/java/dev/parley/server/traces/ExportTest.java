package dev.parley.server.traces;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import dev.parley.trace.export.OtlpSettings;
import dev.parley.trace.testing.OtlpReceiver;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.Span;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static dev.parley.server.it.HubFixture.JSON;
import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The hub exports what it does over OTLP/HTTP to a real receiver that decodes the official
 * protobuf: hub spans for each envelope, an agent span tree per turn, one trace across two
 * agents and their replies, parents linked; and export never holds up a send.
 */
class ExportTest {
    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String CALLER_SPAN = "00f067aa0ba902b7";
    private static final HexFormat HEX = HexFormat.of();

    @TempDir
    Path dataDir;

    @Test
    void aConversationAcrossTwoAgentsAndTheirRepliesIsOneExportedTraceWithItsParentsLinked() throws Exception {
        try (OtlpReceiver receiver = new OtlpReceiver();
             HubFixture hub = HubFixture.start(dataDir, c -> c.withExport(OtlpSettings.fromEnvironment(Map.of(
                     "OTEL_EXPORTER_OTLP_ENDPOINT", receiver.base(), "OTEL_SERVICE_NAME", "parley-test"))))) {
            String lead = hub.createNode("lead", null);
            String w1 = hub.createNodeResp(lead, "w1", "lead").text("token");
            String w2 = hub.createNodeResp(lead, "w2", "lead").text("token");

            String task = send(hub, lead, "w1", "summarize the logs", Optional.of("00-" + TRACE + "-" + CALLER_SPAN + "-01"));
            JsonNode taskEnvelope = hub.inbox(w1).getFirst(); // delivered to w1 by this poll
            String taskSpan = span(taskEnvelope);
            Resp turn1 = record(hub, w1, "t1", task, events(message("e1", "user", "summarize the logs"),
                    toolCall("e2", "c1"), result("e3", "c1"), usage("e4")));
            String turn1Span = turn1.text("spanId");
            String ask = send(hub, w1, "w2", "count the errors", Optional.of("00-" + TRACE + "-" + turn1Span + "-01"));
            String askSpan = span(hub.inbox(w2).getFirst());
            Resp turn2 = record(hub, w2, "t1", ask, events(message("e1", "user", "count the errors"),
                    message("e2", "assistant", "3"), stop("e3")));
            assertStatus(202, hub.post(w2, "/v1/messages/" + ask + "/reply", obj("text", "3")));
            hub.inbox(w1); // w1 takes w2's answer
            assertStatus(200, record(hub, w1, "t1", task, events(message("e5", "assistant", "3 errors"), stop("e6"))));
            assertStatus(202, hub.post(w1, "/v1/messages/" + task + "/reply", obj("text", "3 errors")));
            hub.inbox(lead);

            // 4 envelopes (send, commit, deliver each), 2 turns, 1 tool call
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertEquals(4 * 3 + 2 + 1, traced(receiver).size(),
                    () -> traced(receiver).stream().map(Span::getName).toList().toString()));
            List<Span> spans = traced(receiver);
            assertTrue(spans.stream().allMatch(s -> HEX.formatHex(s.getTraceId().toByteArray()).equals(TRACE)));

            Span taskSend = bySpanId(spans, taskSpan);
            assertEquals("send", taskSend.getName());
            assertEquals(CALLER_SPAN, parentOf(taskSend), "the send follows the caller's span");
            assertEquals("w1", attribute(taskSend, "messaging.destination.name"));
            assertEquals(taskSpan, parentOf(only(spans, "commit", taskSpan)), "commit under its send");
            assertEquals(taskSpan, parentOf(only(spans, "deliver", taskSpan)), "deliver under its send");

            Span agent1 = bySpanId(spans, turn1Span);
            assertEquals("invoke_agent w1", agent1.getName());
            assertEquals(taskSpan, parentOf(agent1), "the turn under the envelope it worked");
            assertEquals("invoke_agent", attribute(agent1, "gen_ai.operation.name"));
            assertEquals("w1", attribute(agent1, "gen_ai.agent.name"));
            assertEquals(TRACE, attribute(agent1, "gen_ai.conversation.id"));
            assertEquals("120", attribute(agent1, "gen_ai.usage.input_tokens"));
            Span tool = spans.stream().filter(s -> s.getName().startsWith("execute_tool")).findFirst().orElseThrow();
            assertEquals("execute_tool Bash", tool.getName());
            assertEquals(turn1Span, parentOf(tool));
            assertEquals("c1", attribute(tool, "gen_ai.tool.call.id"));

            Span askSend = bySpanId(spans, askSpan);
            assertEquals(turn1Span, parentOf(askSend), "w1's question to w2 under w1's turn");
            Span agent2 = bySpanId(spans, turn2.text("spanId"));
            assertEquals(askSpan, parentOf(agent2));
            Span reply2 = spans.stream().filter(s -> s.getName().equals("send") && parentOf(s).equals(askSpan))
                    .findFirst().orElseThrow(() -> new AssertionError("w2's reply continues the trace under the ask"));
            assertEquals("w1", attribute(reply2, "messaging.destination.name"));
            assertTrue(spans.stream().anyMatch(s -> s.getName().equals("send") && parentOf(s).equals(taskSpan)
                    && attribute(s, "messaging.destination.name").equals("lead")), "w1's reply to lead");

            assertEquals("parley-test", receiver.resourceSpans().getFirst().getResource().getAttributesList().stream()
                    .filter(a -> a.getKey().equals("service.name")).findFirst().orElseThrow().getValue().getStringValue());
            await().atMost(Duration.ofSeconds(10)).until(() -> hub.metric("parley_trace_spans_exported_total") >= spans.size());
        }
    }

    @Test
    void anEndpointThatIsDownCostsSendsNothingAndIsCounted() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        try (HubFixture hub = HubFixture.start(dataDir, c -> c.withExport(OtlpSettings.fromEnvironment(Map.of(
                "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:" + closed))))) {
            String lead = hub.createNode("lead", null);
            String w1 = hub.createNodeResp(lead, "w1", "lead").text("token");
            for (int k = 0; k < 50; k++) {
                send(hub, lead, "w1", "m" + k, Optional.empty());
            }
            assertEquals(50, hub.inbox(w1).size());
            await().atMost(Duration.ofSeconds(20)).until(() -> hub.metric("parley_trace_export_failures_total") >= 1);
            assertEquals(0, hub.metric("parley_trace_spans_exported_total"));
        }
    }

    private static List<Span> traced(OtlpReceiver receiver) {
        return receiver.spans().stream().filter(s -> HEX.formatHex(s.getTraceId().toByteArray()).equals(TRACE)).toList();
    }

    private static Span bySpanId(List<Span> spans, String id) {
        return spans.stream().filter(s -> HEX.formatHex(s.getSpanId().toByteArray()).equals(id)).findFirst()
                .orElseThrow(() -> new AssertionError("no span " + id));
    }

    private static Span only(List<Span> spans, String name, String parent) {
        List<Span> found = spans.stream().filter(s -> s.getName().equals(name) && parentOf(s).equals(parent)).toList();
        assertEquals(1, found.size(), () -> name + " spans under " + parent + ": " + found);
        return found.getFirst();
    }

    private static String parentOf(Span span) {
        return HEX.formatHex(span.getParentSpanId().toByteArray());
    }

    private static String attribute(Span span, String key) {
        for (KeyValue kv : span.getAttributesList()) {
            if (kv.getKey().equals(key)) {
                return switch (kv.getValue().getValueCase()) {
                    case STRING_VALUE -> kv.getValue().getStringValue();
                    case INT_VALUE -> Long.toString(kv.getValue().getIntValue());
                    default -> kv.getValue().toString();
                };
            }
        }
        throw new AssertionError("no attribute " + key + " on " + span.getName() + ": " + span.getAttributesList());
    }

    private static String span(JsonNode envelope) {
        return envelope.at("/trace/traceparent").asText().split("-")[2];
    }

    private static String send(HubFixture hub, String token, String to, String text, Optional<String> traceparent) {
        Map<String, String> headers = traceparent.map(t -> Map.of("traceparent", t)).orElse(Map.of());
        Resp r = hub.request("POST", "/v1/messages", token, obj("to", to, "text", text).toString()
                .getBytes(StandardCharsets.UTF_8), headers);
        assertStatus(202, r);
        return r.text("id");
    }

    private static Resp record(HubFixture hub, String token, String turn, String envelope, ArrayNode events) {
        ObjectNode body = obj("envelope", envelope, "adapter", "claude-code");
        body.set("events", events);
        Resp r = hub.post(token, "/v1/traces/" + turn + "/events", body);
        assertStatus(200, r);
        return r;
    }

    private static ArrayNode events(ObjectNode... items) {
        ArrayNode out = JSON.createArrayNode();
        for (ObjectNode item : items) {
            out.add(item);
        }
        return out;
    }

    private static ObjectNode base(String type, String id, String at) {
        return obj("type", type, "id", id, "at", at);
    }

    private static ObjectNode message(String id, String role, String text) {
        return base("message", id, "2026-11-25T09:00:00Z").put("role", role).put("text", text);
    }

    private static ObjectNode toolCall(String id, String callId) {
        ObjectNode call = base("tool_call", id, "2026-11-25T09:00:01Z").put("callId", callId).put("tool", "Bash")
                .put("kind", "execute");
        call.putObject("input").put("command", "grep -c ERROR app.log");
        return call;
    }

    private static ObjectNode result(String id, String callId) {
        return base("tool_result", id, "2026-11-25T09:00:02Z").put("parentId", "e2").put("callId", callId)
                .put("error", false).put("output", "3");
    }

    private static ObjectNode usage(String id) {
        return base("usage", id, "2026-11-25T09:00:03Z").put("model", "claude-sonnet-4-5").put("inputTokens", 120)
                .put("outputTokens", 30);
    }

    private static ObjectNode stop(String id) {
        return base("stop", id, "2026-11-25T09:00:04Z").put("reason", "end_turn");
    }
}
