package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

import java.util.List;

/** {@code parley reply}: answers a message you received; the hub routes it back to the sender. */
@Command(name = "reply", mixinStandardHelpOptions = true,
        description = "Reply to a message you received (kind reply, corrId = its id).")
final class ReplyCommand extends ClientCommand {

    @Parameters(index = "0", paramLabel = "ID", description = "Id of the message to reply to.")
    String id;

    @Parameters(index = "1..*", paramLabel = "TEXT", arity = "0..*", description = "The text; '-' reads it from stdin.")
    List<String> words;

    @Mixin
    MessageContent content;

    @Override
    protected void execute(HubClient client) throws InterruptedException {
        ObjectNode body = JsonTrees.object();
        content.fill(body, words);
        JsonNode receipt = client.post("/v1/messages/" + HubClient.segment(id) + "/reply", body);
        emit(receipt, () -> line("replied", "id", field(receipt, "id"), "seq", field(receipt, "seq"),
                "to", field(receipt, "to"), "corr", id));
    }
}
