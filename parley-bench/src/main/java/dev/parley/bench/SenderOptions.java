package dev.parley.bench;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code --senders} and {@code --size}: the closed-loop senders of a scenario and the text each
 * message carries. A scenario whose help says more about them sets {@code senders} or
 * {@code size} in its resource bundle.
 */
final class SenderOptions {
    @Spec(Spec.Target.MIXEE)
    private CommandSpec mixee;

    @Option(names = "--senders", descriptionKey = "senders", description = "Concurrent senders (default: ${DEFAULT-VALUE}).")
    int senders = 64;

    @Option(names = "--size", descriptionKey = "size", description = "Bytes of text per message (default: ${DEFAULT-VALUE}).")
    int size;

    private final int minSize;
    private final int maxSize;

    /** 64 senders of {@code size} bytes of text by default; sizes outside {@code minSize..maxSize} are usage errors. */
    SenderOptions(int size, int minSize, int maxSize) {
        this.size = size;
        this.minSize = minSize;
        this.maxSize = maxSize;
    }

    /** 64 senders of 1 KiB texts; 1..200000 bytes. */
    SenderOptions() {
        this(1024, 1, 200_000);
    }

    void validate() {
        if (senders < 1 || senders > 9999) {
            throw new ParameterException(mixee.commandLine(), "--senders must be 1..9999");
        }
        if (size < minSize || size > maxSize) {
            throw new ParameterException(mixee.commandLine(), "--size must be " + minSize + ".." + maxSize + " bytes");
        }
    }
}
