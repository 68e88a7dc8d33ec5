package dev.parley.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code parley version}: the same line as {@code parley --version}. */
@Command(name = "version", description = "Print the version of this parley build.",
        mixinStandardHelpOptions = true, versionProvider = ParleyVersion.class)
final class VersionCommand implements Runnable {

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().getOut().println(ParleyVersion.line());
        spec.commandLine().getOut().flush();
    }
}
