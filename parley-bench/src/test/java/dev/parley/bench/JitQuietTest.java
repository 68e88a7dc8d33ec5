package dev.parley.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * When a warm-up's JIT counts as quiet: the compilers' CPU over the last 3 s at most 2 % of a
 * core, fed as /proc's clock ticks (1/100 s) at the instants the bench samples them.
 */
class JitQuietTest {
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    /**
     * Samples every 250 ms of a compiler busy on a whole core for {@code busyMs}, then using
     * {@code ticksASecondAfter} ticks a second; answers the first instant (ms) quiet, or -1 within a minute.
     */
    private static long firstQuietMs(long busyMs, long ticksASecondAfter) {
        JitQuiet quiet = new JitQuiet();
        for (long t = 0; t <= 60_000; t += 250) {
            long ticks = t <= busyMs ? t / 10 : busyMs / 10 + (t - busyMs) * ticksASecondAfter / 1000;
            if (quiet.observe(t * MS, ticks)) {
                return t;
            }
        }
        return -1;
    }

    @Test
    void quietThreeSecondsAfterTheCompilingStops() {
        assertEquals(8_000, firstQuietMs(5_000, 0));
        assertEquals(23_000, firstQuietMs(20_000, 1)); // a method now and then: 3 ticks in 3 s
    }

    @Test
    void neverQuietWhileTheCompilersUseMoreThanTwoPercentOfACore() {
        assertEquals(-1, firstQuietMs(5_000, 3)); // 9 ticks in 3 s: 3 %
        assertEquals(-1, firstQuietMs(60_000, 0));
    }

    /** Without three seconds of samples it cannot say, even of compilers that did nothing. */
    @Test
    void notQuietBeforeItHasSeenThreeSeconds() {
        JitQuiet quiet = new JitQuiet();
        assertFalse(quiet.observe(0, 500));
        assertFalse(quiet.observe(2_999 * MS, 500));
        assertTrue(quiet.observe(3_000 * MS, 500));
    }

    /** A burst of 70 ms of compiling keeps it busy until the burst is older than the span (samples every 500 ms). */
    @Test
    void aBurstKeepsItBusyForASpan() {
        JitQuiet quiet = new JitQuiet();
        long firstQuietAfterBurst = -1;
        for (long t = 0; t <= 20_000; t += 500) {
            boolean answer = quiet.observe(t * MS, t > 10_000 ? 7 : 0); // the burst falls between 10 and 10.5 s
            if (t == 3_000 || t == 10_000) {
                assertTrue(answer, "quiet at " + t + " ms");
            }
            if (t > 10_000 && answer && firstQuietAfterBurst < 0) {
                firstQuietAfterBurst = t;
            }
        }
        assertEquals(13_500, firstQuietAfterBurst);
    }

    /** Samples far apart: the span is the time back to the newest sample at least 3 s old, however long. */
    @Test
    void samplesFarApartAreMeasuredOverTheirWholeGap() {
        JitQuiet quiet = new JitQuiet();
        assertFalse(quiet.observe(0, 0));
        assertTrue(quiet.observe(10_000 * MS, 20)); // 200 ms in 10 s: 2 %
        assertFalse(quiet.observe(20_000 * MS, 41)); // 210 ms in the 10 s since: 2.1 %
    }

    /** The JIT's threads of a process are found by /proc's names: this JVM's C1 and C2 compilers. */
    @Test
    void aJvmsCompilerThreadsAreCounted() {
        Machine.ThreadTicks threads = Machine.ThreadTicks.of(ProcessHandle.current().pid());
        assertTrue(threads.threads().values().stream().anyMatch(t -> t.part() == Machine.ThreadPart.JIT),
                "a compiler thread among " + threads.threads().size() + " threads");
        assertTrue(threads.ticksUntil(Machine.ThreadTicks.of(ProcessHandle.current().pid()), Machine.ThreadPart.JIT) >= 0);
    }
}
