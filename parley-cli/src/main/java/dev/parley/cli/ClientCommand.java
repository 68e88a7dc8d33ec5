package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.Callable;

/**
 * A command that talks to a running hub. Subclasses say what to ask and how to show the
 * answer; this class owns the connection options, {@code --json}, and the one mapping from a
 * failed request to {@code parley: <code>: <message>} on stderr plus an {@link ExitStatus}.
 *
 * <p>Output goes through picocli's writers ({@code CommandLine.setOut/setErr}) so the
 * commands can run in-process with captured streams.
 */
abstract class ClientCommand implements Callable<Integer> {

    @Mixin
    HubOptions hub;

    @Spec
    CommandSpec spec;

    /** What the command ends with when every request succeeded; see {@link #exitWith(int)}. */
    private int status = ExitStatus.OK;

    @Override
    public final Integer call() {
        try (HubClient client = hub.connect(authenticated())) {
            execute(client);
            return status;
        } catch (HubException e) {
            err().println("parley: " + e.code() + ": " + e.getMessage());
            return e.exitStatus();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ExitStatus.INTERRUPTED;
        } finally {
            out().flush();
            err().flush();
        }
    }

    /** Does the request(s) and prints the outcome; a failed request throws {@link HubException}. */
    protected abstract void execute(HubClient client) throws InterruptedException;

    /** Whether the command acts as the holder of {@code --token}; false only for the admission handshake. */
    protected boolean authenticated() {
        return true;
    }

    /**
     * Ends the command with {@code exitStatus} although every request succeeded: an answer
     * that is itself a verdict scripts test for (a policy check that says deny).
     */
    protected final void exitWith(int exitStatus) {
        this.status = exitStatus;
    }

    /** What the command will end with so far. */
    protected final int exitStatus() {
        return status;
    }

    protected final PrintWriter out() {
        return spec.commandLine().getOut();
    }

    protected final PrintWriter err() {
        return spec.commandLine().getErr();
    }

    /** Prints the hub's answer verbatim (one line) under {@code --json}, else runs {@code readable}. */
    protected final void emit(JsonNode answer, Runnable readable) {
        if (hub.json()) {
            out().println(answer.toString());
        } else {
            readable.run();
        }
        out().flush();
    }

    /** One readable line: {@code head  key=value  key=value}. */
    protected final void line(String head, String... keysAndValues) {
        StringBuilder line = new StringBuilder(head);
        for (int i = 0; i + 1 < keysAndValues.length; i += 2) {
            line.append("  ").append(keysAndValues[i]).append('=').append(keysAndValues[i + 1]);
        }
        out().println(line);
    }

    /**
     * A field of an answer as short text: {@code -} for null or absent, lists joined with
     * commas, objects as {@code k=v} pairs (labels, meta).
     */
    protected static String field(JsonNode answer, String name) {
        JsonNode value = answer.path(name);
        if (value.isMissingNode() || value.isNull()) {
            return "-";
        }
        if (value.isArray()) {
            StringJoiner items = new StringJoiner(",");
            value.forEach(item -> items.add(item.isValueNode() ? item.asText() : item.toString()));
            return items.length() == 0 ? "-" : items.toString();
        }
        if (value.isObject()) {
            StringJoiner pairs = new StringJoiner(",");
            for (Map.Entry<String, JsonNode> pair : value.properties()) {
                JsonNode v = pair.getValue();
                pairs.add(pair.getKey() + "=" + (v.isValueNode() ? v.asText() : v.toString()));
            }
            return pairs.length() == 0 ? "-" : pairs.toString();
        }
        return value.asText();
    }
}
