package dev.parley.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.bench.ParleyServe;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The bench scenarios whose hub is {@code parley serve} in a child process, run through the
 * parley command as {@link Main} runs them: {@code bench crash} (SIGKILLs under load),
 * {@code bench streams}, and {@code compare}, {@code guarded} and {@code export} with
 * {@code --hub child}, in their quick modes. They assert correctness only (nothing lost or
 * read twice; every stream opened and saw the broadcast), never timing.
 */
class BenchChildHubTest {

    /** The JSON object of the bench's last stdout line (its figures go to the test log). */
    private static JsonNode result(CliRun run) throws Exception {
        System.out.println(run.out().strip());
        List<String> lines = run.out().strip().lines().toList();
        String last = lines.isEmpty() ? "" : lines.getLast();
        assertTrue(last.startsWith("{"), () -> "the last line should be the JSON result\n" + run.describe());
        return CliRun.JSON.readTree(last);
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void crashQuickLosesAndRepeatsNothing() throws Exception {
        crashQuick();
    }

    /** Batches of 20 under SIGKILL: each one committed whole or not at all, so a resent one is all duplicates or none. */
    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void crashQuickWithBatchesCommitsEachWholeOrNotAtAll() throws Exception {
        JsonNode r = crashQuick("--batch", "20");
        assertEquals(20, r.path("batch").asInt());
        assertEquals(0, r.path("halfCommitted").asLong(), "a batch resent after a kill came back partly duplicate");
        assertEquals(0, r.path("accepted").asLong() % 20, "every batch is answered whole");
    }

    /** {@code bench crash --kills 2 --quick --json} with {@code options}: nothing lost, repeated, missing or unclaimed. */
    private static JsonNode crashQuick(String... options) throws Exception {
        List<String> args = new java.util.ArrayList<>(List.of("bench", "crash", "--kills", "2", "--quick", "--json"));
        args.addAll(List.of(options));
        CliRun run = CliRun.parley(args.toArray(String[]::new));
        JsonNode r = result(run);
        assertTrue(r.path("accepted").asLong() > 0, () -> "nothing was accepted\n" + run.describe());
        assertEquals(2, r.path("kills").asInt(), run::describe);
        assertEquals(0, r.path("lost").asLong(), () -> "accepted envelopes the cursor readers never saw\n" + run.describe());
        assertEquals(0, r.path("duplicates").asLong(), () -> "an envelope id read twice\n" + run.describe());
        assertEquals(0, r.path("storeMissing").asLong(), () -> "accepted envelopes missing from the store\n" + run.describe());
        assertEquals(0, r.path("storeIdsTwice").asLong(), run::describe);
        assertEquals(0, r.path("storeUnclaimed").asLong(), () -> "envelopes no answer named\n" + run.describe());
        assertEquals(0, r.path("seqRegressions").asLong(), run::describe);
        assertEquals(r.path("accepted").asLong(), r.path("auditEntries").asLong(),
                () -> "one audit entry for each accepted send, killed before its copy or after\n" + run.describe());
        assertEquals(0, r.path("auditMissing").asLong(), run::describe);
        assertEquals(0, r.path("auditIdsTwice").asLong(), run::describe);
        assertEquals(0, run.exit, run::describe);
        return r;
    }

    /**
     * With the hub as {@code parley serve} beside it, the comparison says the hub's own CPU a send; its
     * warm-up watched the JIT of both JVMs, from its least to its most.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void compareWithAChildHubSaysTheHubsCpuASend() throws Exception {
        CliRun run = CliRun.parley("bench", "compare", "--hub", "child", "--only", "parley", "--quick", "--json",
                "--jit-settle", "--max-warmup", "3");
        JsonNode parley = result(run).path("parley");
        assertEquals(2, parley.path("jitWatchedJvms").asInt(), () -> "the bench's JVM and the hub's\n" + run.describe());
        assertTrue(parley.path("perSec").asDouble() > 0, () -> "no acknowledged send in the window\n" + run.describe());
        assertEquals(0, parley.path("lost").asLong(), () -> "accepted but never streamed\n" + run.describe());
        // a number (the hub's process was read), not null as for a hub in the bench's own JVM
        assertTrue(parley.path("serverCpuMicrosEach").isNumber(),
                () -> "the child hub's CPU over the sends acknowledged in the window\n" + run.describe());
        assertTrue(parley.path("jitQuiet").isBoolean(), run::describe);
        double warmedUp = parley.path("warmedUpSeconds").asDouble();
        assertTrue(warmedUp >= 1 && warmedUp < 3 + 1, () -> "warmed up " + warmedUp + " s\n" + run.describe());
        assertEquals(0, run.exit, run::describe);
    }

    /**
     * With {@code --hub child} the alternating benches run each variant's hub as a {@code parley serve}
     * of its own, told the variant's setup by its arguments (guarded: {@code --policy}, whose 20 rules
     * the hub must then report) or its environment (export: the OTLP variables, and the run with export
     * on must then have exported), and say each hub's CPU a send. Each warm-up watches the JIT of
     * the hub's JVM as well as the bench's.
     */
    @ParameterizedTest
    @ValueSource(strings = {"guarded", "export"})
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void alternatingBenchesRunEachHubInAProcessOfItsOwn(String bench) throws Exception {
        CliRun run = CliRun.parley("bench", bench, "--hub", "child", "--quick", "--json", "--jit-settle",
                "--max-warmup", "1");
        JsonNode r = result(run);
        assertEquals("child", r.path("hub").asText(), run::describe);
        assertEquals(2, r.path("runs").size(), run::describe);
        for (JsonNode each : r.path("runs")) {
            assertTrue(each.path("accepted").asLong() > 0, () -> "no send was accepted\n" + run.describe());
            assertEquals(0, each.path("lost").asLong(), run::describe);
            assertEquals(0, each.path("errors").asLong(), run::describe);
            assertTrue(each.path("hubCpuMicrosPerSend").asDouble() > 0,
                    () -> "the child hub's CPU over the sends accepted in the window\n" + run.describe());
            assertEquals(2, each.path("jitWatchedJvms").asInt(), () -> "the bench's JVM and the hub's\n" + run.describe());
        }
        if (bench.equals("guarded")) {
            assertEquals(20, r.path("guardedHub").path("rules").asInt(), run::describe);
        } else {
            assertTrue(r.path("runs").get(1).path("spansExportedByEnd").asLong() > 0,
                    () -> "the child hub with export on exported nothing\n" + run.describe());
        }
        assertEquals(0, run.exit, run::describe);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void streamsQuickDeliversTheBroadcastToEveryStream() throws Exception {
        CliRun run = CliRun.parley("bench", "streams", "--quick", "--json");
        JsonNode r = result(run);
        int count = r.get("count").asInt();
        assertTrue(count > 0, run::describe);
        assertEquals(count, r.get("ready").asInt(), () -> "every stream should have opened\n" + run.describe());
        assertEquals(0, r.get("failed").asInt(), run::describe);
        assertEquals(count, r.get("broadcastDelivered").asInt(), () -> "the broadcast should reach every node\n" + run.describe());
        assertEquals(count, r.get("broadcastSeen").asInt(), () -> "every stream should see the broadcast\n" + run.describe());
        assertEquals(0, r.get("broadcastMissed").asInt(), run::describe);
        assertTrue(r.get("hubInChildProcess").asBoolean(), () -> "the hub runs as a child process by default\n" + run.describe());
        assertTrue(r.get("rssMiB").asDouble() > 0, () -> "the hub's RSS should be read\n" + run.describe());
        List<String> hubOptions = CliRun.JSON.convertValue(r.get("hubJavaOptions"),
                CliRun.JSON.getTypeFactory().constructCollectionType(List.class, String.class));
        assertEquals(ParleyServe.of(Main.class).javaOptions(), hubOptions,
                () -> "the child hub runs with ./parley serve's JVM options (serve-jvm.options)\n" + run.describe());
        assertEquals(0, run.exit, run::describe);
    }
}
