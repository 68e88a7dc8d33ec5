package dev.parley.bench;

import dev.parley.server.HubConfig;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code --hub}: where a bench's Parley hub runs. In this JVM its CPU, heap and JIT are the bench
 * client's too, and hubs started one after another share one JIT's history; as a child process
 * ({@code parley serve}) each hub has its own, as in production.
 */
final class HubPlacementOption {
    static final String IN_PROCESS = "in-process";
    static final String CHILD = "child";

    @Spec(Spec.Target.MIXEE)
    private CommandSpec mixee;

    @Option(names = "--hub", paramLabel = "WHERE",
            description = "Where each Parley hub runs: in-process (this JVM, its CPU and memory counted with the bench "
                    + "client's) or child (`parley serve` in a process of its own, measured apart) (default: "
                    + "${DEFAULT-VALUE}).")
    String where;

    /** {@code --hub}, {@code in-process} unless given. */
    HubPlacementOption() {
        this(IN_PROCESS);
    }

    /** {@code --hub}, {@code where} unless given: a bench that measures a hub's memory alone runs it apart. */
    HubPlacementOption(String where) {
        this.where = where;
    }

    /** Whether hubs run as child processes; a usage error for a value that is neither. */
    boolean child() {
        return switch (where) {
            case IN_PROCESS -> false;
            case CHILD -> true;
            default -> throw new ParameterException(mixee.commandLine(), "--hub must be " + IN_PROCESS + " or " + CHILD);
        };
    }

    /** How this bench starts its hubs; {@code bench} gives the way to start a child. */
    HubLauncher launcher(BenchCommand bench) {
        return new HubLauncher(child() ? Optional.of(bench.serve(mixee)) : Optional.empty());
    }

    /** Starts fresh hubs where {@code --hub} says: in this JVM when {@code child} is empty. */
    record HubLauncher(Optional<ParleyServe> child) {
        /**
         * A fresh hub. An in-process hub's config is changed by {@code config}; a child's
         * {@code parley serve} is told the same by {@code serveArgs} and {@code env}.
         */
        BenchHub start(UnaryOperator<HubConfig> config, List<String> serveArgs, Map<String, String> env)
                throws IOException {
            return start(config, serveArgs, env, List.of(), 0);
        }

        /** A child also gets {@code jvmArgs} and runs under {@code ulimit -n openFiles} (when above 0). */
        BenchHub start(UnaryOperator<HubConfig> config, List<String> serveArgs, Map<String, String> env,
                       List<String> jvmArgs, int openFiles) throws IOException {
            return child.isPresent() ? BenchHub.child(child.get(), serveArgs, env, jvmArgs, openFiles)
                    : BenchHub.inProcess(config);
        }

        /** A fresh hub with the defaults. */
        BenchHub start() throws IOException {
            return start(c -> c, List.of(), Map.of());
        }
    }
}
