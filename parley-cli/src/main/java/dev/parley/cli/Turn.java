package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.trace.TraceBuilder;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * What works one envelope for the {@link AgentRunner}: a command, a Claude Code session, or an
 * echo; each tells what it did as a trace, through its adapter ({@code dev.parley.trace.adapter}).
 */
sealed interface Turn permits CommandTurn, ClaudeCodeTurn, EchoTurn {
    /** Most bytes of a turn's answer taken as its reply; more fails the envelope (as the hub's command runner). */
    int MAX_REPLY_BYTES = 256 * 1024;

    /** The tool the turn runs until it says otherwise, for heartbeats. */
    String tool();

    /** The adapter whose events the turn makes, as the hub's traces name it ({@code ToolKinds.ADAPTERS}). */
    String adapter();

    /**
     * Works {@code envelope} within {@code timeout}, telling {@code toolStarted} of each tool it
     * starts and {@code trace} what it does, to its stop (unless interrupted).
     */
    Outcome take(JsonNode envelope, Duration timeout, Consumer<String> toolStarted, TraceBuilder trace,
                 Optional<String> traceparent) throws InterruptedException;

    /** {@link #take} outside any trace of the caller's. */
    default Outcome take(JsonNode envelope, Duration timeout, Consumer<String> toolStarted, TraceBuilder trace)
            throws InterruptedException {
        return take(envelope, timeout, toolStarted, trace, Optional.empty());
    }

    /** What an envelope says, as a turn is given it: its text, or its data as JSON when it has no text. */
    static String body(JsonNode envelope) {
        return envelope.hasNonNull("text") ? envelope.get("text").asText() : envelope.path("data").toString();
    }

    /** What a turn made of an envelope. */
    sealed interface Outcome {
        record Output(String text) implements Outcome {
        }

        record Failed(String why) implements Outcome {
        }
    }

    /** How long a turn's output is read after its process ended (what it started may hold the pipe open). */
    Duration DRAIN = Duration.ofSeconds(5);

    /**
     * Starts {@code command} for a turn: in a process group of its own (util-linux {@code setsid},
     * where it is), so that {@link #end} reaches what it started, also what left it; stderr to the
     * runner's; without {@code PARLEY_TOKEN}, because what it runs reads text from others and must
     * not act as the node.
     */
    static Process start(List<String> command, Optional<String> traceparent) throws IOException {
        // setsid would start and fail with a status: say what is missing here, as the hub's runner does
        if (!dev.parley.server.agents.AgentRuntime.runnable(command.getFirst(),
                Optional.ofNullable(System.getenv("PATH")), java.nio.file.Path.of("").toAbsolutePath())) {
            throw new IOException("no executable " + command.getFirst() + (command.getFirst().contains("/") ? ""
                    : " on PATH"));
        }
        ProcessBuilder builder = new ProcessBuilder(dev.parley.server.agents.ProcessGroups.inOwnGroup(command)).redirectError(ProcessBuilder.Redirect.INHERIT);
        builder.environment().remove("PARLEY_TOKEN");
        // the turn's span, the OpenTelemetry way (a TRACEPARENT variable): what it sends joins the turn
        builder.environment().remove(dev.parley.core.TraceContext.VARIABLE);
        traceparent.ifPresent(t -> builder.environment().put(dev.parley.core.TraceContext.VARIABLE, t));
        return builder.start();
    }

    /** Writes {@code input} and closes stdin; a process that exits without reading it all is no error. */
    static void write(OutputStream stdin, byte[] input) {
        try (stdin) {
            stdin.write(input);
        } catch (IOException ignored) {
            // it closed its stdin early: it answers from what it read
        }
    }

    /** Reads a stream to its end, keeping at most {@code keep} bytes. */
    static byte[] readUpTo(InputStream in, int keep) {
        try (in) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buffer = new byte[8192];
            for (int n; (n = in.read(buffer)) >= 0; ) {
                out.write(buffer, 0, Math.min(n, Math.max(0, keep - out.size())));
            }
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Kills what a turn started: its process group, what still descends from it, and it; waits for it to end. */
    static void end(Process process) {
        dev.parley.server.agents.ProcessGroups.kill(process.toHandle());
    }
}
