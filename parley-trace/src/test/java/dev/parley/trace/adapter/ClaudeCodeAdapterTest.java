package dev.parley.trace.adapter;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.parley.core.ToolKind;
import dev.parley.trace.TraceBuilder;
import dev.parley.trace.TraceEvent;
import dev.parley.trace.TraceEvents;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Recorded-format Claude Code sessions ({@code claude-code/NAME.jsonl}) read into exact traces
 * ({@code NAME.trace.json}): a change in how the stream is read shows as a diff of these files.
 */
class ClaudeCodeAdapterTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-25T09:00:00Z"), ZoneOffset.UTC);
    private static final String PROMPT = "A message from lead (kind message, envelope 0193f0c4-7a2e-7c4d-9e1f-2a3b4c5d6e7f):"
            + "\n\n";

    static List<String> lines(String name) throws IOException {
        try (InputStream in = ClaudeCodeAdapterTest.class.getResourceAsStream("claude-code/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        }
    }

    /** The trace the adapter makes of a whole recorded session. */
    static List<TraceEvent> read(String fixture, String prompt) throws IOException {
        TraceBuilder trace = new TraceBuilder(CLOCK, e -> { });
        ClaudeCodeAdapter adapter = new ClaudeCodeAdapter(trace, Map.of());
        adapter.prompt(prompt);
        lines(fixture + ".jsonl").forEach(adapter::line);
        return trace.events();
    }

    static ArrayNode wire(List<TraceEvent> events) {
        ArrayNode out = JSON.createArrayNode();
        events.forEach(e -> out.add(TraceEvents.toJson(e)));
        return out;
    }

    @ParameterizedTest
    @ValueSource(strings = {"plain", "tools", "thinking-denied", "error"})
    void aRecordedSessionBecomesItsExactTrace(String fixture) throws IOException {
        JsonNode expected;
        try (InputStream in = getClass().getResourceAsStream("claude-code/" + fixture + ".trace.json")) {
            expected = JSON.readTree(in);
        }
        ArrayNode actual = wire(read(fixture, PROMPT + fixture));
        assertEquals(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(expected),
                JSON.writerWithDefaultPrettyPrinter().writeValueAsString(actual));
        for (JsonNode event : actual) { // and what is made is what the hub will read back
            assertEquals(event, TraceEvents.toJson(TraceEvents.fromJson(event)));
        }
    }

    /**
     * A session that never gives its result (killed at its timeout) still says what its model
     * calls used: each call once, although stream-json repeats a call's usage on each of its lines.
     */
    @Test
    void aSessionCutShortCountsEachModelCallOnceAndStopsAsTold() throws IOException {
        List<String> lines = lines("tools.jsonl");
        TraceBuilder trace = new TraceBuilder(CLOCK, e -> { });
        ClaudeCodeAdapter adapter = new ClaudeCodeAdapter(trace, Map.of());
        lines.subList(0, lines.size() - 1).forEach(adapter::line);
        adapter.end(TraceEvent.StopReason.TIMEOUT, "Claude Code timed out after 10m");
        List<TraceEvent> events = trace.events();
        var usage = (TraceEvent.Usage) events.get(events.size() - 2);
        assertEquals(List.of(21L, 68L, 54037L, 2491L), List.of(usage.inputTokens(), usage.outputTokens(),
                usage.cacheReadTokens(), usage.cacheWriteTokens()), "the same totals as the result line's");
        assertEquals(Optional.of("claude-sonnet-4-5-20250929"), usage.model());
        assertEquals(Optional.empty(), usage.costUsd(), "only the result line says what it cost");
        assertEquals(new TraceEvent.Stop("e13", Optional.empty(), CLOCK.instant(), TraceEvent.StopReason.TIMEOUT,
                Optional.of("Claude Code timed out after 10m")), events.getLast());
        assertTrue(adapter.result().isEmpty());

        adapter.end(TraceEvent.StopReason.ERROR, "once stopped, it stays stopped");
        assertEquals(events, trace.events());
        assertEquals(List.of(), adapter.line(lines.getLast()), "a line after the stop makes nothing");
    }

    /** Each line says what it made (a runner heartbeats each tool call); the agent's own tool kinds come first. */
    @Test
    void eachLineSaysWhatItMadeAndTheAgentsToolKindsComeFirst() throws IOException {
        List<String> lines = lines("tools.jsonl");
        TraceBuilder trace = new TraceBuilder(CLOCK, e -> { });
        ClaudeCodeAdapter adapter = new ClaudeCodeAdapter(trace, Map.of("Bash", ToolKind.READ));
        assertEquals(List.of(), adapter.line(lines.get(0)), "the init line makes nothing");
        var made = adapter.line(lines.get(2));
        assertEquals(1, made.size());
        var read = (TraceEvent.ToolCall) made.getFirst();
        assertEquals(List.of("toolu_01ReadCfg", "Read", ToolKind.READ), List.of(read.callId(), read.tool(), read.kind()));
        var bash = (TraceEvent.ToolCall) adapter.line(lines.get(8)).getFirst();
        assertEquals(ToolKind.READ, bash.kind(), "the agent says its Bash only reads");
        assertEquals(List.of(), adapter.line("{\"type\":\"assistant\",\"message\":{\"content\":\"not blocks\"}}"));
        assertEquals(List.of(), adapter.line("[1, 2]"));
        assertEquals(List.of(), adapter.line("{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\"}]}}"),
                "a result naming no call is skipped");
        TraceEvent stop = adapter.line(lines.getLast()).getLast();
        assertEquals("stop", stop.type());
        assertEquals("success", adapter.result().orElseThrow().path("subtype").asText());
    }
}
