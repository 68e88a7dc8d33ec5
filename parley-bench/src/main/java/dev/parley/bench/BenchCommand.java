package dev.parley.bench;

import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code parley bench}: measured figures for a hub started on a temporary directory. The
 * parley command registers it with the way to start {@code parley serve} ({@link ParleyServe});
 * without one, only the scenarios whose hub runs in this JVM work.
 */
@Command(name = "bench", description = "Run a benchmark against a hub started on a temporary directory.",
        mixinStandardHelpOptions = true, subcommands = {BenchSendCommand.class, BenchStreamsCommand.class, BenchCompareCommand.class,
                BenchReplayCommand.class, BenchCrashCommand.class, BenchWebhookCommand.class, BenchGuardedCommand.class,
                BenchExportCommand.class, BenchGrowthCommand.class, BenchFederationCommand.class, BenchWakeCommand.class,
                BenchRowsCommand.class})
public class BenchCommand implements Runnable {
    private final Optional<ParleyServe> serve;

    @Spec
    CommandSpec spec;

    /** The scenarios with an in-process hub only. */
    public BenchCommand() {
        this.serve = Optional.empty();
    }

    /** Every scenario; child hubs are started with {@code serve}. */
    public BenchCommand(ParleyServe serve) {
        this.serve = Optional.of(serve);
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** How {@code scenario} starts its child hub; a usage error when this bench was given none. */
    ParleyServe serve(CommandSpec scenario) {
        return serve.orElseThrow(() -> new ParameterException(scenario.commandLine(), "this bench runs the hub as a "
                + "child process (parley serve), which only the parley command can start: run it as `parley bench "
                + scenario.name() + "`"));
    }
}
