package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.ToolKind;
import dev.parley.trace.ToolKinds;
import dev.parley.trace.TraceBuilder;
import dev.parley.trace.TraceEvent;
import dev.parley.trace.adapter.ClaudeCodeAdapter;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * A Claude Code session per envelope ({@code parley agent claude}): {@code claude -p
 * --input-format stream-json --output-format stream-json --verbose}, given the envelope as one
 * user message on stdin; each {@code tool_use} it streams is a heartbeat naming the tool, and its
 * {@code result} line the answer (an error result fails the envelope). Its lines are read by the
 * Claude Code adapter, into the turn's trace. The tools that wait for a
 * human or move the session elsewhere ({@link #DISALLOWED}) are disallowed unless allowed again.
 */
record ClaudeCodeTurn(String bin, List<String> disallowed, List<String> extra, Map<String, ToolKind> toolKinds)
        implements Turn {
    /** Disallowed by default: an unattended turn has no one to ask, and stays where it was started. */
    static final List<String> DISALLOWED = List.of("AskUserQuestion", "EnterPlanMode", "ExitPlanMode", "EnterWorktree",
            "ExitWorktree");

    ClaudeCodeTurn {
        disallowed = List.copyOf(disallowed);
        extra = List.copyOf(extra);
        toolKinds = Map.copyOf(toolKinds);
    }

    /** A turn with no tool kinds of the agent's own. */
    ClaudeCodeTurn(String bin, List<String> disallowed, List<String> extra) {
        this(bin, disallowed, extra, Map.of());
    }

    @Override
    public String tool() {
        return "claude";
    }

    /** How the CLI is run. */
    List<String> commandLine() {
        List<String> line = new ArrayList<>(List.of(bin, "-p", "--input-format", "stream-json", "--output-format",
                "stream-json", "--verbose"));
        if (!disallowed.isEmpty()) {
            line.add("--disallowedTools");
            line.add(String.join(",", disallowed));
        }
        line.addAll(extra);
        return line;
    }

    @Override
    public String adapter() {
        return ToolKinds.CLAUDE_CODE;
    }

    @Override
    public Outcome take(JsonNode envelope, Duration timeout, Consumer<String> toolStarted, TraceBuilder trace,
                        Optional<String> traceparent)
            throws InterruptedException {
        ClaudeCodeAdapter session = new ClaudeCodeAdapter(trace, toolKinds);
        ObjectNode prompt = userMessage(envelope);
        session.prompt(prompt.at("/message/content").asText());
        Process process;
        try {
            process = Turn.start(commandLine(), traceparent);
        } catch (IOException e) {
            return failed(session, TraceEvent.StopReason.ERROR, "Claude Code cannot be started (" + bin + "): "
                    + e.getMessage());
        }
        try {
            CompletableFuture<JsonNode> result = new CompletableFuture<>();
            CompletableFuture<Void> read = CompletableFuture.runAsync(() -> follow(process, session, toolStarted,
                    result), Thread::startVirtualThread);
            byte[] message = (prompt.toString() + "\n").getBytes(StandardCharsets.UTF_8);
            Thread.startVirtualThread(() -> Turn.write(process.getOutputStream(), message));
            // The result line ends the turn: a session that lingers after it (a hook, a server) is not waited for.
            CompletableFuture.anyOf(result, process.onExit()).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!result.isDone()) { // it ended first: what it wrote last may still be in the pipe
                read.get(DRAIN.toMillis(), TimeUnit.MILLISECONDS);
            }
            Outcome outcome = answer(Optional.ofNullable(result.getNow(null)), process.isAlive() ? "still running"
                    : "exit status " + process.exitValue());
            return outcome instanceof Outcome.Failed failed ? failed(session, TraceEvent.StopReason.ERROR, failed.why())
                    : outcome;
        } catch (TimeoutException e) {
            return process.isAlive()
                    ? failed(session, TraceEvent.StopReason.TIMEOUT, "Claude Code timed out after "
                            + dev.parley.core.DurationText.format(timeout))
                    : failed(session, TraceEvent.StopReason.ERROR, "Claude Code's output could not be read");
        } catch (ExecutionException e) {
            return failed(session, TraceEvent.StopReason.ERROR, "Claude Code's output could not be read");
        } finally {
            Turn.end(process);
        }
    }

    /** A turn that came to no result: its trace stops with why (a no-op when the result line stopped it). */
    private static Outcome failed(ClaudeCodeAdapter session, TraceEvent.StopReason reason, String why) {
        session.end(reason, why);
        return new Outcome.Failed(why);
    }

    /** The envelope as the user message of the session: who sent it and what it says. */
    static ObjectNode userMessage(JsonNode envelope) {
        String prompt = "A message from " + envelope.path("from").asText() + " (kind " + envelope.path("kind").asText()
                + ", envelope " + envelope.path("id").asText() + "):\n\n" + Turn.body(envelope);
        ObjectNode line = JsonTrees.object().put("type", "user");
        line.putObject("message").put("role", "user").put("content", prompt);
        return line;
    }

    /**
     * Reads the stream-json lines into the session's adapter: each tool call it makes is told; the
     * result line completes {@code result}.
     */
    private static void follow(Process process, ClaudeCodeAdapter session, Consumer<String> toolStarted,
                               CompletableFuture<JsonNode> result) {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line; !result.isDone() && (line = lines.readLine()) != null; ) {
                for (TraceEvent event : session.line(line)) {
                    if (event instanceof TraceEvent.ToolCall call) {
                        toolStarted.accept(call.tool());
                    }
                }
                session.result().ifPresent(result::complete);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Outcome answer(Optional<JsonNode> last, String ended) {
        if (last.isEmpty()) {
            return new Outcome.Failed("Claude Code ended without a result (" + ended + ")");
        }
        JsonNode result = last.get();
        String text = result.path("result").asText("");
        String subtype = result.path("subtype").asText("");
        if (result.path("is_error").asBoolean(false) || !subtype.equals("success")) {
            String said = text.length() > 500 ? text.substring(0, 500) + "…" : text;
            return new Outcome.Failed("Claude Code ended with " + (subtype.isEmpty() ? "an error" : subtype)
                    + (said.isBlank() ? "" : ": " + said));
        }
        if (text.getBytes(StandardCharsets.UTF_8).length > MAX_REPLY_BYTES) {
            return new Outcome.Failed("Claude Code's result is longer than " + MAX_REPLY_BYTES + " bytes");
        }
        return new Outcome.Output(text.stripTrailing());
    }
}
