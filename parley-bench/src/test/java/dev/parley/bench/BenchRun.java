package dev.parley.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.stream.Collectors;
import picocli.CommandLine;

/**
 * One in-process run of {@code bench} (without {@code parley serve}: in-process hubs only)
 * with its exit code, the JSON object of its last stdout line and, for assertion messages,
 * its output.
 */
record BenchRun(int code, JsonNode result, String context) {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Runs {@code bench args} (which should include --json) and prints its stdout to the test log. */
    static BenchRun bench(String... args) throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = execute(out, err, args);
        // without stack frames, so that an exception's message and causes survive the cut to the tail
        String context = "\n--- stdout ---\n" + out + "\n--- stderr (tail, no stack frames) ---\n"
                + tail(err.toString().lines().filter(l -> !l.startsWith("\tat ")).collect(Collectors.joining("\n")), 6000);
        System.out.println(out.toString().strip());
        String[] lines = out.toString().strip().split("\\R");
        String last = lines[lines.length - 1];
        assertTrue(last.startsWith("{"), "the last line should be the JSON result" + context);
        return new BenchRun(code, JSON.readTree(last), context);
    }

    static int execute(StringWriter out, StringWriter err, String... args) {
        CommandLine cli = new CommandLine(new BenchCommand());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    private static String tail(String s, int max) {
        return s.length() <= max ? s : s.substring(s.length() - max);
    }
}
