package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * A command per envelope ({@code parley agent run}): the envelope's text on stdin (its data as
 * JSON when it has no text), its stdout the answer; a failing status or a timeout fails it.
 */
record CommandTurn(List<String> command) implements Turn {
    CommandTurn {
        command = List.copyOf(command);
    }

    @Override
    public String tool() {
        return command.getFirst();
    }

    @Override
    public Outcome take(JsonNode envelope, Duration timeout, Consumer<String> toolStarted) throws InterruptedException {
        byte[] prompt = (envelope.hasNonNull("text") ? envelope.get("text").asText()
                : envelope.path("data").toString()).getBytes(StandardCharsets.UTF_8);
        Process process;
        try {
            process = Turn.start(command);
        } catch (IOException e) {
            return new Outcome.Failed("the command cannot be started: " + e.getMessage());
        }
        try {
            CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(
                    () -> Turn.readUpTo(process.getInputStream(), MAX_REPLY_BYTES + 1), Thread::startVirtualThread);
            Thread.startVirtualThread(() -> Turn.write(process.getOutputStream(), prompt));
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                return new Outcome.Failed("timed out after " + dev.parley.core.DurationText.format(timeout));
            }
            byte[] stdout = out.get(DRAIN.toMillis(), TimeUnit.MILLISECONDS);
            if (stdout.length > MAX_REPLY_BYTES) {
                return new Outcome.Failed("the command wrote more than " + MAX_REPLY_BYTES + " bytes");
            }
            return process.exitValue() == 0
                    ? new Outcome.Output(new String(stdout, StandardCharsets.UTF_8).stripTrailing())
                    : new Outcome.Failed("the command exited with status " + process.exitValue());
        } catch (ExecutionException | TimeoutException e) {
            return new Outcome.Failed("its output could not be read");
        } finally {
            Turn.end(process);
        }
    }
}
