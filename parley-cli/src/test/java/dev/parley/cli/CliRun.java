package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.server.Hub;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One in-process run of the CLI with its own captured stdout and stderr: the command runs
 * through {@link ParleyCommand#forArgs} exactly as {@link Main} runs it, minus
 * the process exit. The static helpers are what the CLI tests share.
 */
final class CliRun {
    /** The tests' mapper: the CLI itself reads and writes its trees without one (JsonTrees). */
    static final ObjectMapper JSON = new ObjectMapper();

    /** {@code [seq] from → to  kind: text}, the readable form of one envelope. */
    private static final Pattern ENVELOPE_LINE = Pattern.compile("^\\[(\\d+)] (\\S+) \\S+ (\\S+)  (\\S+): (.*)$");

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    volatile int exit = -1;

    int execute(String... args) {
        CommandLine cli = ParleyCommand.forArgs(args);
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        exit = cli.execute(args);
        return exit;
    }

    String out() {
        return out.toString();
    }

    String err() {
        return err.toString();
    }

    /** stdout as one JSON document; the run must have succeeded. */
    JsonNode json() {
        assertEquals(0, exit, this::describe);
        try {
            return JSON.readTree(out());
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + describe(), e);
        }
    }

    /** stdout as one JSON document per line (a tail under --json); the run must have succeeded. */
    List<JsonNode> jsonLines() {
        assertEquals(0, exit, this::describe);
        List<JsonNode> lines = new ArrayList<>();
        for (String line : out().lines().toList()) {
            try {
                lines.add(JSON.readTree(line));
            } catch (IOException e) {
                throw new AssertionError("not a JSON line: " + line + "\n" + describe(), e);
            }
        }
        return lines;
    }

    String describe() {
        return "exit " + exit + "\n--- stdout\n" + out() + "--- stderr\n" + err();
    }

    record Envelope(long seq, String from, String to, String kind, String text) {
    }

    static CliRun parley(String... args) {
        CliRun run = new CliRun();
        run.execute(args);
        return run;
    }

    /** A client command against {@code target} as the holder of {@code token}. */
    static String[] as(Hub target, String token, String... command) {
        return Stream.concat(Stream.of(command), Stream.of("--url", target.url(), "--token", token))
                .toArray(String[]::new);
    }

    /** Creates a node as admin and returns its token. */
    static String addNode(Hub target, String id, String... options) {
        String[] command = Stream.concat(Stream.of("node", "add", id, "--json"), Stream.of(options))
                .toArray(String[]::new);
        return parley(as(target, target.adminToken(), command)).json().path("token").asText();
    }

    /** The envelopes a tail has printed so far (complete lines only: it may be mid-write). */
    static List<Envelope> envelopes(CliRun tail) {
        String out = tail.out();
        List<Envelope> envelopes = new ArrayList<>();
        for (String line : out.substring(0, out.lastIndexOf('\n') + 1).lines().toList()) {
            Matcher m = ENVELOPE_LINE.matcher(line);
            assertTrue(m.matches(), () -> "not an envelope line: " + line);
            envelopes.add(new Envelope(Long.parseLong(m.group(1)), m.group(2), m.group(3), m.group(4), m.group(5)));
        }
        return envelopes;
    }

    /** The run failed with {@code exit}, said {@code parley: <code>: …} on stderr, and printed nothing on stdout. */
    static void assertFailure(CliRun run, int exit, String code) {
        assertEquals(exit, run.exit, run::describe);
        assertTrue(run.err().startsWith("parley: " + code + ": "), run::describe);
        assertEquals("", run.out(), run::describe);
    }
}
