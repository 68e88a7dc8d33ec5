package dev.parley.bench;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code --inboxes}: the nodes a scenario's senders send to, each followed by one reader. */
final class InboxOptions {
    @Spec(Spec.Target.MIXEE)
    private CommandSpec mixee;

    @Option(names = "--inboxes", defaultValue = "64", descriptionKey = "inboxes",
            description = "Inbox nodes, each read by one SSE stream (default: ${DEFAULT-VALUE}).")
    int inboxes;

    void validate() {
        if (inboxes < 1 || inboxes > 9999) {
            throw new ParameterException(mixee.commandLine(), "--inboxes must be 1..9999");
        }
    }
}
