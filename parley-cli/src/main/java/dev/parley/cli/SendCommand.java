package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code parley send}: one message, as the node whose token is used. */
@Command(name = "send", mixinStandardHelpOptions = true,
        description = {"Send a message as the node whose token you hold.",
                "Prints once the hub has durably committed it."})
final class SendCommand extends ClientCommand {

    @Option(names = "--to", required = true, paramLabel = "NODE", description = "Receiver.")
    String to;

    @Option(names = "--kind", paramLabel = "KIND", description = "Message kind (hub default: message).")
    String kind;

    @Mixin
    MessageContent content;

    @Option(names = "--thread", paramLabel = "T", description = "Thread id.")
    String thread;

    @Option(names = "--corr", paramLabel = "C", description = "Correlation id.")
    String corr;

    @Option(names = "--message-id", paramLabel = "M",
            description = "Your id for this message; sending it again is answered as a duplicate, not resent.")
    String messageId;

    @Option(names = "--meta", paramLabel = "K=V", description = "Metadata; repeatable.")
    Map<String, String> meta = new LinkedHashMap<>();

    @Option(names = "--reply-within", paramLabel = "DURATION", converter = DurationConverter.class,
            description = {"Expect a reply or processed ack within this long (e.g. 30s, 10m); if none comes,",
                    "your inbox gets an envelope of kind incident and the message's state shows it."})
    Duration replyWithin;

    @Parameters(paramLabel = "TEXT", arity = "0..*", description = "The text; '-' reads it from stdin.")
    List<String> words;

    @Override
    protected void execute(HubClient client) throws InterruptedException {
        ObjectNode body = HubClient.JSON.createObjectNode().put("to", to);
        if (kind != null) {
            body.put("kind", kind);
        }
        content.fill(body, words);
        if (thread != null) {
            body.put("threadId", thread);
        }
        if (corr != null) {
            body.put("corrId", corr);
        }
        if (messageId != null) {
            body.put("messageId", messageId);
        }
        if (!meta.isEmpty()) {
            body.set("meta", HubClient.JSON.valueToTree(meta));
        }
        if (replyWithin != null) {
            body.put("replyWithinMs", replyWithin.toMillis());
        }
        JsonNode receipt = client.post("/v1/messages", body);
        emit(receipt, () -> line(receipt.path("duplicate").asBoolean(false) ? "duplicate" : "accepted",
                "id", field(receipt, "id"), "seq", field(receipt, "seq"), "to", field(receipt, "to")));
    }
}
