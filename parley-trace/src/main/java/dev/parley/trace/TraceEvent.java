package dev.parley.trace;

import dev.parley.core.ToolKind;
import com.fasterxml.jackson.databind.JsonNode;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * One event of an agent turn. Every event has an id unique in its turn, the id of the event it
 * nests under (none for the turn's top level) and the time it happened; its type's fields are
 * checked here, so an event that exists is a valid one. {@link TraceBuilder} makes them while a
 * turn runs and {@link TraceEvents} reads and writes them; nothing else shapes an event.
 */
public sealed interface TraceEvent {
    /** Longest text an event keeps (a message, a thought, a tool's output); longer is cut and marked. */
    int MAX_TEXT = 32 * 1024;
    Pattern ID = Pattern.compile("^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$");

    String id();

    Optional<String> parentId();

    Instant at();

    /** The type's wire name. */
    default String type() {
        return Type.of(this).wire();
    }

    /** The closed set of event types, with their wire names. */
    enum Type {
        MESSAGE, THOUGHT, TOOL_CALL, TOOL_RESULT, USAGE, PERMISSION_REQUEST, PERMISSION_RESPONSE, STOP;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static Optional<Type> parse(String wire) {
            return Arrays.stream(values()).filter(t -> t.wire().equals(wire)).findFirst();
        }

        static Type of(TraceEvent event) {
            return switch (event) {
                case Message m -> MESSAGE;
                case Thought t -> THOUGHT;
                case ToolCall c -> TOOL_CALL;
                case ToolResult r -> TOOL_RESULT;
                case Usage u -> USAGE;
                case PermissionRequest p -> PERMISSION_REQUEST;
                case PermissionResponse p -> PERMISSION_RESPONSE;
                case Stop s -> STOP;
            };
        }
    }

    /** Who said a message: the one the agent works for (the envelope), or the agent. */
    enum Role {
        USER, ASSISTANT, SYSTEM;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What a permission request came to. */
    enum Verdict {
        ALLOW, DENY;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Why a turn ended. */
    enum StopReason {
        END_TURN, MAX_TOKENS, TIMEOUT, CANCELLED, ERROR;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    record Message(String id, Optional<String> parentId, Instant at, Role role, String text) implements TraceEvent {
        public Message {
            check(id, parentId, at);
            text = cut(require("text", text));
        }
    }

    record Thought(String id, Optional<String> parentId, Instant at, String text) implements TraceEvent {
        public Thought {
            check(id, parentId, at);
            text = cut(require("text", text));
        }
    }

    /** A tool the agent called: its name as the adapter knows it, its kind, and its input (a JSON object). */
    record ToolCall(String id, Optional<String> parentId, Instant at, String callId, String tool, ToolKind kind,
                    JsonNode input) implements TraceEvent {
        public ToolCall {
            check(id, parentId, at);
            requireName("callId", callId);
            requireName("tool", tool);
            if (input == null || !input.isObject()) {
                throw new TraceFormatException("tool_call input: a JSON object is required");
            }
            input = input.deepCopy();
        }
    }

    /** What a call came to; nests under its {@link ToolCall}. */
    record ToolResult(String id, Optional<String> parentId, Instant at, String callId, boolean error, String output)
            implements TraceEvent {
        public ToolResult {
            check(id, parentId, at);
            requireName("callId", callId);
            output = cut(require("output", output));
        }
    }

    /** Tokens and cost of the model calls so far in the turn (or of one call). */
    record Usage(String id, Optional<String> parentId, Instant at, Optional<String> model, long inputTokens,
                 long outputTokens, long cacheReadTokens, long cacheWriteTokens, Optional<BigDecimal> costUsd)
            implements TraceEvent {
        public Usage {
            check(id, parentId, at);
            model.ifPresent(m -> requireName("model", m));
            if (inputTokens < 0 || outputTokens < 0 || cacheReadTokens < 0 || cacheWriteTokens < 0) {
                throw new TraceFormatException("usage: token counts are zero or more");
            }
            if (costUsd.isPresent() && costUsd.get().signum() < 0) {
                throw new TraceFormatException("usage costUsd: zero or more");
            }
        }
    }

    /** The agent asks whether it may call a tool; nests under the call when there is one. */
    record PermissionRequest(String id, Optional<String> parentId, Instant at, String requestId, String tool,
                             ToolKind kind, JsonNode input) implements TraceEvent {
        public PermissionRequest {
            check(id, parentId, at);
            requireName("requestId", requestId);
            requireName("tool", tool);
            if (input == null || !input.isObject()) {
                throw new TraceFormatException("permission_request input: a JSON object is required");
            }
            input = input.deepCopy();
        }
    }

    /** The answer to a {@link PermissionRequest}: the verdict, who or what decided, and why. */
    record PermissionResponse(String id, Optional<String> parentId, Instant at, String requestId, Verdict verdict,
                              String decidedBy, String reason) implements TraceEvent {
        public PermissionResponse {
            check(id, parentId, at);
            requireName("requestId", requestId);
            requireName("decidedBy", decidedBy);
            reason = cut(require("reason", reason));
        }
    }

    /** The turn ended; the last event of a turn. */
    record Stop(String id, Optional<String> parentId, Instant at, StopReason reason, Optional<String> detail)
            implements TraceEvent {
        public Stop {
            check(id, parentId, at);
            detail = detail.map(TraceEvent::cut);
        }
    }

    private static void check(String id, Optional<String> parentId, Instant at) {
        if (id == null || !ID.matcher(id).matches()) {
            throw new TraceFormatException("id: 1 to 128 letters, digits, . _ : - (got " + quoted(id) + ")");
        }
        if (parentId == null || parentId.isPresent() && !ID.matcher(parentId.get()).matches()) {
            throw new TraceFormatException("parentId: an event id, or absent at the turn's top level");
        }
        if (parentId.isPresent() && parentId.get().equals(id)) {
            throw new TraceFormatException("parentId: an event does not nest under itself");
        }
        if (at == null) {
            throw new TraceFormatException("at: the time of the event is required (RFC 3339)");
        }
    }

    private static String require(String field, String value) {
        if (value == null) {
            throw new TraceFormatException(field + ": required");
        }
        return value;
    }

    private static void requireName(String field, String value) {
        if (value == null || value.isBlank() || value.length() > 256) {
            throw new TraceFormatException(field + ": 1 to 256 characters");
        }
    }

    /** Text past {@link #MAX_TEXT} characters is cut and marked, so a huge output cannot fill the store. */
    static String cut(String text) {
        return text.length() <= MAX_TEXT ? text : text.substring(0, MAX_TEXT) + "… [cut at " + MAX_TEXT + " characters]";
    }

    private static String quoted(String value) {
        return value == null ? "nothing" : "\"" + (value.length() > 40 ? value.substring(0, 40) + "…" : value) + "\"";
    }
}
