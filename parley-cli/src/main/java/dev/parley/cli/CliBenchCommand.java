package dev.parley.cli;

import dev.parley.bench.BenchCommand;
import dev.parley.bench.ParleyServe;
import picocli.CommandLine.Command;

/** {@code parley bench}: the scenarios of parley-bench, whose child hubs run this command's {@code serve}. */
@Command(name = "bench") // the rest of the command is BenchCommand's
final class CliBenchCommand extends BenchCommand {
    CliBenchCommand() {
        super(ParleyServe.of(Main.class));
    }
}
