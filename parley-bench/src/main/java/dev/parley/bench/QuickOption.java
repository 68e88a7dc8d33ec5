package dev.parley.bench;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code --quick}: a smoke run with smaller defaults, which each scenario chooses (and says in
 * {@code quick} of its resource bundle); options given explicitly still win.
 */
final class QuickOption {
    @Spec(Spec.Target.MIXEE)
    private CommandSpec mixee;

    @Option(names = "--quick", descriptionKey = "quick",
            description = "A smoke run (options given explicitly still win).")
    boolean quick;

    /** Under {@code --quick}, runs {@code assign} (a smaller default) unless {@code option} was given. */
    QuickOption unlessGiven(String option, Runnable assign) {
        if (quick && !mixee.commandLine().getParseResult().hasMatchedOption(option)) {
            assign.run();
        }
        return this;
    }
}
