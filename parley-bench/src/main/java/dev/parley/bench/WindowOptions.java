package dev.parley.bench;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code --warmup} and {@code --seconds}: the warm-up and the measured window of a load run. */
final class WindowOptions {
    @Spec(Spec.Target.MIXEE)
    private CommandSpec mixee;

    @Option(names = "--seconds", defaultValue = "10", descriptionKey = "seconds",
            description = "Measured window in seconds (default: ${DEFAULT-VALUE}).")
    int seconds;

    @Option(names = "--warmup", descriptionKey = "warmup",
            description = "Warm-up before each window, seconds (default: ${DEFAULT-VALUE}).")
    int warmup;

    /** A warm-up of {@code warmup} seconds by default. */
    WindowOptions(int warmup) {
        this.warmup = warmup;
    }

    /** A 2-second warm-up by default. */
    WindowOptions() {
        this(2);
    }

    void validate() {
        if (seconds < 1) {
            throw new ParameterException(mixee.commandLine(), "--seconds must be at least 1");
        }
        if (warmup < 0) {
            throw new ParameterException(mixee.commandLine(), "--warmup must not be negative");
        }
    }
}
