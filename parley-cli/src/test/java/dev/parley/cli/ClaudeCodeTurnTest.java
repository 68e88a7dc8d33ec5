package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.core.AgentSpec;
import dev.parley.trace.TraceBuilder;
import dev.parley.trace.TraceEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Claude Code runner against a stand-in for the {@code claude} CLI (it cannot run here)
 * that records how it was called and plays back recorded stream-json output.
 */
class ClaudeCodeTurnTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    /** A stand-in {@code claude}: writes its arguments and stdin down, then prints {@code fixture} (or runs {@code then}). */
    static Path standIn(Path dir, String then) throws Exception {
        Path script = dir.resolve("claude");
        Files.writeString(script, "#!/bin/sh\necho $$ > '" + dir.resolve("pid") + "'\nprintf '%s\\n' \"$@\" > '"
                + dir.resolve("args") + "'\ncat > '" + dir.resolve("stdin") + "'\n" + then + "\n");
        assertTrue(script.toFile().setExecutable(true));
        return script;
    }

    static Path fixture(String name) throws Exception {
        return Path.of(ClaudeCodeTurnTest.class.getResource("/claude/" + name).toURI());
    }

    /** The stand-in's process, by the pid it wrote down. */
    private static java.util.Optional<ProcessHandle> standInProcess(Path dir) throws Exception {
        return ProcessHandle.of(Long.parseLong(Files.readString(dir.resolve("pid")).strip()));
    }

    private static TraceBuilder trace() {
        return new TraceBuilder(Clock.systemUTC(), e -> { });
    }

    /** The stop a turn's trace ended with: its reason and detail. */
    private static List<Object> stop(TraceBuilder trace) {
        var stop = (TraceEvent.Stop) trace.events().getLast();
        return List.of(stop.reason(), stop.detail().orElse(""));
    }

    private static JsonNode envelope(String text) throws Exception {
        return CliRun.JSON.readTree("{\"id\":\"e-1\",\"from\":\"lead\",\"kind\":\"message\",\"text\":"
                + CliRun.JSON.writeValueAsString(text) + "}");
    }

    @Test
    void aSessionIsDrivenWithOneUserMessageEachToolIsToldAndItsResultIsTheAnswer() throws Exception {
        Path bin = standIn(tmp, "cat '" + fixture("success.jsonl") + "'");
        List<String> tools = new CopyOnWriteArrayList<>();
        var turn = new ClaudeCodeTurn(bin.toString(), ClaudeCodeTurn.DISALLOWED, List.of("--model", "sonnet"));
        TraceBuilder trace = trace();
        Turn.Outcome outcome = turn.take(envelope("run the tests"), TIMEOUT, tools::add, trace);
        assertEquals(new Turn.Outcome.Output("All 42 tests pass."), outcome);
        assertEquals(List.of("Bash", "Read"), tools, "each tool_use is a heartbeat naming the tool");
        assertEquals(List.of("message", "message", "tool_call", "tool_result", "tool_call", "tool_result", "message",
                "usage", "stop"), trace.events().stream().map(TraceEvent::type).toList(), "the session, read by its adapter");
        assertEquals(new TraceEvent.Message("e1", Optional.empty(), trace.events().getFirst().at(), TraceEvent.Role.USER,
                "A message from lead (kind message, envelope e-1):\n\nrun the tests"), trace.events().getFirst());
        assertEquals(List.of(TraceEvent.StopReason.END_TURN, ""), stop(trace));
        assertEquals(List.of("-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
                "--disallowedTools", "AskUserQuestion,EnterPlanMode,ExitPlanMode,EnterWorktree,ExitWorktree",
                "--model", "sonnet"), Files.readAllLines(tmp.resolve("args")));
        List<String> stdin = Files.readAllLines(tmp.resolve("stdin"));
        assertEquals(1, stdin.size(), "one user message, one line");
        JsonNode message = CliRun.JSON.readTree(stdin.getFirst());
        assertEquals("user", message.path("type").asText());
        assertEquals("user", message.at("/message/role").asText());
        assertEquals("A message from lead (kind message, envelope e-1):\n\nrun the tests",
                message.at("/message/content").asText());
    }

    @Test
    void anErrorResultAMissingResultAndATimeoutFailTheEnvelope() throws Exception {
        TraceBuilder trace = trace();
        var failed = assertInstanceOf(Turn.Outcome.Failed.class, new ClaudeCodeTurn(standIn(tmp, "cat '"
                + fixture("error.jsonl") + "'").toString(), List.of(), List.of()).take(envelope("build"), TIMEOUT, t -> { },
                trace));
        assertEquals("Claude Code ended with error_max_turns", failed.why());
        assertEquals(List.of(TraceEvent.StopReason.MAX_TOKENS, "error_max_turns"), stop(trace), "a limit it was given");

        Path crashing = Files.createDirectory(tmp.resolve("crashing"));
        trace = trace();
        failed = assertInstanceOf(Turn.Outcome.Failed.class, new ClaudeCodeTurn(standIn(crashing,
                "echo 'not json'; echo '{\"type\":\"system\",\"subtype\":\"init\"}'; exit 3").toString(), List.of(),
                List.of()).take(envelope("build"), TIMEOUT, t -> { }, trace));
        assertEquals("Claude Code ended without a result (exit status 3)", failed.why());
        assertEquals(List.of(TraceEvent.StopReason.ERROR, failed.why()), stop(trace));

        Path hanging = Files.createDirectory(tmp.resolve("hanging"));
        trace = trace();
        failed = assertInstanceOf(Turn.Outcome.Failed.class, new ClaudeCodeTurn(standIn(hanging, "exec sleep 607")
                .toString(), List.of(), List.of()).take(envelope("build"), Duration.ofSeconds(1), t -> { }, trace));
        assertEquals("Claude Code timed out after 1s", failed.why());
        assertTrue(standInProcess(hanging).map(p -> !p.isAlive()).orElse(true), "the session is killed");
        assertEquals(List.of(TraceEvent.StopReason.TIMEOUT, failed.why()), stop(trace));

        trace = trace();
        failed = assertInstanceOf(Turn.Outcome.Failed.class, new ClaudeCodeTurn(tmp.resolve("no-such-claude").toString(),
                List.of(), List.of()).take(envelope("build"), TIMEOUT, t -> { }, trace));
        assertTrue(failed.why().startsWith("Claude Code cannot be started"), failed.why());
        assertEquals(List.of("message", "stop"), trace.events().stream().map(TraceEvent::type).toList());
    }

    /** A session that lingers after its result line (a hook, a server that will not stop) is not waited for. */
    @Test
    void theResultLineEndsTheTurnAndALingeringSessionIsKilled() throws Exception {
        Path bin = standIn(tmp, "cat '" + fixture("success.jsonl") + "'; exec sleep 608");
        long t0 = System.nanoTime();
        Turn.Outcome outcome = new ClaudeCodeTurn(bin.toString(), List.of(), List.of())
                .take(envelope("run the tests"), Duration.ofMinutes(10), t -> { }, trace());
        assertEquals(new Turn.Outcome.Output("All 42 tests pass."), outcome);
        assertTrue(System.nanoTime() - t0 < Duration.ofMinutes(5).toNanos(), "answered at its result, not its timeout");
        assertTrue(standInProcess(tmp).map(p -> !p.isAlive()).orElse(true), "the lingering session is killed");
    }

    @Test
    void theToolsThatWaitForAHumanAreDisallowedUnlessAllowedAgain() {
        AgentCommand.Claude defaults = new AgentCommand.Claude();
        new CommandLine(defaults).parseArgs();
        assertEquals(ClaudeCodeTurn.DISALLOWED, ((ClaudeCodeTurn) defaults.turn()).disallowed());

        AgentCommand.Claude changed = new AgentCommand.Claude();
        new CommandLine(changed).parseArgs("--allow-tool", "AskUserQuestion", "--disallow-tool", "WebFetch",
                "--claude-bin", "/opt/claude", "--", "--max-turns", "5");
        ClaudeCodeTurn turn = (ClaudeCodeTurn) changed.turn();
        assertEquals(List.of("EnterPlanMode", "ExitPlanMode", "EnterWorktree", "ExitWorktree", "WebFetch"),
                turn.disallowed());
        assertEquals(List.of("/opt/claude", "-p"), turn.commandLine().subList(0, 2));
        assertEquals(List.of("--max-turns", "5"), turn.extra());
        assertTrue(Set.copyOf(new ArrayList<>(turn.commandLine())).contains("EnterPlanMode,ExitPlanMode,EnterWorktree,"
                + "ExitWorktree,WebFetch"));
    }

    /**
     * The agent spec's toolBlocklist, which the hub gives as PARLEY_TOOL_BLOCKLIST, joins the
     * disallowed tools: each once, also one that --allow-tool names (the spec's word holds).
     */
    @Test
    void theToolBlocklistJoinsTheDisallowedToolsOnceEach() throws Exception {
        AgentSpec.ToolBlocklist blocklist = new AgentSpec.ToolBlocklist(List.of("Bash", "WebFetch", "AskUserQuestion",
                "mcp__github__*"));
        assertEquals(Optional.of("Bash,WebFetch,AskUserQuestion,mcp__github__*"), blocklist.variable());
        assertEquals(blocklist.tools(), AgentSpec.ToolBlocklist.read(blocklist.variable()));
        assertEquals(Optional.empty(), new AgentSpec.ToolBlocklist(List.of()).variable(), "none: no variable");
        assertEquals(List.of(), AgentSpec.ToolBlocklist.read(Optional.empty()));

        Path bin = standIn(tmp, "cat '" + fixture("success.jsonl") + "'");
        AgentCommand.Claude claude = new AgentCommand.Claude();
        new CommandLine(claude).parseArgs("--claude-bin", bin.toString(), "--allow-tool", "AskUserQuestion",
                "--disallow-tool", "WebFetch");
        ClaudeCodeTurn turn = claude.turn(AgentSpec.ToolBlocklist.read(blocklist.variable()));
        assertEquals(new Turn.Outcome.Output("All 42 tests pass."), turn.take(envelope("go"), TIMEOUT, t -> { }, trace()));
        List<String> args = Files.readAllLines(tmp.resolve("args"));
        assertEquals("EnterPlanMode,ExitPlanMode,EnterWorktree,ExitWorktree,WebFetch,Bash,AskUserQuestion,"
                + "mcp__github__*", args.get(args.indexOf("--disallowedTools") + 1), args::toString);
    }
}
