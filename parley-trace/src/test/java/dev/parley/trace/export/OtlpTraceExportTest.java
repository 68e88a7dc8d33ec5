package dev.parley.trace.export;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.core.Envelope;
import dev.parley.core.NodeId;
import dev.parley.core.Route;
import dev.parley.core.ToolKind;
import dev.parley.core.Trace;
import dev.parley.core.TraceContext;
import dev.parley.trace.TraceBuilder;
import dev.parley.trace.TraceEvent;
import dev.parley.trace.testing.OtlpReceiver;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.Status;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.math.BigDecimal;
import java.net.ServerSocket;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Export against a real OTLP/HTTP receiver that decodes the official protobuf. */
class OtlpTraceExportTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String SEND_1 = "1000000000000001";
    private static final String COMMIT_1 = "1000000000000002";
    private static final String DELIVER_1 = "1000000000000003";
    private static final String TURN_A = "2000000000000001";
    private static final String SEND_2 = "1000000000000004";
    private static final String TURN_B = "2000000000000002";
    private static final String REPLY = "1000000000000005";
    private static final Instant T0 = Instant.parse("2026-11-25T09:00:00Z");
    private static final NodeId ALICE = NodeId.of("alice");
    private static final NodeId AGENT_A = NodeId.of("agent-a");
    private static final NodeId AGENT_B = NodeId.of("agent-b");
    /** A Langfuse key pair whose base64 has a {@code +} and padding, as real ones do. */
    private static final String BASIC = "cGstbGYtfn5+OnNrLWxmLX5+fg==";

    @Test
    void aConversationAcrossTwoAgentsAndAReplyIsOneTraceAtLangfusesPathWithBasicAuth() throws IOException {
        try (OtlpReceiver receiver = new OtlpReceiver()) {
            OtlpTraceExport export = OtlpTraceExport.start(OtlpSettings.fromEnvironment(Map.of(
                    "OTEL_EXPORTER_OTLP_ENDPOINT", receiver.base() + "/api/public/otel",
                    "OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Basic%20" + BASIC,
                    "OTEL_SERVICE_NAME", "parley-test")));
            Envelope first = new Envelope("env-1", 1, ALICE, AGENT_A, "chat", Optional.of("summarize the repo"),
                    Optional.empty(), Optional.empty(), Optional.of("thread-7"), Optional.empty(), Optional.empty(),
                    Map.of(), T0, new Trace(1, Route.GRANT, "v3"));
            List<TraceEvent> turnA = turnA();
            List<TraceEvent> turnB = turnB();
            List<Exportable> records = List.of(
                    HubSpan.of(HubSpan.Operation.SEND, ids(SEND_1, null), T0, T0.plusMillis(3), first),
                    HubSpan.of(HubSpan.Operation.COMMIT, ids(COMMIT_1, SEND_1), T0.plusMillis(1), T0.plusMillis(2), first),
                    HubSpan.of(HubSpan.Operation.DELIVER, ids(DELIVER_1, SEND_1), T0.plusMillis(4), T0.plusMillis(5), first),
                    new AgentTurn(ids(TURN_A, SEND_1), AGENT_A, Optional.of("thread-7"), "claude-code",
                            Optional.of("anthropic"), Optional.of("claude-sonnet-4-5"), turnA),
                    new HubSpan(HubSpan.Operation.SEND, ids(SEND_2, TURN_A), T0.plusSeconds(20), T0.plusSeconds(21),
                            "env-2", AGENT_A, AGENT_B, "chat", Optional.of(Route.INTRA_GROUP), 1,
                            Optional.of("thread-7"), Optional.empty()),
                    new AgentTurn(ids(TURN_B, SEND_2), AGENT_B, Optional.of("thread-7"), "command", Optional.empty(),
                            Optional.empty(), turnB),
                    new HubSpan(HubSpan.Operation.SEND, ids(REPLY, TURN_B), T0.plusSeconds(60), T0.plusSeconds(61),
                            "env-3", AGENT_B, AGENT_A, "chat", Optional.of(Route.REPLY), 1, Optional.of("thread-7"),
                            Optional.empty()));
            records.forEach(r -> assertTrue(export.offer(r)));
            assertTrue(export.close(Duration.ofSeconds(30)), "the queue drains on close");

            assertEquals(10, export.exported());
            assertEquals(0, export.dropped());
            assertEquals(0, export.failures());
            assertFalse(receiver.requests.isEmpty());
            for (OtlpReceiver.Received request : receiver.requests) {
                assertEquals("/api/public/otel/v1/traces", request.path());
                assertEquals("Basic " + BASIC, request.authorization());
                assertEquals("application/x-protobuf", request.contentType());
            }
            receiver.resourceSpans().forEach(rs -> {
                Map<String, Object> resource = values(rs.getResource().getAttributesList());
                assertEquals("parley-test", resource.get("service.name"));
                assertEquals("opentelemetry", resource.get("telemetry.sdk.name"));
            });
            receiver.scopeSpans().forEach(ss -> assertEquals("dev.parley.trace", ss.getScope().getName()));

            Map<String, Span> spans = receiver.spans().stream()
                    .collect(Collectors.toMap(s -> hex(s.getSpanId().toByteArray()), Function.identity()));
            assertEquals(10, spans.size());
            spans.values().forEach(s -> assertEquals(TRACE, hex(s.getTraceId().toByteArray()), s.getName()));

            String toolA = OtlpSpans.toolSpanId(ids(TURN_A, null), "e3");
            String readB = OtlpSpans.toolSpanId(ids(TURN_B, null), "e2");
            String grepB = OtlpSpans.toolSpanId(ids(TURN_B, null), "e4");
            Map<String, String> parents = new LinkedHashMap<>();
            spans.forEach((id, s) -> parents.put(id, hex(s.getParentSpanId().toByteArray())));
            assertEquals(Map.of(SEND_1, "", COMMIT_1, SEND_1, DELIVER_1, SEND_1, TURN_A, SEND_1, toolA, TURN_A,
                    SEND_2, TURN_A, TURN_B, SEND_2, readB, TURN_B, grepB, TURN_B, REPLY, TURN_B), parents);

            Span send = spans.get(SEND_1);
            assertEquals("send", send.getName());
            assertEquals(Span.SpanKind.SPAN_KIND_PRODUCER, send.getKind());
            assertEquals(nanos(T0), send.getStartTimeUnixNano());
            assertEquals(nanos(T0.plusMillis(3)), send.getEndTimeUnixNano());
            assertEquals(Map.of("messaging.system", "parley", "messaging.operation.name", "send",
                    "messaging.operation.type", "send", "messaging.message.id", "env-1",
                    "messaging.destination.name", "agent-a", "messaging.message.conversation_id", "thread-7",
                    "parley.envelope.from", "alice", "parley.envelope.kind", "chat", "parley.route", "grant",
                    "parley.attempt", 1L), values(send.getAttributesList()));
            assertEquals("commit", spans.get(COMMIT_1).getName());
            assertEquals(Span.SpanKind.SPAN_KIND_CONSUMER, spans.get(DELIVER_1).getKind());
            assertEquals("reply", values(spans.get(REPLY).getAttributesList()).get("parley.route"));

            Span agentA = spans.get(TURN_A);
            assertEquals("invoke_agent agent-a", agentA.getName());
            assertEquals(Span.SpanKind.SPAN_KIND_INTERNAL, agentA.getKind());
            assertEquals(nanos(turnA.getFirst().at()), agentA.getStartTimeUnixNano());
            assertEquals(nanos(turnA.getLast().at()), agentA.getEndTimeUnixNano());
            Map<String, Object> a = values(agentA.getAttributesList());
            assertEquals("invoke_agent", a.get("gen_ai.operation.name"));
            assertEquals("anthropic", a.get("gen_ai.provider.name"));
            assertEquals("agent-a", a.get("gen_ai.agent.name"));
            assertEquals("agent-a", a.get("gen_ai.agent.id"));
            assertEquals("thread-7", a.get("gen_ai.conversation.id"));
            assertEquals("claude-sonnet-4-5", a.get("gen_ai.request.model"));
            assertEquals("claude-sonnet-4-5-20250929", a.get("gen_ai.response.model"));
            assertEquals(150L, a.get("gen_ai.usage.input_tokens"));
            assertEquals(30L, a.get("gen_ai.usage.output_tokens"));
            assertEquals(30L, a.get("gen_ai.usage.cache_read.input_tokens"));
            assertEquals(5L, a.get("gen_ai.usage.cache_creation.input_tokens"));
            assertEquals(0.015, (Double) a.get("parley.usage.cost_usd"), 1e-12);
            assertEquals(List.of("end_turn"), a.get("gen_ai.response.finish_reasons"));
            assertEquals("claude-code", a.get("parley.adapter"));
            assertEquals(Status.StatusCode.STATUS_CODE_UNSET, agentA.getStatus().getCode());
            assertEquals(List.of("parley.message", "parley.thought", "parley.message"),
                    agentA.getEventsList().stream().map(Span.Event::getName).toList());
            Map<String, Object> said = values(agentA.getEvents(0).getAttributesList());
            assertEquals(Map.of("parley.message.role", "user", "parley.message.text", "summarize the repo",
                    "parley.event.id", "e1"), said);
            assertEquals(nanos(turnA.getFirst().at()), agentA.getEvents(0).getTimeUnixNano());

            Span bash = spans.get(toolA);
            assertEquals("execute_tool Bash", bash.getName());
            assertEquals(nanos(turnA.get(2).at()), bash.getStartTimeUnixNano());
            assertEquals(nanos(turnA.get(5).at()), bash.getEndTimeUnixNano());
            assertEquals(Map.of("gen_ai.operation.name", "execute_tool", "gen_ai.tool.name", "Bash",
                    "gen_ai.tool.call.id", "call-1", "parley.tool.kind", "execute",
                    "gen_ai.tool.call.arguments", "{\"command\":\"ls\"}", "gen_ai.tool.call.result", "README.md\nsrc"),
                    values(bash.getAttributesList()));
            assertEquals(List.of("parley.permission.request", "parley.permission.response"),
                    bash.getEventsList().stream().map(Span.Event::getName).toList());
            assertEquals(Map.of("parley.permission.request_id", "req-1", "parley.permission.verdict", "allow",
                    "parley.permission.decided_by", "policy", "parley.permission.reason", "rule allow-ls",
                    "parley.event.id", "e5"), values(bash.getEvents(1).getAttributesList()));

            Span agentB = spans.get(TURN_B);
            Map<String, Object> b = values(agentB.getAttributesList());
            assertEquals("command", b.get("gen_ai.provider.name"), "the adapter names the provider when none is known");
            assertFalse(b.containsKey("gen_ai.usage.input_tokens"), "no usage, no token counts");
            assertEquals("error", b.get("error.type"));
            assertEquals(Status.StatusCode.STATUS_CODE_ERROR, agentB.getStatus().getCode());
            assertEquals("gave up", agentB.getStatus().getMessage());
            Span read = spans.get(readB);
            assertEquals(Status.StatusCode.STATUS_CODE_ERROR, read.getStatus().getCode());
            assertEquals("permission denied", read.getStatus().getMessage());
            assertEquals("tool_error", values(read.getAttributesList()).get("error.type"));
            assertFalse(values(read.getAttributesList()).containsKey("gen_ai.tool.call.result"));
            Span grep = spans.get(grepB);
            assertEquals(nanos(turnB.getLast().at()), grep.getEndTimeUnixNano(), "an unanswered call ends with the turn");
            assertEquals(Status.StatusCode.STATUS_CODE_UNSET, grep.getStatus().getCode());
        }
    }

    @Test
    void toolSpanIdsAreTheSameEveryTimeAndDifferPerCall() {
        assertEquals(OtlpSpans.toolSpanId(ids(TURN_A, null), "e3"), OtlpSpans.toolSpanId(ids(TURN_A, null), "e3"));
        assertNotEquals(OtlpSpans.toolSpanId(ids(TURN_A, null), "e3"), OtlpSpans.toolSpanId(ids(TURN_A, null), "e4"));
        assertNotEquals(OtlpSpans.toolSpanId(ids(TURN_A, null), "e3"), OtlpSpans.toolSpanId(ids(TURN_B, null), "e3"));
    }

    @Test
    void aDeadEndpointCountsFailuresAndOfferNeitherBlocksNorThrows() throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort(); // closed again: connections to it are refused
        }
        OtlpTraceExport export = OtlpTraceExport.start(OtlpSettings.fromEnvironment(Map.of(
                "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:" + port,
                "OTEL_EXPORTER_OTLP_TIMEOUT", "1000")));
        for (int i = 0; i < 3; i++) {
            assertTrue(export.offer(hubSpan(i)));
        }
        assertFalse(export.offer(null), "null is dropped, not thrown");
        await().atMost(30, TimeUnit.SECONDS).until(() -> export.failures() >= 1);
        assertEquals(0, export.exported());
        assertEquals(1, export.dropped());
        export.close(Duration.ofSeconds(10));
        assertFalse(export.offer(hubSpan(99)), "after close, offers are dropped");
        assertEquals(2, export.dropped());
    }

    @Test
    void aStalledReceiverFillsTheQueueAndFurtherOffersAreDroppedAndCounted() throws Exception {
        try (OtlpReceiver receiver = new OtlpReceiver().hold()) {
            OtlpTraceExport export = OtlpTraceExport.start(OtlpSettings.fromEnvironment(Map.of(
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", receiver.base() + "/v1/traces",
                    "OTEL_EXPORTER_OTLP_TIMEOUT", "0")));
            assertTrue(export.offer(hubSpan(0)));
            receiver.arrived.await(); // the exporter's one thread now waits on a receiver that does not answer
            int offered = 10_000;
            int accepted = 0;
            for (int i = 1; i <= offered; i++) {
                if (export.offer(hubSpan(i))) {
                    accepted++;
                }
            }
            assertEquals(OtlpTraceExport.QUEUE_CAPACITY, accepted);
            assertEquals(offered - OtlpTraceExport.QUEUE_CAPACITY, export.dropped());

            receiver.release();
            assertTrue(export.close(Duration.ofSeconds(60)));
            assertEquals(1 + OtlpTraceExport.QUEUE_CAPACITY, export.exported());
            assertEquals(1 + OtlpTraceExport.QUEUE_CAPACITY, receiver.spans().size());
            assertTrue(receiver.requests.stream().allMatch(r -> r.body().getResourceSpans(0).getScopeSpans(0)
                    .getSpansCount() <= OtlpTraceExport.MAX_BATCH));
            assertEquals(0, export.failures());
        }
    }

    /** Agent A: asks, thinks, runs one allowed tool, spends tokens twice, answers. */
    private static List<TraceEvent> turnA() {
        TraceBuilder turn = new TraceBuilder(ticking(T0.plusSeconds(1)), e -> { });
        turn.message(TraceEvent.Role.USER, "summarize the repo");
        turn.thought("look at the files");
        turn.toolCall("call-1", "Bash", ToolKind.EXECUTE, JSON.createObjectNode().put("command", "ls"));
        turn.permissionRequest("req-1", "Bash", ToolKind.EXECUTE, JSON.createObjectNode().put("command", "ls"),
                Optional.of("call-1"));
        turn.permissionResponse("req-1", TraceEvent.Verdict.ALLOW, "policy", "rule allow-ls");
        turn.toolResult("call-1", false, "README.md\nsrc");
        turn.usage(Optional.of("claude-sonnet-4-5-20250929"), 100, 20, 30, 5, Optional.of(new BigDecimal("0.01")));
        turn.usage(Optional.of("claude-sonnet-4-5-20250929"), 50, 10, 0, 0, Optional.of(new BigDecimal("0.005")));
        turn.message(TraceEvent.Role.ASSISTANT, "asking agent-b");
        turn.stop(TraceEvent.StopReason.END_TURN, Optional.empty());
        return turn.events();
    }

    /** Agent B: a tool fails, another is never answered, the turn gives up. */
    private static List<TraceEvent> turnB() {
        TraceBuilder turn = new TraceBuilder(ticking(T0.plusSeconds(30)), e -> { });
        turn.message(TraceEvent.Role.USER, "check the secrets");
        turn.toolCall("call-9", "Read", ToolKind.READ, JSON.createObjectNode().put("path", "/etc/shadow"));
        turn.toolResult("call-9", true, "permission denied");
        turn.toolCall("call-10", "Grep", ToolKind.SEARCH, JSON.createObjectNode().put("pattern", "key"));
        turn.stop(TraceEvent.StopReason.ERROR, Optional.of("gave up"));
        return turn.events();
    }

    private static HubSpan hubSpan(int n) {
        return new HubSpan(HubSpan.Operation.SEND, ids(String.format("%016x", n + 1), null), T0, T0.plusMillis(1),
                "env-" + n, ALICE, AGENT_A, "chat", Optional.of(Route.GRANT), 1, Optional.empty(), Optional.empty());
    }

    private static TraceContext ids(String spanId, String parent) {
        return new TraceContext(TRACE, spanId, Optional.ofNullable(parent));
    }

    /** A clock one second further on at every reading, so each event has its own time. */
    private static Clock ticking(Instant start) {
        return new Clock() {
            private Instant now = start;

            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                Instant at = now;
                now = now.plusSeconds(1);
                return at;
            }
        };
    }

    private static Map<String, Object> values(List<KeyValue> attributes) {
        Map<String, Object> values = new LinkedHashMap<>();
        attributes.forEach(kv -> values.put(kv.getKey(), value(kv.getValue())));
        return values;
    }

    private static Object value(AnyValue value) {
        return switch (value.getValueCase()) {
            case STRING_VALUE -> value.getStringValue();
            case INT_VALUE -> value.getIntValue();
            case DOUBLE_VALUE -> value.getDoubleValue();
            case BOOL_VALUE -> value.getBoolValue();
            case ARRAY_VALUE -> value.getArrayValue().getValuesList().stream().map(OtlpTraceExportTest::value).toList();
            default -> value.toString();
        };
    }

    private static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }

    private static long nanos(Instant at) {
        return TimeUnit.SECONDS.toNanos(at.getEpochSecond()) + at.getNano();
    }
}
