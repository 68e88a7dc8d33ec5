package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.ArgGroup;
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
                "Prints once the hub has durably committed it; with --at or --cron, once the schedule is."})
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

    @ArgGroup(exclusive = true, multiplicity = "0..1")
    Later later;

    @Option(names = "--tz", paramLabel = "AREA/CITY",
            description = {"The IANA time zone --at and --cron are read in (e.g. Europe/Berlin);",
                    "default: the receiver's timezone label, else UTC."})
    String timeZone;

    /** When a scheduled send fires; without either, the message goes now. */
    static final class Later {
        @Option(names = "--at", paramLabel = "TIME", description = {"Send once, later: a local date and time such as",
                "\"2026-03-08 09:00\" (read in --tz), or an RFC 3339 time with its offset."})
        String at;

        @Option(names = "--cron", paramLabel = "EXPR",
                description = "Send on a 5-field Unix cron expression, e.g. \"0 9 * * 1-5\" (read in --tz).")
        String cron;
    }

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
        if (later != null) {
            body.put(later.at != null ? "deliverAt" : "cron", later.at != null ? later.at : later.cron);
        }
        if (timeZone != null) {
            body.put("timeZone", timeZone);
        }
        JsonNode receipt = client.post("/v1/messages", body);
        if (receipt.has("scheduleId")) {
            emit(receipt, () -> line(receipt.path("duplicate").asBoolean(false) ? "duplicate" : "scheduled",
                    ScheduleCommand.summary(receipt)));
            return;
        }
        emit(receipt, () -> line(receipt.path("duplicate").asBoolean(false) ? "duplicate" : "accepted",
                "id", field(receipt, "id"), "seq", field(receipt, "seq"), "to", field(receipt, "to")));
    }
}
