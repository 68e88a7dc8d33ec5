package dev.parley.bench;

import java.util.List;

/**
 * How long a load run warms up before its measured window: {@code leastSeconds}, and then, when
 * {@code jitOf} names processes (this JVM, a child hub), on until their JIT compilers have gone
 * quiet ({@link JitQuiet}), {@code mostSeconds} in all at most. A JVM compiles its hot code for
 * the first 10-30 s of a load on this 2-core machine (BENCHMARKS.md, "Issue 15, stop 63"); a
 * window inside that measures the compiling as much as the code.
 */
record Warmup(int leastSeconds, List<Long> jitOf, int mostSeconds) {
    Warmup {
        jitOf = List.copyOf(jitOf);
    }

    /** Exactly {@code seconds}. */
    static Warmup fixed(int seconds) {
        return new Warmup(seconds, List.of(), seconds);
    }

    boolean untilJitQuiet() {
        return !jitOf.isEmpty();
    }

    /** As a progress line says it: "2 s", or "2 s, then until the JIT is quiet (60 s at most)". */
    String describe() {
        return leastSeconds + " s" + (untilJitQuiet() ? ", then until the JIT is quiet (" + mostSeconds + " s at most)" : "");
    }
}
