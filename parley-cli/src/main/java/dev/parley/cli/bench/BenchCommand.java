package dev.parley.cli.bench;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code parley bench}: measured figures for a hub started on a temporary directory. */
@Command(name = "bench", description = "Run a benchmark against a hub started on a temporary directory.",
        mixinStandardHelpOptions = true, subcommands = {BenchSendCommand.class, BenchStreamsCommand.class, BenchCompareCommand.class,
                BenchReplayCommand.class, BenchCrashCommand.class, BenchWebhookCommand.class, BenchGuardedCommand.class,
                BenchGrowthCommand.class})
public final class BenchCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
