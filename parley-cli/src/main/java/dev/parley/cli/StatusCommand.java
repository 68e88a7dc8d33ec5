package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code parley status}: where a message is in its life, and how it got there. */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "Show a message's state and timeline (sender, receiver or admin).")
final class StatusCommand extends ClientCommand {

    @Parameters(paramLabel = "ID", description = "Message id.")
    String id;

    @Override
    protected void execute(HubClient client) throws InterruptedException {
        JsonNode message = client.get("/v1/messages/" + HubClient.segment(id));
        emit(message, () -> {
            new Table()
                    .row("id", field(message, "id"))
                    .row("route", field(message, "from") + " " + TailCommand.ARROW + " " + field(message, "to"))
                    .row("kind", field(message, "kind"))
                    .row("state", field(message, "state"))
                    .row("thread", field(message, "threadId"))
                    .row("corr", field(message, "corrId"))
                    .row("created", field(message, "createdAt"))
                    .print(out());
            out().println("timeline");
            Table timeline = new Table();
            message.path("timeline").forEach(step -> timeline.row("  " + field(step, "at"), field(step, "state"),
                    step.path("detail").isNull() || step.path("detail").isMissingNode() ? "" : field(step, "detail")));
            timeline.print(out());
        });
    }
}
