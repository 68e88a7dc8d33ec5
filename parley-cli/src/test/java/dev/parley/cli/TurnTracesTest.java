package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.parley.trace.TraceBuilder;
import dev.parley.trace.TraceEvents;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The exact traces of command turns (real processes) and echo turns, as their adapters make them. */
class TurnTracesTest {
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-25T09:00:00Z"), ZoneOffset.UTC);
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final String AT = "\"at\":\"2026-11-25T09:00:00Z\"";

    private record Taken(Turn.Outcome outcome, String trace) {
    }

    private static Taken take(Turn turn, String text, Duration timeout) throws Exception {
        TraceBuilder trace = new TraceBuilder(CLOCK, e -> { });
        JsonNode envelope = CliRun.JSON.createObjectNode().put("id", "e-1").put("from", "lead").put("text", text);
        Turn.Outcome outcome = turn.take(envelope, timeout, t -> { }, trace);
        ArrayNode events = CliRun.JSON.createArrayNode();
        trace.events().forEach(e -> events.add(TraceEvents.toJson(e)));
        return new Taken(outcome, events.toString());
    }

    /** The tool call of a command turn running {@code argv} here. */
    private static String call(String... argv) throws Exception {
        return "{\"type\":\"tool_call\",\"id\":\"e2\"," + AT + ",\"callId\":\"run\",\"tool\":\"command\",\"kind\":\"execute\","
                + "\"input\":{\"argv\":" + CliRun.JSON.writeValueAsString(List.of(argv)) + ",\"workdir\":"
                + CliRun.JSON.writeValueAsString(Path.of("").toAbsolutePath().toString()) + "}}";
    }

    private static String user(String text) {
        return "{\"type\":\"message\",\"id\":\"e1\"," + AT + ",\"role\":\"user\",\"text\":\"" + text + "\"}";
    }

    @Test
    void aCommandThatAnswersIsOneCallItsResultAndItsStdoutAsTheAnswer() throws Exception {
        String script = "read line; echo \"got $line\"";
        Taken taken = take(new CommandTurn(List.of("sh", "-c", script)), "hello", TIMEOUT);
        assertEquals(new Turn.Outcome.Output("got hello"), taken.outcome());
        assertEquals("[" + user("hello") + "," + call("sh", "-c", script) + ","
                + "{\"type\":\"tool_result\",\"id\":\"e3\",\"parentId\":\"e2\"," + AT
                + ",\"callId\":\"run\",\"error\":false,\"output\":\"exit status 0\\ngot hello\\n\"},"
                + "{\"type\":\"message\",\"id\":\"e4\"," + AT + ",\"role\":\"assistant\",\"text\":\"got hello\"},"
                + "{\"type\":\"stop\",\"id\":\"e5\"," + AT + ",\"reason\":\"end_turn\"}]", taken.trace());
    }

    @Test
    void aFailingStatusATimeoutAndAMissingProgramEachStopTheTraceSayingWhy() throws Exception {
        String script = "echo partial; exit 3";
        Taken failing = take(new CommandTurn(List.of("sh", "-c", script)), "go", TIMEOUT);
        assertEquals(new Turn.Outcome.Failed("the command exited with status 3"), failing.outcome());
        assertEquals("[" + user("go") + "," + call("sh", "-c", script) + ","
                + "{\"type\":\"tool_result\",\"id\":\"e3\",\"parentId\":\"e2\"," + AT
                + ",\"callId\":\"run\",\"error\":true,\"output\":\"exit status 3\\npartial\\n\"},"
                + "{\"type\":\"stop\",\"id\":\"e4\"," + AT + ",\"reason\":\"error\","
                + "\"detail\":\"the command exited with status 3\"}]", failing.trace());

        Taken hanging = take(new CommandTurn(List.of("sh", "-c", "exec sleep 609")), "go", Duration.ofSeconds(1));
        assertEquals(new Turn.Outcome.Failed("timed out after 1s"), hanging.outcome());
        assertEquals("[" + user("go") + "," + call("sh", "-c", "exec sleep 609") + ","
                + "{\"type\":\"tool_result\",\"id\":\"e3\",\"parentId\":\"e2\"," + AT
                + ",\"callId\":\"run\",\"error\":true,\"output\":\"timed out after 1s\"},"
                + "{\"type\":\"stop\",\"id\":\"e4\"," + AT + ",\"reason\":\"timeout\",\"detail\":\"timed out after 1s\"}]",
                hanging.trace());

        Taken missing = take(new CommandTurn(List.of("/no/such/program")), "go", TIMEOUT);
        String why = "the command cannot be started: no executable /no/such/program";
        assertEquals(new Turn.Outcome.Failed(why), missing.outcome());
        assertEquals("[" + user("go") + "," + call("/no/such/program") + ","
                + "{\"type\":\"tool_result\",\"id\":\"e3\",\"parentId\":\"e2\"," + AT
                + ",\"callId\":\"run\",\"error\":true,\"output\":\"" + why + "\"},"
                + "{\"type\":\"stop\",\"id\":\"e4\"," + AT + ",\"reason\":\"error\",\"detail\":\"" + why + "\"}]",
                missing.trace());
    }

    @Test
    void anEchoAnswersWithWhatItWasSent() throws Exception {
        Taken taken = take(new EchoTurn(), "ping", TIMEOUT);
        assertEquals(new Turn.Outcome.Output("ping"), taken.outcome());
        assertEquals("[" + user("ping") + ","
                + "{\"type\":\"message\",\"id\":\"e2\"," + AT + ",\"role\":\"assistant\",\"text\":\"ping\"},"
                + "{\"type\":\"stop\",\"id\":\"e3\"," + AT + ",\"reason\":\"end_turn\"}]", taken.trace());
    }
}
