package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code parley ack}: the receiver reports what became of a message. */
@Command(name = "ack", mixinStandardHelpOptions = true,
        description = "Acknowledge a message you received: processed, or --failed.")
final class AckCommand extends ClientCommand {

    @Parameters(paramLabel = "ID", description = "Message id.")
    String id;

    @Option(names = "--failed", description = "Report that processing failed.")
    boolean failed;

    @Option(names = "--reason", paramLabel = "R", description = "Why (shown in the message's timeline).")
    String reason;

    @Override
    protected void execute(HubClient client) throws InterruptedException {
        ObjectNode body = JsonTrees.object().put("status", failed ? "failed" : "processed");
        if (reason != null) {
            body.put("reason", reason);
        }
        JsonNode answer = client.post("/v1/messages/" + HubClient.segment(id) + "/ack", body);
        emit(answer, () -> line("acked", "id", field(answer, "id"), "state", field(answer, "state")));
    }
}
