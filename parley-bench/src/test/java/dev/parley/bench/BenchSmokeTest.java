package dev.parley.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.StringWriter;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Runs {@code parley bench send --quick --json --wal-frames} in this JVM. Asserts only correctness (sends
 * were accepted, every accepted envelope reached its stream), never timing figures.
 */
class BenchSmokeTest {

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void quickBenchAcceptsSendsAndLosesNone() throws Exception {
        BenchRun run = BenchRun.bench("send", "--quick", "--json", "--wal-frames");
        JsonNode result = run.result();
        assertTrue(result.get("accepted").asLong() > 0, "no send was accepted in the window" + run.context());
        assertTrue(result.get("acceptedTotal").asLong() >= result.get("accepted").asLong(), run.context());
        assertEquals(0, result.get("lost").asLong(), "accepted envelopes never seen on a stream" + run.context());
        assertEquals(result.get("acceptedTotal").asLong(), result.get("seen").asLong(), run.context());
        assertEquals(0, result.get("duplicatesOnStream").asLong(), "a seq arrived twice on a stream" + run.context());
        assertEquals(0, run.code(), "bench exit code" + run.context());
        // the hub runs in this JVM: its writer and the virtual threads that serve the sends used CPU
        JsonNode cpu = result.get("cpuMicrosPerSend");
        assertTrue(cpu.get("writer").asDouble() > 0, "no writer CPU counted" + run.context());
        assertTrue(cpu.get("virtualThreads").asDouble() > 0, "no virtual-thread CPU counted" + run.context());
        // the live store's log was read and its pages named (WalFramesTest checks the counting)
        assertTrue(result.has("walCommits") && result.get("walFramesByTree").isObject(), "no log counted" + run.context());
        assertFalse(result.get("jitSettle").asBoolean(), "--quick does not wait for the JIT" + run.context());
        assertFalse(result.has("jitQuiet"), run.context());
    }

    /**
     * Asked to wait for the JIT for at most 2 s: the quiet is judged over 3 s, so the warm-up runs to its
     * most and says the JIT was not quiet, whatever the machine.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aWarmUpShorterThanTheQuietsSpanEndsAtItsMost() throws Exception {
        BenchRun run = BenchRun.bench("send", "--quick", "--json", "--jit-settle", "--max-warmup", "2");
        JsonNode result = run.result();
        assertTrue(result.get("jitSettle").asBoolean(), run.context());
        assertFalse(result.get("jitQuiet").asBoolean(true), run.context());
        double warmedUp = result.get("warmedUpSeconds").asDouble();
        assertTrue(warmedUp >= 2 && warmedUp < 2 + 2, "warmed up " + warmedUp + " s" + run.context());
        assertTrue(run.context().contains(" s (JIT not quiet); window"), "the header says what the warm-up took" + run.context());
        assertEquals(0, result.get("lost").asLong(), run.context());
        assertEquals(0, run.code(), "bench exit code" + run.context());
    }

    @Test
    void threadsAreToldApartByTheirNames() {
        assertEquals(Machine.ThreadPart.WRITER, Machine.ThreadPart.of(dev.parley.store.SqliteStore.WRITER_THREAD));
        assertEquals(Machine.ThreadPart.VIRTUAL_THREADS, Machine.ThreadPart.of("ForkJoinPool-1-")); // comm keeps 15
        assertEquals(Machine.ThreadPart.JIT, Machine.ThreadPart.of("C2 CompilerThre"));
        assertEquals(Machine.ThreadPart.GC, Machine.ThreadPart.of("G1 Refine#0"));
        assertEquals(Machine.ThreadPart.GC, Machine.ThreadPart.of("GC Thread#1"));
        assertEquals(Machine.ThreadPart.BENCH, Machine.ThreadPart.of("bench-sse-12"));
        assertEquals(Machine.ThreadPart.BENCH, Machine.ThreadPart.of("bench-send-3"));
        assertEquals(Machine.ThreadPart.ANNOUNCER, Machine.ThreadPart.of("parley-announce")); // comm keeps 15
        assertEquals(Machine.ThreadPart.SIDE_INDEXES, Machine.ThreadPart.of("parley-side-ind"));
        assertEquals(Machine.ThreadPart.REST, Machine.ThreadPart.of("parley-checkpoi"));
    }

    @Test
    void benchWithoutSubcommandPrintsUsage() {
        StringWriter out = new StringWriter();
        assertEquals(0, BenchRun.execute(out, new StringWriter()));
        assertTrue(out.toString().contains("send"), out.toString());
    }

    @Test
    void aChildHubWithoutTheParleyCommandIsAUsageError() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        assertEquals(2, BenchRun.execute(out, err, "crash", "--quick"), err.toString());
        assertTrue(err.toString().startsWith("this bench runs the hub as a child process (parley serve), which only "
                + "the parley command can start: run it as `parley bench crash`"), err.toString());
        assertEquals("", out.toString());
    }
}
