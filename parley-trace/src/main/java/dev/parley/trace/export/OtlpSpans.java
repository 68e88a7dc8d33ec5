package dev.parley.trace.export;

import dev.parley.core.TraceContext;
import dev.parley.trace.TraceEvent;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.sdk.common.InstrumentationScopeInfo;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.data.StatusData;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static io.opentelemetry.api.common.AttributeKey.doubleKey;
import static io.opentelemetry.api.common.AttributeKey.longKey;
import static io.opentelemetry.api.common.AttributeKey.stringArrayKey;
import static io.opentelemetry.api.common.AttributeKey.stringKey;

/**
 * Turns Parley's records into spans with the OpenTelemetry semantic conventions: hub spans with
 * {@code messaging.*} attributes, agent turns as GenAI {@code invoke_agent} spans with an
 * {@code execute_tool} span per tool call. The one place span names and attribute keys are
 * spelled (docs/telemetry.md lists them).
 */
final class OtlpSpans {
    static final String SCOPE = "dev.parley.trace";

    static final AttributeKey<String> MESSAGING_SYSTEM = stringKey("messaging.system");
    static final AttributeKey<String> MESSAGING_OPERATION_NAME = stringKey("messaging.operation.name");
    static final AttributeKey<String> MESSAGING_OPERATION_TYPE = stringKey("messaging.operation.type");
    static final AttributeKey<String> MESSAGING_MESSAGE_ID = stringKey("messaging.message.id");
    static final AttributeKey<String> MESSAGING_DESTINATION = stringKey("messaging.destination.name");
    static final AttributeKey<String> MESSAGING_CONVERSATION = stringKey("messaging.message.conversation_id");
    static final AttributeKey<String> ENVELOPE_FROM = stringKey("parley.envelope.from");
    static final AttributeKey<String> ENVELOPE_KIND = stringKey("parley.envelope.kind");
    static final AttributeKey<String> ROUTE = stringKey("parley.route");
    static final AttributeKey<Long> ATTEMPT = longKey("parley.attempt");
    static final AttributeKey<String> ERROR_TYPE = stringKey("error.type");

    static final AttributeKey<String> OPERATION = stringKey("gen_ai.operation.name");
    static final AttributeKey<String> PROVIDER = stringKey("gen_ai.provider.name");
    static final AttributeKey<String> AGENT_ID = stringKey("gen_ai.agent.id");
    static final AttributeKey<String> AGENT_NAME = stringKey("gen_ai.agent.name");
    static final AttributeKey<String> CONVERSATION = stringKey("gen_ai.conversation.id");
    static final AttributeKey<String> REQUEST_MODEL = stringKey("gen_ai.request.model");
    static final AttributeKey<String> RESPONSE_MODEL = stringKey("gen_ai.response.model");
    static final AttributeKey<List<String>> FINISH_REASONS = stringArrayKey("gen_ai.response.finish_reasons");
    static final AttributeKey<Long> INPUT_TOKENS = longKey("gen_ai.usage.input_tokens");
    static final AttributeKey<Long> OUTPUT_TOKENS = longKey("gen_ai.usage.output_tokens");
    static final AttributeKey<Long> CACHE_READ_TOKENS = longKey("gen_ai.usage.cache_read.input_tokens");
    static final AttributeKey<Long> CACHE_WRITE_TOKENS = longKey("gen_ai.usage.cache_creation.input_tokens");
    static final AttributeKey<Double> COST_USD = doubleKey("parley.usage.cost_usd");
    static final AttributeKey<String> ADAPTER = stringKey("parley.adapter");
    static final AttributeKey<String> TOOL_NAME = stringKey("gen_ai.tool.name");
    static final AttributeKey<String> TOOL_CALL_ID = stringKey("gen_ai.tool.call.id");
    static final AttributeKey<String> TOOL_ARGUMENTS = stringKey("gen_ai.tool.call.arguments");
    static final AttributeKey<String> TOOL_RESULT = stringKey("gen_ai.tool.call.result");
    static final AttributeKey<String> TOOL_KIND = stringKey("parley.tool.kind");

    static final AttributeKey<String> EVENT_ID = stringKey("parley.event.id");
    static final AttributeKey<String> MESSAGE_ROLE = stringKey("parley.message.role");
    static final AttributeKey<String> MESSAGE_TEXT = stringKey("parley.message.text");
    static final AttributeKey<String> THOUGHT_TEXT = stringKey("parley.thought.text");
    static final AttributeKey<String> PERMISSION_REQUEST_ID = stringKey("parley.permission.request_id");
    static final AttributeKey<String> PERMISSION_VERDICT = stringKey("parley.permission.verdict");
    static final AttributeKey<String> PERMISSION_DECIDED_BY = stringKey("parley.permission.decided_by");
    static final AttributeKey<String> PERMISSION_REASON = stringKey("parley.permission.reason");

    /** Stop reasons that mean the turn did not finish its work. */
    private static final Set<TraceEvent.StopReason> FAILED = Set.of(TraceEvent.StopReason.ERROR,
            TraceEvent.StopReason.TIMEOUT, TraceEvent.StopReason.CANCELLED);
    /** Longest status description; the full text stays in the hub's trace. */
    private static final int MAX_DESCRIPTION = 1024;

    private final Resource resource;
    private final InstrumentationScopeInfo scope = InstrumentationScopeInfo.create(SCOPE);

    OtlpSpans(Resource resource) {
        this.resource = resource;
    }

    List<SpanData> of(Exportable item) {
        return switch (item) {
            case HubSpan hub -> List.of(hub(hub));
            case AgentTurn turn -> turn(turn);
        };
    }

    /** The id of the {@code execute_tool} span of call {@code eventId} in {@code turn}: the same every time. */
    static String toolSpanId(TraceContext turn, String eventId) {
        return turn.child("tool/" + eventId).spanId();
    }

    private SpanData hub(HubSpan span) {
        AttributesBuilder attributes = Attributes.builder()
                .put(MESSAGING_SYSTEM, "parley")
                .put(MESSAGING_OPERATION_NAME, span.operation().wire())
                .put(MESSAGING_MESSAGE_ID, span.envelopeId())
                .put(MESSAGING_DESTINATION, span.to().value())
                .put(ENVELOPE_FROM, span.from().value())
                .put(ENVELOPE_KIND, span.kind())
                .put(ATTEMPT, (long) span.attempt());
        SpanKind kind = switch (span.operation()) {
            case SEND -> {
                attributes.put(MESSAGING_OPERATION_TYPE, "send");
                yield SpanKind.PRODUCER;
            }
            case COMMIT -> SpanKind.INTERNAL;
            case DELIVER -> {
                attributes.put(MESSAGING_OPERATION_TYPE, "receive");
                yield SpanKind.CONSUMER;
            }
        };
        span.route().ifPresent(r -> attributes.put(ROUTE, r.wire()));
        span.conversationId().ifPresent(c -> attributes.put(MESSAGING_CONVERSATION, c));
        span.error().ifPresent(e -> attributes.put(ERROR_TYPE, e));
        StatusData status = span.error().map(e -> StatusData.create(StatusCode.ERROR, e)).orElse(StatusData.unset());
        return new FinishedSpan(span.operation().wire(), kind, context(span.ids().traceId(), span.ids().spanId()),
                parent(span.ids().traceId(), span.ids().parentSpanId()), status, nanos(span.start()),
                nanos(span.end()), attributes.build(), List.of(), resource, scope);
    }

    private List<SpanData> turn(AgentTurn turn) {
        String traceId = turn.ids().traceId();
        String turnSpan = turn.ids().spanId();
        List<TraceEvent> events = turn.events();
        Map<String, TraceEvent> byId = new HashMap<>();
        Map<String, TraceEvent.ToolResult> results = new HashMap<>();
        Optional<TraceEvent.Stop> stop = Optional.empty();
        for (TraceEvent event : events) {
            byId.put(event.id(), event);
            if (event instanceof TraceEvent.ToolResult result) {
                results.putIfAbsent(result.callId(), result);
            } else if (event instanceof TraceEvent.Stop s) {
                stop = Optional.of(s);
            }
        }
        Instant start = events.stream().map(TraceEvent::at).min(Comparator.naturalOrder()).orElseThrow();
        Instant end = events.stream().map(TraceEvent::at).max(Comparator.naturalOrder()).orElseThrow();

        Map<String, List<EventData>> spanEvents = new LinkedHashMap<>();
        long input = 0, output = 0, cacheRead = 0, cacheWrite = 0;
        boolean usageSeen = false;
        Optional<BigDecimal> cost = Optional.empty();
        Optional<String> responseModel = Optional.empty();
        for (TraceEvent event : events) {
            String owner = owner(turn.ids(), event.parentId(), byId);
            switch (event) {
                case TraceEvent.Message m -> add(spanEvents, owner, event, "parley.message",
                        Attributes.of(MESSAGE_ROLE, m.role().wire(), MESSAGE_TEXT, m.text()));
                case TraceEvent.Thought t -> add(spanEvents, owner, event, "parley.thought",
                        Attributes.of(THOUGHT_TEXT, t.text()));
                case TraceEvent.PermissionRequest p -> add(spanEvents, owner, event, "parley.permission.request",
                        Attributes.of(PERMISSION_REQUEST_ID, p.requestId(), TOOL_NAME, p.tool(), TOOL_KIND,
                                p.kind().wire(), TOOL_ARGUMENTS, p.input().toString()));
                case TraceEvent.PermissionResponse p -> add(spanEvents, owner, event, "parley.permission.response",
                        Attributes.of(PERMISSION_REQUEST_ID, p.requestId(), PERMISSION_VERDICT, p.verdict().wire(),
                                PERMISSION_DECIDED_BY, p.decidedBy(), PERMISSION_REASON, p.reason()));
                case TraceEvent.Usage u -> {
                    usageSeen = true;
                    input += u.inputTokens();
                    output += u.outputTokens();
                    cacheRead += u.cacheReadTokens();
                    cacheWrite += u.cacheWriteTokens();
                    if (u.costUsd().isPresent()) {
                        cost = Optional.of(cost.orElse(BigDecimal.ZERO).add(u.costUsd().get()));
                    }
                    if (u.model().isPresent()) {
                        responseModel = u.model();
                    }
                }
                case TraceEvent.ToolCall c -> { }
                case TraceEvent.ToolResult r -> { }
                case TraceEvent.Stop s -> { }
            }
        }

        List<SpanData> spans = new ArrayList<>();
        AttributesBuilder attributes = Attributes.builder()
                .put(OPERATION, "invoke_agent")
                .put(PROVIDER, turn.provider().orElse(turn.adapter()))
                .put(AGENT_ID, turn.agent().value())
                .put(AGENT_NAME, turn.agent().value())
                .put(ADAPTER, turn.adapter());
        turn.conversationId().ifPresent(c -> attributes.put(CONVERSATION, c));
        turn.requestModel().ifPresent(m -> attributes.put(REQUEST_MODEL, m));
        responseModel.ifPresent(m -> attributes.put(RESPONSE_MODEL, m));
        if (usageSeen) {
            attributes.put(INPUT_TOKENS, input).put(OUTPUT_TOKENS, output);
            if (cacheRead > 0) {
                attributes.put(CACHE_READ_TOKENS, cacheRead);
            }
            if (cacheWrite > 0) {
                attributes.put(CACHE_WRITE_TOKENS, cacheWrite);
            }
        }
        cost.ifPresent(c -> attributes.put(COST_USD, c.doubleValue()));
        StatusData status = StatusData.unset();
        if (stop.isPresent()) {
            TraceEvent.Stop s = stop.get();
            attributes.put(FINISH_REASONS, List.of(s.reason().wire()));
            if (FAILED.contains(s.reason())) {
                attributes.put(ERROR_TYPE, s.reason().wire());
                status = StatusData.create(StatusCode.ERROR, described(s.detail().orElse(s.reason().wire())));
            }
        }
        spans.add(new FinishedSpan("invoke_agent " + turn.agent().value(), SpanKind.INTERNAL,
                context(traceId, turnSpan), parent(traceId, turn.ids().parentSpanId()), status, nanos(start),
                nanos(end), attributes.build(), spanEvents.getOrDefault(turnSpan, List.of()), resource, scope));

        for (TraceEvent event : events) {
            if (!(event instanceof TraceEvent.ToolCall call)) {
                continue;
            }
            String spanId = toolSpanId(turn.ids(), call.id());
            TraceEvent.ToolResult result = results.get(call.callId());
            Instant toolEnd = result != null ? result.at() : stop.map(TraceEvent::at).orElse(end);
            AttributesBuilder tool = Attributes.builder()
                    .put(OPERATION, "execute_tool")
                    .put(TOOL_NAME, call.tool())
                    .put(TOOL_CALL_ID, call.callId())
                    .put(TOOL_KIND, call.kind().wire())
                    .put(TOOL_ARGUMENTS, call.input().toString());
            StatusData toolStatus = StatusData.unset();
            if (result != null && result.error()) {
                tool.put(ERROR_TYPE, "tool_error");
                toolStatus = StatusData.create(StatusCode.ERROR, described(result.output()));
            } else if (result != null) {
                tool.put(TOOL_RESULT, result.output());
            }
            spans.add(new FinishedSpan("execute_tool " + call.tool(), SpanKind.INTERNAL, context(traceId, spanId),
                    context(traceId, owner(turn.ids(), call.parentId(), byId)), toolStatus, nanos(call.at()),
                    nanos(toolEnd), tool.build(), spanEvents.getOrDefault(spanId, List.of()), resource, scope));
        }
        return spans;
    }

    /**
     * The span an event belongs to: the tool call it nests under (however deep), else the turn.
     * Parent chains come from the adapter; the walk stops after as many steps as there are events.
     */
    private static String owner(TraceContext turn, Optional<String> parentId, Map<String, TraceEvent> byId) {
        Optional<String> at = parentId;
        for (int steps = 0; at.isPresent() && steps <= byId.size(); steps++) {
            TraceEvent parent = byId.get(at.get());
            if (parent == null) {
                break;
            }
            if (parent instanceof TraceEvent.ToolCall call) {
                return toolSpanId(turn, call.id());
            }
            at = parent.parentId();
        }
        return turn.spanId();
    }

    private static void add(Map<String, List<EventData>> spanEvents, String spanId, TraceEvent event, String name,
                            Attributes attributes) {
        spanEvents.computeIfAbsent(spanId, s -> new ArrayList<>()).add(EventData.create(nanos(event.at()), name,
                attributes.toBuilder().put(EVENT_ID, event.id()).build()));
    }

    private static String described(String text) {
        return text.length() <= MAX_DESCRIPTION ? text : text.substring(0, MAX_DESCRIPTION) + "…";
    }

    private static SpanContext context(String traceId, String spanId) {
        return SpanContext.create(traceId, spanId, TraceFlags.getSampled(), TraceState.getDefault());
    }

    private static SpanContext parent(String traceId, Optional<String> parentSpanId) {
        return parentSpanId.map(p -> context(traceId, p)).orElse(SpanContext.getInvalid());
    }

    private static long nanos(Instant at) {
        return TimeUnit.SECONDS.toNanos(at.getEpochSecond()) + at.getNano();
    }
}
