package dev.parley.trace;

import dev.parley.core.ToolKind;
import dev.parley.core.Turn;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * The wire form of {@link TraceEvent}: {@code {"type", "id", "parentId", "at", …fields}} with
 * snake_case type names and camelCase fields. The one reader and writer of events; reading
 * refuses any field the type does not have, so what is stored is exactly the contract.
 */
public final class TraceEvents {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> COMMON = Set.of("type", "id", "parentId", "at");
    private static final Instant EARLIEST = Instant.EPOCH;
    private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999Z");

    private TraceEvents() {
    }

    public static ObjectNode toJson(TraceEvent event) {
        ObjectNode out = JSON.createObjectNode();
        out.put("type", event.type());
        out.put("id", event.id());
        event.parentId().ifPresent(p -> out.put("parentId", p));
        out.put("at", event.at().toString());
        switch (event) {
            case TraceEvent.Message m -> out.put("role", m.role().wire()).put("text", m.text());
            case TraceEvent.Thought t -> out.put("text", t.text());
            case TraceEvent.ToolCall c -> {
                out.put("callId", c.callId()).put("tool", c.tool()).put("kind", c.kind().wire());
                out.set("input", c.input().deepCopy());
            }
            case TraceEvent.ToolResult r -> out.put("callId", r.callId()).put("error", r.error()).put("output", r.output());
            case TraceEvent.Usage u -> {
                u.model().ifPresent(m -> out.put("model", m));
                out.put("inputTokens", u.inputTokens()).put("outputTokens", u.outputTokens())
                        .put("cacheReadTokens", u.cacheReadTokens()).put("cacheWriteTokens", u.cacheWriteTokens());
                u.costUsd().ifPresent(c -> out.put("costUsd", c));
            }
            case TraceEvent.PermissionRequest p -> {
                out.put("requestId", p.requestId()).put("tool", p.tool()).put("kind", p.kind().wire());
                out.set("input", p.input().deepCopy());
            }
            case TraceEvent.PermissionResponse p -> out.put("requestId", p.requestId()).put("verdict", p.verdict().wire())
                    .put("decidedBy", p.decidedBy()).put("reason", p.reason());
            case TraceEvent.Stop s -> {
                out.put("reason", s.reason().wire());
                s.detail().ifPresent(d -> out.put("detail", d));
            }
        }
        return out;
    }

    /** The event as the hub keeps it in its turn: canonical JSON. */
    public static Turn.Event stored(TraceEvent event) {
        return new Turn.Event(event.id(), event.type(), event.at(), toJson(event).toString());
    }

    /** Reads one event; a {@link TraceFormatException} says what is wrong with it. */
    public static TraceEvent fromJson(JsonNode in) {
        if (in == null || !in.isObject()) {
            throw new TraceFormatException("an event is a JSON object");
        }
        String typeName = text(in, "type");
        TraceEvent.Type type = TraceEvent.Type.parse(typeName).orElseThrow(() -> new TraceFormatException(
                "type: one of message, thought, tool_call, tool_result, usage, permission_request, "
                        + "permission_response, stop (got \"" + typeName + "\")"));
        String id = text(in, "id");
        Optional<String> parent = optionalText(in, "parentId");
        Instant at = instant(in);
        return switch (type) {
            case MESSAGE -> only(in, Set.of("role", "text"), new TraceEvent.Message(id, parent, at,
                    choice(in, "role", TraceEvent.Role.values(), TraceEvent.Role::wire), text(in, "text")));
            case THOUGHT -> only(in, Set.of("text"), new TraceEvent.Thought(id, parent, at, text(in, "text")));
            case TOOL_CALL -> only(in, Set.of("callId", "tool", "kind", "input"), new TraceEvent.ToolCall(id, parent,
                    at, text(in, "callId"), text(in, "tool"), kind(in), in.get("input")));
            case TOOL_RESULT -> only(in, Set.of("callId", "error", "output"), new TraceEvent.ToolResult(id, parent, at,
                    text(in, "callId"), bool(in, "error"), text(in, "output")));
            case USAGE -> only(in, Set.of("model", "inputTokens", "outputTokens", "cacheReadTokens",
                    "cacheWriteTokens", "costUsd"), new TraceEvent.Usage(id, parent, at, optionalText(in, "model"),
                    count(in, "inputTokens"), count(in, "outputTokens"), count(in, "cacheReadTokens"),
                    count(in, "cacheWriteTokens"), cost(in)));
            case PERMISSION_REQUEST -> only(in, Set.of("requestId", "tool", "kind", "input"),
                    new TraceEvent.PermissionRequest(id, parent, at, text(in, "requestId"), text(in, "tool"), kind(in),
                            in.get("input")));
            case PERMISSION_RESPONSE -> only(in, Set.of("requestId", "verdict", "decidedBy", "reason"),
                    new TraceEvent.PermissionResponse(id, parent, at, text(in, "requestId"),
                            choice(in, "verdict", TraceEvent.Verdict.values(), TraceEvent.Verdict::wire),
                            text(in, "decidedBy"), text(in, "reason")));
            case STOP -> only(in, Set.of("reason", "detail"), new TraceEvent.Stop(id, parent, at,
                    choice(in, "reason", TraceEvent.StopReason.values(), TraceEvent.StopReason::wire),
                    optionalText(in, "detail")));
        };
    }

    private static TraceEvent only(JsonNode in, Set<String> fields, TraceEvent event) {
        in.fieldNames().forEachRemaining(name -> {
            if (!COMMON.contains(name) && !fields.contains(name)) {
                throw new TraceFormatException(event.type() + ": no field " + name + " (it has "
                        + String.join(", ", fields.stream().sorted().toList()) + ")");
            }
        });
        return event;
    }

    private static String text(JsonNode in, String field) {
        JsonNode value = in.get(field);
        if (value == null || !value.isTextual()) {
            throw new TraceFormatException(field + ": a string is required");
        }
        return value.textValue();
    }

    private static Optional<String> optionalText(JsonNode in, String field) {
        JsonNode value = in.get(field);
        if (value == null || value.isNull()) {
            return Optional.empty();
        }
        if (!value.isTextual()) {
            throw new TraceFormatException(field + ": a string when present");
        }
        return Optional.of(value.textValue());
    }

    private static boolean bool(JsonNode in, String field) {
        JsonNode value = in.get(field);
        if (value == null || !value.isBoolean()) {
            throw new TraceFormatException(field + ": true or false");
        }
        return value.booleanValue();
    }

    private static long count(JsonNode in, String field) {
        JsonNode value = in.get(field);
        if (value == null || value.isNull()) {
            return 0;
        }
        if (!value.canConvertToExactIntegral() || !value.canConvertToLong()) {
            throw new TraceFormatException(field + ": a whole number");
        }
        return value.longValue();
    }

    private static Optional<BigDecimal> cost(JsonNode in) {
        JsonNode value = in.get("costUsd");
        if (value == null || value.isNull()) {
            return Optional.empty();
        }
        if (!value.isNumber() || value.isFloatingPointNumber() && !Double.isFinite(value.doubleValue())) {
            throw new TraceFormatException("costUsd: a finite number");
        }
        return Optional.of(value.decimalValue());
    }

    private static Instant instant(JsonNode in) {
        String at = text(in, "at");
        try {
            Instant parsed = java.time.OffsetDateTime.parse(at).toInstant();
            if (parsed.isBefore(EARLIEST) || parsed.isAfter(LATEST)) {
                throw new TraceFormatException("at: a time between 1970 and 9999 (got \"" + at + "\")");
            }
            return parsed;
        } catch (DateTimeParseException e) {
            throw new TraceFormatException("at: an RFC 3339 time such as 2026-11-25T09:00:00Z (got \"" + at + "\")");
        }
    }

    private static ToolKind kind(JsonNode in) {
        return choice(in, "kind", ToolKind.values(), ToolKind::wire);
    }

    private static <E extends Enum<E>> E choice(JsonNode in, String field, E[] values, Function<E, String> wire) {
        String given = text(in, field);
        for (E value : values) {
            if (wire.apply(value).equals(given)) {
                return value;
            }
        }
        throw new TraceFormatException(field + ": one of " + String.join(", ",
                java.util.Arrays.stream(values).map(wire).toList()) + " (got \"" + given + "\")");
    }
}
