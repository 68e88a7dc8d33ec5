package dev.parley.cli.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.cli.bench.BenchCommand;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * Runs {@code parley bench send --quick --json} in this JVM. Asserts only correctness (sends
 * were accepted, every accepted envelope reached its stream), never timing figures.
 */
class BenchSmokeTest {

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void quickBenchAcceptsSendsAndLosesNone() throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new BenchCommand());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));

        int code = cli.execute("send", "--quick", "--json");

        String context = "\n--- stdout ---\n" + out + "\n--- stderr ---\n" + err;
        String[] lines = out.toString().strip().split("\\R");
        String last = lines[lines.length - 1];
        assertTrue(last.startsWith("{"), "the last line should be the JSON result" + context);
        JsonNode result = new ObjectMapper().readTree(last);
        assertTrue(result.get("accepted").asLong() > 0, "no send was accepted in the window" + context);
        assertTrue(result.get("acceptedTotal").asLong() >= result.get("accepted").asLong(), context);
        assertEquals(0, result.get("lost").asLong(), "accepted envelopes never seen on a stream" + context);
        assertEquals(result.get("acceptedTotal").asLong(), result.get("seen").asLong(), context);
        assertEquals(0, result.get("duplicatesOnStream").asLong(), "a seq arrived twice on a stream" + context);
        assertEquals(0, code, "bench exit code" + context);
    }

    @Test
    void benchWithoutSubcommandPrintsUsage() {
        StringWriter out = new StringWriter();
        CommandLine cli = new CommandLine(new BenchCommand());
        cli.setOut(new PrintWriter(out, true));
        assertEquals(0, cli.execute());
        assertTrue(out.toString().contains("send"), out.toString());
    }
}
