package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code parley dlq ...}: the envelopes whose every push attempt failed, and what to do with them. */
@Command(name = "dlq", mixinStandardHelpOptions = true,
        description = "List, show, redrive and drop dead letters (admin).",
        subcommands = {DeadLetterCommand.ListDeadLetters.class, DeadLetterCommand.ShowDeadLetter.class,
                DeadLetterCommand.RedriveDeadLetter.class, DeadLetterCommand.DropDeadLetter.class})
final class DeadLetterCommand extends CommandGroup {

    static String path(String id) {
        return "/v1/dead-letters/" + HubClient.segment(id);
    }

    @Command(name = "list", aliases = "ls", mixinStandardHelpOptions = true,
            description = "List dead letters, newest first.")
    static final class ListDeadLetters extends ClientCommand {
        @Option(names = "--node", paramLabel = "ID", description = "Only those addressed to this node.")
        String node;

        @Option(names = "--limit", paramLabel = "L", description = "At most this many (1 to 1000; hub default 100).")
        Integer limit;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode answer = client.get(HubClient.query("/v1/dead-letters", "node", node, "limit", limit));
            emit(answer, () -> {
                Table table = new Table("ID", "NODE", "ATTEMPTS", "AT", "REASON");
                answer.path("items").forEach(d -> table.row(field(d, "id"), field(d, "node"),
                        field(d, "attempts"), field(d, "at"), field(d, "reason")));
                table.print(out());
            });
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "Show a dead letter and its envelope.")
    static final class ShowDeadLetter extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "Envelope id.")
        String id;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode deadLetter = client.get(path(id));
            JsonNode envelope = deadLetter.path("envelope");
            emit(deadLetter, () -> new Table()
                    .row("id", field(deadLetter, "id"))
                    .row("route", field(envelope, "from") + " " + TailCommand.ARROW + " " + field(deadLetter, "node"))
                    .row("kind", field(envelope, "kind"))
                    .row("attempts", field(deadLetter, "attempts"))
                    .row("reason", field(deadLetter, "reason"))
                    .row("at", field(deadLetter, "at"))
                    .row("created", field(envelope, "createdAt"))
                    .row("content", TailCommand.summary(envelope))
                    .print(out()));
        }
    }

    @Command(name = "redrive", mixinStandardHelpOptions = true,
            description = "Give a dead letter a fresh attempt cycle, under the same envelope id.")
    static final class RedriveDeadLetter extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "Envelope id.")
        String id;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode answer = client.post(path(id) + "/redrive", JsonTrees.object());
            emit(answer, () -> line("redriven", "id", field(answer, "id"), "state", field(answer, "state"),
                    "attempt", field(answer, "attempt")));
        }
    }

    @Command(name = "drop", aliases = {"rm", "remove"}, mixinStandardHelpOptions = true,
            description = {"Drop a dead letter for good.",
                    "With --json prints {\"id\":ID,\"deleted\":true} (the hub answers 204 without a body)."})
    static final class DropDeadLetter extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "Envelope id.")
        String id;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            client.delete(path(id));
            emit(JsonTrees.object().put("id", id).put("deleted", true),
                    () -> line("dropped", "dead-letter", id));
        }
    }
}
