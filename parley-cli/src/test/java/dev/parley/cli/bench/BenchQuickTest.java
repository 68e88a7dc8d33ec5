package dev.parley.cli.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * The quick modes of {@code bench compare}, {@code bench crash} and {@code bench growth}, run
 * by the test command. They assert correctness only (both sides produced figures, nothing was
 * lost or duplicated) and log the ratios; timing never fails them. Without nats-server the
 * compare test is skipped (./test installs it when it can).
 */
class BenchQuickTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private record Run(int code, JsonNode result, String context) {
    }

    private static Run bench(String... args) throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new BenchCommand());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        int code = cli.execute(args);
        // without stack frames, so that an exception's message and causes survive the cut to the tail
        String context = "\n--- stdout ---\n" + out + "\n--- stderr (tail, no stack frames) ---\n"
                + tail(err.toString().lines().filter(l -> !l.startsWith("\tat ")).collect(Collectors.joining("\n")), 6000);
        String[] lines = out.toString().strip().split("\\R");
        String last = lines[lines.length - 1];
        assertTrue(last.startsWith("{"), "the last line should be the JSON result" + context);
        System.out.println(out.toString().strip());
        return new Run(code, JSON.readTree(last), context);
    }

    private static String tail(String s, int max) {
        return s.length() <= max ? s : s.substring(s.length() - max);
    }

    private static void assertFigures(JsonNode side, String name, String context) {
        assertTrue(side.isObject(), name + " figures missing" + context);
        assertTrue(side.path("perSec").asDouble() > 0, name + ": no acknowledged send in the window" + context);
        assertTrue(side.path("p50Ms").isNumber(), name + ": no p50" + context);
        assertTrue(side.path("p99Ms").isNumber(), name + ": no p99" + context);
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void compareQuickGivesFiguresForBothSides() throws Exception {
        Assumptions.assumeTrue(NatsServerProcess.find().isPresent(),
                "skipped: " + NatsServerProcess.missingMessage() + " (./test installs it when run as root)");
        Run run = bench("compare", "--quick", "--json");
        assertFigures(run.result.path("parley"), "parley", run.context);
        assertFigures(run.result.path("jetstream"), "jetstream", run.context);
        assertEquals(0, run.result.path("parley").path("lost").asLong(), "parley: accepted but never streamed" + run.context);
        assertEquals(0, run.result.path("parley").path("duplicates").asLong(), run.context);
        assertTrue(run.result.path("ratio").isNumber(), "no ratio" + run.context);
        System.out.printf("bench compare --quick: parley/jetstream throughput ratio %.3f (parley %.0f/s p99 %.1f ms, "
                        + "jetstream %.0f/s p99 %.1f ms); timing is logged, never asserted%n",
                run.result.path("ratio").asDouble(), run.result.path("parley").path("perSec").asDouble(),
                run.result.path("parley").path("p99Ms").asDouble(), run.result.path("jetstream").path("perSec").asDouble(),
                run.result.path("jetstream").path("p99Ms").asDouble());
        assertEquals(0, run.code, "bench exit code" + run.context);
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void crashQuickLosesAndRepeatsNothing() throws Exception {
        Run run = bench("crash", "--kills", "2", "--quick", "--json");
        JsonNode r = run.result;
        assertTrue(r.path("accepted").asLong() > 0, "nothing was accepted" + run.context);
        assertEquals(2, r.path("kills").asInt(), run.context);
        assertEquals(0, r.path("lost").asLong(), "accepted envelopes the cursor readers never saw" + run.context);
        assertEquals(0, r.path("duplicates").asLong(), "an envelope id read twice" + run.context);
        assertEquals(0, r.path("storeMissing").asLong(), "accepted envelopes missing from the store" + run.context);
        assertEquals(0, r.path("storeIdsTwice").asLong(), run.context);
        assertEquals(0, r.path("storeUnclaimed").asLong(), "envelopes no answer named" + run.context);
        assertEquals(0, r.path("seqRegressions").asLong(), run.context);
        assertEquals(0, run.code, "bench exit code" + run.context);
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void growthQuickMeasuresEverySize() throws Exception {
        Run run = bench("growth", "--quick", "--sizes", "500,5000", "--warmup", "0", "--seconds", "2", "--json");
        JsonNode sizes = run.result.path("sizes");
        assertEquals(2, sizes.size(), run.context);
        for (JsonNode s : sizes) {
            assertTrue(s.path("perSec").asDouble() > 0, "no sends at " + s.path("stored") + run.context);
            assertEquals(0, s.path("lost").asLong(), run.context);
        }
        System.out.printf("bench growth --quick: sends/s at 5,000 stored / at 500 stored = %.3f (logged, never asserted)%n",
                run.result.path("ratio").asDouble());
        assertEquals(0, run.code, "bench exit code" + run.context);
    }
}
