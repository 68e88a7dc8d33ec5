package dev.parley.bench;

import picocli.CommandLine.Option;

/** The hidden {@code --drain-seconds}: how long a load run waits for its readers after the senders stop. */
final class DrainOption {
    @Option(names = "--drain-seconds", defaultValue = "15", hidden = true,
            description = "How long to wait for the streams to catch up after the senders stop.")
    int seconds;
}
