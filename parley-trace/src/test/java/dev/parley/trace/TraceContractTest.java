package dev.parley.trace;

import dev.parley.core.ToolKind;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TraceContractTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-25T09:00:00Z"), ZoneOffset.UTC);

    @Test
    void theBuilderNestsResultsUnderCallsAndEveryEventSurvivesTheWire() {
        List<TraceEvent> seen = new ArrayList<>();
        TraceBuilder turn = new TraceBuilder(CLOCK, seen::add);
        turn.message(TraceEvent.Role.USER, "list the files");
        turn.thought("ls will do");
        TraceEvent.ToolCall call = turn.toolCall("call-1", "Bash", ToolKind.EXECUTE, JSON.createObjectNode().put("command", "ls"));
        TraceEvent.PermissionRequest asked = turn.permissionRequest("req-1", "Bash", ToolKind.EXECUTE,
                JSON.createObjectNode().put("command", "ls"), Optional.of("call-1"));
        TraceEvent.PermissionResponse answered = turn.permissionResponse("req-1", TraceEvent.Verdict.ALLOW, "policy",
                "rule allow-ls");
        TraceEvent.ToolResult result = turn.toolResult("call-1", false, "a\nb");
        turn.usage(Optional.of("claude-sonnet-4-5"), 10, 20, 3, 4, Optional.of(new BigDecimal("0.0123")));
        turn.message(TraceEvent.Role.ASSISTANT, "a and b");
        turn.stop(TraceEvent.StopReason.END_TURN, Optional.empty());

        assertEquals(Optional.of(call.id()), result.parentId());
        assertEquals(Optional.of(call.id()), asked.parentId());
        assertEquals(Optional.of(asked.id()), answered.parentId());
        assertEquals(turn.events(), seen);
        assertEquals(List.of("e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8", "e9"),
                seen.stream().map(TraceEvent::id).toList());
        for (TraceEvent event : seen) {
            assertEquals(event, TraceEvents.fromJson(TraceEvents.toJson(event)));
        }
        assertThrows(IllegalStateException.class, () -> turn.thought("after the end"));
    }

    @Test
    void anEventOutsideTheContractIsRefusedSayingWhy() {
        ObjectNode extra = TraceEvents.toJson(new TraceEvent.Thought("e1", Optional.empty(), CLOCK.instant(), "x"));
        extra.put("mood", "happy");
        assertTrue(assertThrows(TraceFormatException.class, () -> TraceEvents.fromJson(extra)).getMessage()
                .contains("no field mood"));
        ObjectNode badKind = TraceEvents.toJson(new TraceEvent.ToolCall("e1", Optional.empty(), CLOCK.instant(), "c",
                "Bash", ToolKind.EXECUTE, JSON.createObjectNode()));
        badKind.put("kind", "launch");
        assertTrue(assertThrows(TraceFormatException.class, () -> TraceEvents.fromJson(badKind)).getMessage()
                .startsWith("kind: one of read, edit"));
        ObjectNode badTime = TraceEvents.toJson(new TraceEvent.Thought("e1", Optional.empty(), CLOCK.instant(), "x"));
        badTime.put("at", "yesterday");
        assertTrue(assertThrows(TraceFormatException.class, () -> TraceEvents.fromJson(badTime)).getMessage()
                .startsWith("at: an RFC 3339 time"));
        ObjectNode badId = TraceEvents.toJson(new TraceEvent.Thought("e1", Optional.empty(), CLOCK.instant(), "x"));
        badId.put("id", "../../etc");
        assertThrows(TraceFormatException.class, () -> TraceEvents.fromJson(badId));
        assertThrows(TraceFormatException.class, () -> TraceEvents.fromJson(JSON.createObjectNode().put("type", "dream")));
    }

    @Test
    void longTextIsCutAndMarked() {
        String big = "x".repeat(TraceEvent.MAX_TEXT + 10);
        TraceEvent.Thought thought = new TraceEvent.Thought("e1", Optional.empty(), CLOCK.instant(), big);
        assertTrue(thought.text().endsWith("[cut at " + TraceEvent.MAX_TEXT + " characters]"));
    }
}
