package dev.parley.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The quick modes of {@code bench compare}, {@code bench federation} and {@code bench growth}, run by the test command
 * ({@code bench crash}, whose hub is {@code parley serve} in a child process, is run by the
 * parley-cli tests). They assert correctness only (both sides produced figures, nothing was
 * lost or duplicated) and log the ratios; timing never fails them. Without nats-server the
 * compare and federation tests are skipped (./test installs it when it can).
 */
class BenchQuickTest {

    private static void assumeNatsServer() {
        Assumptions.assumeTrue(NatsServerProcess.find().isPresent(),
                "skipped: " + NatsServerProcess.missingMessage() + " (./test installs it when run as root)");
    }

    /**
     * A side's CPU a message is its share of the cores in the window over the messages acknowledged
     * in it (zero only if the process got no clock tick in the window, which a starved machine may do).
     */
    private static void assertCpuEach(JsonNode side, String percent, String each, String context) {
        double expected = side.path(percent).asDouble() / 100 * Runtime.getRuntime().availableProcessors() * 1e6
                / side.path("perSec").asDouble();
        assertTrue(side.path(each).isNumber(), each + " missing" + context);
        assertEquals(expected, side.path(each).asDouble(), expected * 0.001 + 0.01, each + context);
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
        compareQuick();
    }

    /** Batches on the Parley side, publishAsync on JetStream's: every envelope of every batch accepted and streamed. */
    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void compareQuickWithBatchesLosesNothing() throws Exception {
        BenchRun run = compareQuick("--batch", "50");
        assertEquals(50, run.result().path("batch").asInt(), run.context());
        assertEquals(0, run.result().path("parley").path("errors").asLong(),
                "every batch answered with every envelope accepted" + run.context());
        assertEquals(0, run.result().path("jetstream").path("errors").asLong(), run.context());
    }

    /**
     * Two rounds: each has both sides' figures (Parley's with nothing lost or streamed twice), the
     * second starts with JetStream, and the headline ratio is the median of the rounds' ratios.
     */
    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void compareInRoundsAlternatesTheSidesAndReportsTheMedianRatio() throws Exception {
        assumeNatsServer();
        BenchRun run = BenchRun.bench("compare", "--quick", "--rounds", "2", "--json");
        assertEquals(0, run.code(), "bench exit code" + run.context());
        JsonNode rounds = run.result().path("rounds");
        assertEquals(2, rounds.size(), run.context());
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            JsonNode round = rounds.get(i);
            assertEquals(i == 0 ? "parley" : "jetstream", round.path("first").asText(), "who runs first" + run.context());
            assertFigures(round.path("parley"), "parley, round " + (i + 1), run.context());
            assertFigures(round.path("jetstream"), "jetstream, round " + (i + 1), run.context());
            assertEquals(0, round.path("parley").path("lost").asLong(), "accepted but never streamed" + run.context());
            assertEquals(0, round.path("parley").path("duplicates").asLong(), run.context());
            double ratio = round.path("parley").path("perSec").asDouble() / round.path("jetstream").path("perSec").asDouble();
            assertEquals(ratio, round.path("ratio").asDouble(), 0.001, "round " + (i + 1) + "'s ratio" + run.context());
            ratios.add(round.path("ratio").asDouble());
        }
        assertEquals((ratios.get(0) + ratios.get(1)) / 2, run.result().path("ratio").asDouble(), 0.002,
                "the headline ratio is the median of two rounds: their mean" + run.context());
        assertTrue(run.result().path("parley").isMissingNode(), "no single-run figures beside the rounds" + run.context());
        double wake = run.result().path("wakeRoundTripMicros").asDouble();
        assertTrue(wake > 0 && Double.isFinite(wake), "the machine's wake-up round trip measured" + run.context());
        assertTrue(run.context().contains("machine: a wake-up round trip between two threads "), run.context());
    }

    /**
     * With {@code --jit-settle} a side warms up at least {@code --warmup} and at most {@code --max-warmup}
     * seconds, and says whether its JIT went quiet (which a fresh hub's does not in 3 s on a busy machine,
     * and may on an idle one: not asserted).
     */
    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void aSettledWarmUpLastsFromItsLeastToItsMost() throws Exception {
        BenchRun run = BenchRun.bench("compare", "--quick", "--only", "parley", "--jit-settle", "--max-warmup", "3", "--json");
        assertEquals(0, run.code(), "bench exit code" + run.context());
        assertTrue(run.result().path("jitSettle").asBoolean(), run.context());
        assertEquals(3, run.result().path("maxWarmupSeconds").asInt(), run.context());
        JsonNode parley = run.result().path("parley");
        assertFigures(parley, "parley", run.context());
        assertTrue(parley.path("jitQuiet").isBoolean(), run.context());
        double warmedUp = parley.path("warmedUpSeconds").asDouble();
        // a second's least under --quick; the most, plus one sampling of the JIT's threads late
        assertTrue(warmedUp >= 1 && warmedUp < 3 + 1, "warmed up " + warmedUp + " s" + run.context());
        assertTrue(run.context().contains("warm-up taken: parley "), run.context());
    }

    @Test
    void aMaxWarmUpUnderASecondIsRefused() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        assertEquals(2, BenchRun.execute(out, err, "compare", "--quick", "--max-warmup", "0"), err.toString());
        assertTrue(err.toString().contains("--max-warmup must be at least 1"), err.toString());
    }

    /**
     * {@code --hub} takes in-process or child, and the options that set up a hub's own process
     * ({@code bench streams --hub-java-opt}, {@code --open-files}) need a child: refused as usage
     * before any hub starts.
     */
    @Test
    void hubPlacementsAreCheckedBeforeAnyHubStarts() {
        for (String[] args : List.of(new String[] {"streams", "--quick", "--hub", "in-process", "--open-files", "1024"},
                new String[] {"streams", "--quick", "--hub", "in-process", "--hub-java-opt=-Xmx256m"},
                new String[] {"guarded", "--quick", "--hub", "elsewhere"},
                new String[] {"replay", "--quick", "--hub", "elsewhere"},
                new String[] {"compare", "--quick", "--hub", "elsewhere"})) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            assertEquals(2, BenchRun.execute(out, err, args), String.join(" ", args) + ": " + err);
            assertTrue(err.toString().contains(args[3].equals("elsewhere") ? "--hub must be in-process or child"
                    : "need --hub child"), err.toString());
        }
    }

    /** Rounds compare the two sides: with one side only or with the floor they are refused as usage, as are 0 and 21. */
    @Test
    void roundsAreRefusedWithOneSideTheFloorOrOutOfRange() {
        for (String[] args : List.of(new String[] {"compare", "--quick", "--rounds", "2", "--only", "parley"},
                new String[] {"compare", "--quick", "--rounds", "2", "--floor"},
                new String[] {"compare", "--quick", "--rounds", "0"},
                new String[] {"compare", "--quick", "--rounds", "21"})) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            assertEquals(2, BenchRun.execute(out, err, args), String.join(" ", args) + ": " + err);
            assertTrue(err.toString().contains("--rounds"), err.toString());
        }
    }

    /**
     * The transport floor beside Parley's side (no nats-server needed): all three floors carry every
     * acknowledged send to its stream once, with no errors; their figures are logged, never asserted.
     */
    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void compareQuickWithTheFloorStreamsEveryFloorSendOnce() throws Exception {
        BenchRun run = BenchRun.bench("compare", "--quick", "--only", "parley", "--floor", "--json");
        assertEquals(0, run.code(), "bench exit code" + run.context());
        assertFigures(run.result().path("parley"), "parley", run.context());
        for (String floor : List.of("floorHttp", "floorHttpFsync", "floorHttpDirect")) {
            JsonNode side = run.result().path(floor);
            assertFigures(side, floor, run.context());
            assertEquals(0, side.path("errors").asLong(), floor + ": errors" + run.context());
            assertEquals(0, side.path("lost").asLong(), floor + ": acknowledged but never streamed" + run.context());
            assertEquals(0, side.path("duplicates").asLong(), floor + ": streamed twice" + run.context());
        }
    }

    /** The floor measures single sends beside Parley: with batches, or without Parley's side, it is refused as usage. */
    @Test
    void theFloorIsRefusedWithBatchesOrWithoutParley() {
        for (String[] args : List.of(new String[] {"compare", "--quick", "--floor", "--batch", "10"},
                new String[] {"compare", "--quick", "--floor", "--only", "jetstream"})) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            assertEquals(2, BenchRun.execute(out, err, args), String.join(" ", args) + ": " + err);
            assertTrue(err.toString().contains("--floor measures single sends beside Parley's side"), err.toString());
        }
    }

    /**
     * {@code bench compare --quick --json} with {@code options}: figures for both sides, nothing
     * Parley accepted lost or streamed twice, a ratio; the ratio is logged, never asserted.
     */
    private static BenchRun compareQuick(String... options) throws Exception {
        assumeNatsServer();
        List<String> args = new ArrayList<>(List.of("compare", "--quick", "--json"));
        args.addAll(List.of(options));
        BenchRun run = BenchRun.bench(args.toArray(String[]::new));
        assertFigures(run.result().path("parley"), "parley", run.context());
        assertFigures(run.result().path("jetstream"), "jetstream", run.context());
        assertEquals(0, run.result().path("parley").path("lost").asLong(), "parley: accepted but never streamed" + run.context());
        assertEquals(0, run.result().path("parley").path("duplicates").asLong(), run.context());
        assertTrue(run.result().path("ratio").isNumber(), "no ratio" + run.context());
        assertCpuEach(run.result().path("jetstream"), "serverCpuPercent", "serverCpuMicrosEach", run.context());
        assertCpuEach(run.result().path("jetstream"), "clientCpuPercent", "clientCpuMicrosEach", run.context());
        assertCpuEach(run.result().path("parley"), "clientCpuPercent", "clientCpuMicrosEach", run.context());
        assertTrue(run.result().path("parley").path("serverCpuMicrosEach").isNull(),
                "the hub runs in the bench's JVM: its CPU is the client's" + run.context());
        assertFalse(run.result().path("jitSettle").asBoolean(true), "--quick warms up for its second only" + run.context());
        assertTrue(run.result().path("parley").path("jitQuiet").isMissingNode(), run.context());
        System.out.printf("bench %s: parley/jetstream throughput ratio %.3f (parley %.0f/s p99 %.1f ms, "
                        + "jetstream %.0f/s p99 %.1f ms); timing is logged, never asserted%n", String.join(" ", args),
                run.result().path("ratio").asDouble(), run.result().path("parley").path("perSec").asDouble(),
                run.result().path("parley").path("p99Ms").asDouble(), run.result().path("jetstream").path("perSec").asDouble(),
                run.result().path("jetstream").path("p99Ms").asDouble());
        assertEquals(0, run.code(), "bench exit code" + run.context());
        return run;
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void federationQuickDeliversEveryCrossGatewaySendOnce() throws Exception {
        assumeNatsServer();
        // a busy machine may deliver behind the 202s: the drain waits for every arrival, up to a minute
        BenchRun run = BenchRun.bench("federation", "--quick", "--drain-seconds", "60", "--json");
        JsonNode federated = run.result().path("federation");
        assertFigures(federated, "cross-gateway", run.context());
        assertFigures(run.result().path("singleHub"), "single hub", run.context());
        assertEquals(0, federated.path("lost").asLong(), "cross-gateway: accepted but never streamed" + run.context());
        assertEquals(0, federated.path("duplicates").asLong(), run.context());
        System.out.printf("bench federation --quick: cross-gateway/single-hub ratio %.3f (cross-gateway %.0f/s p99 %.1f"
                        + " ms); timing is logged, never asserted%n", run.result().path("ratio").asDouble(),
                federated.path("perSec").asDouble(), federated.path("p99Ms").asDouble());
        assertEquals(0, run.code(), "bench exit code" + run.context());
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void growthQuickMeasuresEverySize() throws Exception {
        BenchRun run = BenchRun.bench("growth", "--quick", "--sizes", "500,5000", "--warmup", "0", "--seconds", "2", "--json");
        JsonNode sizes = run.result().path("sizes");
        assertEquals(2, sizes.size(), run.context());
        for (JsonNode s : sizes) {
            assertTrue(s.path("perSec").asDouble() > 0, "no sends at " + s.path("stored") + run.context());
            assertEquals(0, s.path("lost").asLong(), run.context());
        }
        System.out.printf("bench growth --quick: sends/s at 5,000 stored / at 500 stored = %.3f (logged, never asserted)%n",
                run.result().path("ratio").asDouble());
        assertEquals(0, run.code(), "bench exit code" + run.context());
    }
}
