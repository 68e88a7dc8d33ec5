package dev.parley.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * {@code result} line the answer (an error result fails the envelope). The tools that wait for a
 * human or move the session elsewhere ({@link #DISALLOWED}) are disallowed unless allowed again.
 */
record ClaudeCodeTurn(String bin, List<String> disallowed, List<String> extra) implements Turn {
    /** Disallowed by default: an unattended turn has no one to ask, and stays where it was started. */
    static final List<String> DISALLOWED = List.of("AskUserQuestion", "EnterPlanMode", "ExitPlanMode", "EnterWorktree",
            "ExitWorktree");

    ClaudeCodeTurn {
        disallowed = List.copyOf(disallowed);
        extra = List.copyOf(extra);
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
    public Outcome take(JsonNode envelope, Duration timeout, Consumer<String> toolStarted) throws InterruptedException {
        Process process;
        try {
            process = Turn.start(commandLine());
        } catch (IOException e) {
            return new Outcome.Failed("Claude Code cannot be started (" + bin + "): " + e.getMessage());
        }
        try {
            CompletableFuture<JsonNode> result = new CompletableFuture<>();
            CompletableFuture<Void> read = CompletableFuture.runAsync(() -> follow(process, toolStarted, result),
                    Thread::startVirtualThread);
            byte[] message = (userMessage(envelope).toString() + "\n").getBytes(StandardCharsets.UTF_8);
            Thread.startVirtualThread(() -> Turn.write(process.getOutputStream(), message));
            // The result line ends the turn: a session that lingers after it (a hook, a server) is not waited for.
            CompletableFuture.anyOf(result, process.onExit()).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!result.isDone()) { // it ended first: what it wrote last may still be in the pipe
                read.get(DRAIN.toMillis(), TimeUnit.MILLISECONDS);
            }
            return answer(Optional.ofNullable(result.getNow(null)), process.isAlive() ? "still running"
                    : "exit status " + process.exitValue());
        } catch (TimeoutException e) {
            return process.isAlive()
                    ? new Outcome.Failed("Claude Code timed out after " + dev.parley.core.DurationText.format(timeout))
                    : new Outcome.Failed("Claude Code's output could not be read");
        } catch (ExecutionException e) {
            return new Outcome.Failed("Claude Code's output could not be read");
        } finally {
            Turn.end(process);
        }
    }

    /** The envelope as the user message of the session: who sent it and what it says. */
    static ObjectNode userMessage(JsonNode envelope) {
        String body = envelope.hasNonNull("text") ? envelope.get("text").asText() : envelope.path("data").toString();
        String prompt = "A message from " + envelope.path("from").asText() + " (kind " + envelope.path("kind").asText()
                + ", envelope " + envelope.path("id").asText() + "):\n\n" + body;
        ObjectNode line = HubClient.JSON.createObjectNode().put("type", "user");
        line.putObject("message").put("role", "user").put("content", prompt);
        return line;
    }

    /** Reads the stream-json lines: each tool_use is told; the first result line completes {@code result}. */
    private static void follow(Process process, Consumer<String> toolStarted, CompletableFuture<JsonNode> result) {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line; !result.isDone() && (line = lines.readLine()) != null; ) {
                if (line.isBlank()) {
                    continue;
                }
                JsonNode event;
                try {
                    event = HubClient.JSON.readTree(line);
                } catch (JsonProcessingException e) {
                    continue; // not a stream-json line (a warning on stdout): nothing to learn from it
                }
                switch (event.path("type").asText()) {
                    case "assistant" -> event.path("message").path("content").forEach(block -> {
                        if ("tool_use".equals(block.path("type").asText())) {
                            toolStarted.accept(block.path("name").asText("tool"));
                        }
                    });
                    case "result" -> result.complete(event);
                    default -> { } // system, user (tool results), stream events: nothing the hub needs
                }
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
