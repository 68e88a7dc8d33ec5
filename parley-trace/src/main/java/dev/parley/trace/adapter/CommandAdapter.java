package dev.parley.trace.adapter;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.ToolKind;
import dev.parley.trace.ToolKinds;
import dev.parley.trace.TraceBuilder;
import dev.parley.trace.TraceEvent;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The trace of a command turn, one process run: the input as the user's message, the run as the
 * one tool call ({@code command}, input {@code {argv, workdir}}), its exit status and stdout as
 * the result, stdout as the answer when it exited 0, the stop. The runner runs the process and
 * tells this what happened.
 */
public final class CommandAdapter {
    /** The tool a command turn calls, as the {@code command} table names it. */
    public static final String TOOL = "command";
    /** The call id of a turn's one run. */
    static final String CALL = "run";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final TraceBuilder trace;
    private final Map<String, ToolKind> overrides;

    public CommandAdapter(TraceBuilder trace, Map<String, ToolKind> overrides) {
        this.trace = trace;
        this.overrides = Map.copyOf(overrides);
    }

    /** The turn was given {@code input} and runs {@code argv} in {@code workdir}. */
    public void started(String input, List<String> argv, Path workdir) {
        trace.message(TraceEvent.Role.USER, input);
        ObjectNode call = JSON.createObjectNode();
        argv.forEach(call.putArray("argv")::add);
        call.put("workdir", workdir.toString());
        trace.toolCall(CALL, TOOL, ToolKinds.builtIn().resolve(ToolKinds.COMMAND, overrides, TOOL), call);
    }

    /**
     * The process exited with {@code status} having written {@code stdout}: 0 answers with it
     * (trailing whitespace dropped), any other fails the turn, the stop's detail saying why.
     */
    public TraceEvent.Stop exited(int status, String stdout) {
        trace.toolResult(CALL, status != 0, "exit status " + status + (stdout.isEmpty() ? "" : "\n" + stdout));
        if (status != 0) {
            return trace.stop(TraceEvent.StopReason.ERROR, Optional.of("the command exited with status " + status));
        }
        trace.message(TraceEvent.Role.ASSISTANT, stdout.stripTrailing());
        return trace.stop(TraceEvent.StopReason.END_TURN, Optional.empty());
    }

    /** The run came to nothing ({@code reason}: timeout, error): why, as its result and the stop's detail. */
    public void ended(TraceEvent.StopReason reason, String why) {
        trace.toolResult(CALL, true, why);
        trace.stop(reason, Optional.of(why));
    }
}
