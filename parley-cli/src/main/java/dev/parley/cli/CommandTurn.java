package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.core.ToolKind;
import dev.parley.trace.ToolKinds;
import dev.parley.trace.TraceBuilder;
import dev.parley.trace.TraceEvent;
import dev.parley.trace.adapter.CommandAdapter;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * A command per envelope ({@code parley agent run}): the envelope's text on stdin (its data as
 * JSON when it has no text), its stdout the answer; a failing status or a timeout fails it.
 * Traced by the command adapter: the run is the turn's one tool call.
 */
record CommandTurn(List<String> command, Map<String, ToolKind> toolKinds) implements Turn {
    CommandTurn {
        command = List.copyOf(command);
        toolKinds = Map.copyOf(toolKinds);
    }

    /** A turn with no tool kinds of the agent's own. */
    CommandTurn(List<String> command) {
        this(command, Map.of());
    }

    @Override
    public String tool() {
        return command.getFirst();
    }

    @Override
    public String adapter() {
        return ToolKinds.COMMAND;
    }

    @Override
    public Outcome take(JsonNode envelope, Duration timeout, Consumer<String> toolStarted, TraceBuilder trace,
                        Optional<String> traceparent)
            throws InterruptedException {
        String input = Turn.body(envelope);
        CommandAdapter run = new CommandAdapter(trace, toolKinds);
        run.started(input, command, Path.of("").toAbsolutePath());
        Process process;
        try {
            process = Turn.start(command, traceparent);
        } catch (IOException e) {
            return failed(run, TraceEvent.StopReason.ERROR, "the command cannot be started: " + e.getMessage());
        }
        try {
            CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(
                    () -> Turn.readUpTo(process.getInputStream(), MAX_REPLY_BYTES + 1), Thread::startVirtualThread);
            byte[] prompt = input.getBytes(StandardCharsets.UTF_8);
            Thread.startVirtualThread(() -> Turn.write(process.getOutputStream(), prompt));
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                return failed(run, TraceEvent.StopReason.TIMEOUT, "timed out after "
                        + dev.parley.core.DurationText.format(timeout));
            }
            byte[] stdout = out.get(DRAIN.toMillis(), TimeUnit.MILLISECONDS);
            if (stdout.length > MAX_REPLY_BYTES) {
                return failed(run, TraceEvent.StopReason.ERROR, "the command wrote more than " + MAX_REPLY_BYTES
                        + " bytes");
            }
            String text = new String(stdout, StandardCharsets.UTF_8);
            TraceEvent.Stop stop = run.exited(process.exitValue(), text);
            return stop.detail().<Outcome>map(Outcome.Failed::new).orElseGet(() -> new Outcome.Output(text.stripTrailing()));
        } catch (ExecutionException | TimeoutException e) {
            return failed(run, TraceEvent.StopReason.ERROR, "its output could not be read");
        } finally {
            Turn.end(process);
        }
    }

    private static Outcome failed(CommandAdapter run, TraceEvent.StopReason reason, String why) {
        run.ended(reason, why);
        return new Outcome.Failed(why);
    }
}
