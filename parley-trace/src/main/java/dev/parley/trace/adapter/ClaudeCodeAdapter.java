package dev.parley.trace.adapter;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.core.ToolKind;
import dev.parley.trace.ToolKinds;
import dev.parley.trace.TraceBuilder;
import dev.parley.trace.TraceEvent;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads the lines of one Claude Code session ({@code claude -p --output-format stream-json
 * --verbose}) into a turn's trace: assistant text and thinking, each {@code tool_use} as a tool
 * call and each {@code tool_result} under it, and at the {@code result} line the turn's usage, a
 * permission request and its denial for each of {@code permission_denials}, and the stop.
 * A line it does not know (another type, a warning that is not JSON) is skipped: a newer Claude
 * Code adds lines, and a trace with a gap is better than a turn that fails. The reader of the
 * session's stdout and the turn that gives up on it may call it from two threads.
 */
public final class ClaudeCodeAdapter {
    /** Who decides a denial Claude Code reports: its own permission mode and allowed tools. */
    public static final String DECIDED_BY = "claude-code";
    /** The result subtypes of a session that ran into a limit it was given, rather than failed. */
    private static final Set<String> LIMITS = Set.of("error_max_turns", "error_max_budget_usd");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final TraceBuilder trace;
    private final Map<String, ToolKind> overrides;
    /** The usage of each model call, by message id: stream-json repeats it on every block of that message. */
    private final Map<String, JsonNode> calls = new LinkedHashMap<>();
    private Optional<String> model = Optional.empty();
    private String lastStopReason = "";
    private JsonNode result;

    public ClaudeCodeAdapter(TraceBuilder trace, Map<String, ToolKind> overrides) {
        this.trace = trace;
        this.overrides = Map.copyOf(overrides);
    }

    /** The user message the session was given (stream-json does not repeat it). */
    public synchronized void prompt(String text) {
        trace.message(TraceEvent.Role.USER, text);
    }

    /** Reads one line of the session's stdout; the events it made (none for a line skipped, or after the stop). */
    public synchronized List<TraceEvent> line(String line) {
        List<TraceEvent> made = new ArrayList<>();
        if (trace.stopped() || line.isBlank()) {
            return made;
        }
        JsonNode event;
        try {
            event = JSON.readTree(line);
        } catch (JsonProcessingException e) {
            return made; // not a stream-json line (a warning on stdout)
        }
        if (event == null || !event.isObject()) {
            return made;
        }
        switch (event.path("type").asText()) {
            case "system" -> {
                if ("init".equals(event.path("subtype").asText())) {
                    model = name(event.path("model"));
                }
            }
            case "assistant" -> assistant(event.path("message"), made);
            case "user" -> toolResults(event.path("message").path("content"), made);
            case "result" -> result(event, made);
            default -> { } // stream_event, control lines, rate-limit notices: not part of the trace
        }
        return made;
    }

    /** The session's result line, once read. */
    public synchronized Optional<JsonNode> result() {
        return Optional.ofNullable(result);
    }

    /**
     * Ends a turn whose session gave no result (it timed out, crashed, or could not start): the
     * tokens its model calls reported, then the stop. Nothing when the result line ended it.
     */
    public synchronized void end(TraceEvent.StopReason reason, String detail) {
        if (trace.stopped()) {
            return;
        }
        if (!calls.isEmpty()) {
            long[] sum = new long[4];
            calls.values().forEach(usage -> {
                sum[0] += count(usage, "input_tokens");
                sum[1] += count(usage, "output_tokens");
                sum[2] += count(usage, "cache_read_input_tokens");
                sum[3] += count(usage, "cache_creation_input_tokens");
            });
            trace.usage(model, sum[0], sum[1], sum[2], sum[3], Optional.empty());
        }
        trace.stop(reason, Optional.of(detail));
    }

    private void assistant(JsonNode message, List<TraceEvent> made) {
        if (model.isEmpty()) {
            model = name(message.path("model"));
        }
        if (message.path("usage").isObject()) {
            String id = message.path("id").asText("");
            calls.put(id.isEmpty() ? "call-" + calls.size() : id, message.get("usage"));
        }
        if (message.hasNonNull("stop_reason")) {
            lastStopReason = message.get("stop_reason").asText();
        }
        for (JsonNode block : message.path("content")) {
            switch (block.path("type").asText()) {
                case "text" -> {
                    String text = block.path("text").asText("");
                    if (!text.isBlank()) {
                        made.add(trace.message(TraceEvent.Role.ASSISTANT, text));
                    }
                }
                case "thinking" -> {
                    String text = block.path("thinking").asText("");
                    if (!text.isBlank()) { // thinking whose display is omitted comes as a signature alone
                        made.add(trace.thought(text));
                    }
                }
                case "tool_use" -> {
                    Optional<String> id = name(block.path("id"));
                    Optional<String> tool = name(block.path("name"));
                    if (id.isPresent() && tool.isPresent()) {
                        JsonNode input = block.path("input").isObject() ? block.get("input") : JSON.createObjectNode();
                        made.add(trace.toolCall(id.get(), tool.get(), kind(tool.get()), input));
                    }
                }
                default -> { } // redacted thinking, server tools' own blocks: nothing the trace can say
            }
        }
    }

    private void toolResults(JsonNode content, List<TraceEvent> made) {
        // The user's own text (a replayed prompt, an interruption note) is not a tool result: the prompt is traced once.
        for (JsonNode block : content) {
            Optional<String> callId = name(block.path("tool_use_id"));
            if ("tool_result".equals(block.path("type").asText()) && callId.isPresent()) {
                made.add(trace.toolResult(callId.get(), block.path("is_error").asBoolean(false),
                        flatten(block.path("content"))));
            }
        }
    }

    /** A tool result's content as text: a string as it is; an array's text blocks one after another, others named. */
    static String flatten(JsonNode content) {
        if (content.isTextual()) {
            return content.textValue();
        }
        if (!content.isArray()) {
            return content.isMissingNode() || content.isNull() ? "" : content.toString();
        }
        List<String> parts = new ArrayList<>();
        for (JsonNode part : content) {
            String type = part.path("type").asText();
            parts.add("text".equals(type) ? part.path("text").asText("") : "[" + (type.isEmpty() ? "content" : type) + "]");
        }
        return String.join("\n", parts);
    }

    private void result(JsonNode line, List<TraceEvent> made) {
        result = line;
        JsonNode usage = line.path("usage");
        JsonNode total = line.path("total_cost_usd");
        Optional<BigDecimal> cost = total.isNumber() && Double.isFinite(total.doubleValue())
                ? Optional.of(total.decimalValue()) : Optional.empty();
        made.add(trace.usage(model, count(usage, "input_tokens"), count(usage, "output_tokens"),
                count(usage, "cache_read_input_tokens"), count(usage, "cache_creation_input_tokens"),
                cost.filter(c -> c.signum() >= 0)));
        JsonNode denials = line.path("permission_denials");
        for (int i = 0; i < denials.size(); i++) {
            JsonNode denial = denials.get(i);
            Optional<String> tool = name(denial.path("tool_name"));
            if (tool.isEmpty()) {
                continue;
            }
            Optional<String> callId = name(denial.path("tool_use_id"));
            String requestId = callId.orElse("denial-" + (i + 1));
            JsonNode input = denial.path("tool_input").isObject() ? denial.get("tool_input") : JSON.createObjectNode();
            made.add(trace.permissionRequest(requestId, tool.get(), kind(tool.get()), input, callId));
            made.add(trace.permissionResponse(requestId, TraceEvent.Verdict.DENY, DECIDED_BY,
                    "not allowed by Claude Code's permission mode or allowed tools"));
        }
        made.add(stop(line));
    }

    /** How the session ended, by its result's subtype and is_error (the answer is the result itself). */
    private TraceEvent.Stop stop(JsonNode line) {
        String subtype = line.path("subtype").asText("");
        boolean error = line.path("is_error").asBoolean(false);
        if (subtype.equals("success") && !error) {
            return lastStopReason.equals("max_tokens")
                    ? trace.stop(TraceEvent.StopReason.MAX_TOKENS, Optional.of("the last answer was cut at its max tokens"))
                    : trace.stop(TraceEvent.StopReason.END_TURN, Optional.empty());
        }
        List<String> errors = new ArrayList<>();
        line.path("errors").forEach(e -> errors.add(e.asText()));
        String said = errors.isEmpty() ? line.path("result").asText("") : String.join("; ", errors);
        String detail = (subtype.isEmpty() || subtype.equals("success") ? "error" : subtype)
                + (said.isBlank() ? "" : ": " + said);
        return trace.stop(LIMITS.contains(subtype) ? TraceEvent.StopReason.MAX_TOKENS : TraceEvent.StopReason.ERROR,
                Optional.of(detail));
    }

    private ToolKind kind(String tool) {
        return ToolKinds.builtIn().resolve(ToolKinds.CLAUDE_CODE, overrides, tool);
    }

    private static Optional<String> name(JsonNode value) {
        return value.isTextual() && !value.textValue().isBlank() && value.textValue().length() <= 256
                ? Optional.of(value.textValue()) : Optional.empty();
    }

    private static long count(JsonNode usage, String field) {
        JsonNode value = usage.path(field);
        return value.canConvertToLong() && value.longValue() > 0 ? value.longValue() : 0;
    }
}
