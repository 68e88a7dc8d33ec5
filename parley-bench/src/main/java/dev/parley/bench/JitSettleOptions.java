package dev.parley.bench;

import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code --[no-]jit-settle} and {@code --max-warmup}: a warm-up that lasts until the JIT is quiet ({@link Warmup}). */
final class JitSettleOptions {
    @Spec(Spec.Target.MIXEE)
    private CommandSpec mixee;

    @Option(names = "--jit-settle", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Warm up (after --warmup, where there is one) until the JIT compilers of the bench's JVMs "
                    + "(this one, and a child hub) used under 2 %% of a core for 3 s, --max-warmup seconds at most: a "
                    + "JVM compiles its hot code through its first 10-30 s of a load, and a measurement inside that "
                    + "measures the compiling as much as the code. The warm-up taken is printed (default: on; off "
                    + "under --quick).")
    boolean jitSettle;

    @Option(names = "--max-warmup", paramLabel = "SECONDS", defaultValue = "60",
            description = "The longest warm-up with --jit-settle; a JIT not quiet by then is measured anyway, and the "
                    + "output says so (default: ${DEFAULT-VALUE}).")
    int maxWarmup;

    void validate() {
        if (maxWarmup < 1) {
            throw new ParameterException(mixee.commandLine(), "--max-warmup must be at least 1");
        }
    }

    /** A warm-up of at least {@code leastSeconds}, on until the JIT of this JVM is quiet when asked to. */
    Warmup warmup(int leastSeconds) {
        return warmup(leastSeconds, List.of(ProcessHandle.current().pid()));
    }

    /** {@link #warmup(int)} watching {@code hub}'s JVM too when it runs in a process of its own. */
    Warmup warmup(int leastSeconds, BenchHub hub) {
        return hub.isChild() ? warmup(leastSeconds, List.of(ProcessHandle.current().pid(), hub.pid()))
                : warmup(leastSeconds);
    }

    private Warmup warmup(int leastSeconds, List<Long> jvms) {
        return jitSettle ? new Warmup(leastSeconds, jvms, Math.max(leastSeconds, maxWarmup)) : Warmup.fixed(leastSeconds);
    }
}
