package dev.parley.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.IoReason;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/** {@code parley send}: one message, or many with {@code --batch}, as the node whose token is used. */
@Command(name = "send", mixinStandardHelpOptions = true,
        description = {"Send a message as the node whose token you hold.",
                "Prints once the hub has durably committed it; with --at or --cron, once the schedule is."})
final class SendCommand extends ClientCommand {
    /** The most messages the hub takes in one batch. */
    private static final int BATCH = 1_000;
    /** Rounds in a row in which the rate limit lets none of a batch's remaining messages through, before giving up. */
    private static final int RATE_LIMITED_ROUNDS = 5;

    @Option(names = "--to", paramLabel = "NODE", description = "Receiver (required unless --batch).")
    String to;

    @Option(names = "--batch", paramLabel = "FILE", description = {"Send JSON Lines instead: one message per line, each",
            "the body of a single send ({\"to\":…,\"text\":…}); '-' reads stdin. Sent in batches of",
            "up to " + BATCH + ", each committed in one transaction; one line out per message, exit 1",
            "(or the status of the first refusal) if any message was refused."})
    String batch;

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
        if (batch != null) {
            if (to != null || words != null || kind != null || later != null) {
                throw new ParameterException(spec.commandLine(), "--batch takes every message from its lines; "
                        + "give no --to, --kind, TEXT or schedule with it");
            }
            sendBatches(client, readLines());
            return;
        }
        if (to == null) {
            throw new ParameterException(spec.commandLine(), "Missing required option: '--to=NODE' (or --batch FILE)");
        }
        ObjectNode body = JsonTrees.object().put("to", to);
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
            body.set("meta", JsonTrees.texts(meta));
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

    private ParameterException unreadable(String why) {
        return new ParameterException(spec.commandLine(), "--batch: cannot read " + batch + ": " + why);
    }

    /** The messages of {@code --batch}, one JSON object per non-blank line; a line that is not one is a usage error. */
    private List<JsonNode> readLines() {
        List<String> lines;
        try {
            lines = batch.equals("-")
                    ? new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).lines().toList()
                    : Files.readAllLines(Path.of(batch), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw unreadable(IoReason.of(e));
        } catch (UncheckedIOException e) { // from reading stdin's lines
            throw unreadable(IoReason.of(e));
        }
        List<JsonNode> messages = new ArrayList<>(lines.size());
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).isBlank()) {
                continue;
            }
            try {
                JsonNode message = JsonTrees.read(lines.get(i));
                if (!message.isObject()) {
                    throw new ParameterException(spec.commandLine(), "--batch: line " + (i + 1) + " is not a JSON object");
                }
                messages.add(message);
            } catch (JsonProcessingException e) {
                throw new ParameterException(spec.commandLine(), "--batch: line " + (i + 1) + " is not JSON: "
                        + e.getOriginalMessage());
            }
        }
        if (messages.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "--batch: " + batch + " holds no message");
        }
        return messages;
    }

    /** Posts the messages in batches, in order, printing one line per message; a refused batch stops there. */
    private void sendBatches(HubClient client, List<JsonNode> messages) throws InterruptedException {
        for (int from = 0; from < messages.size(); from += BATCH) {
            for (JsonNode result : sendChunk(client, messages.subList(from, Math.min(from + BATCH, messages.size())))) {
                boolean refused = result.has("error");
                if (refused && exitStatus() == ExitStatus.OK) {
                    exitWith(ExitStatus.forError(result.path("httpStatus").asInt(), result.path("error").asText()));
                }
                emit(result, () -> {
                    if (refused) {
                        line("refused", "error", field(result, "error"), "message", field(result, "message"));
                    } else {
                        line(result.path("duplicate").asBoolean(false) ? "duplicate" : "accepted",
                                "id", field(result, "id"), "seq", field(result, "seq"), "to", field(result, "to"));
                    }
                });
            }
        }
    }

    /**
     * One batch's results, in order. The messages the node's rate limit turned away were not
     * written, so they are sent again after the wait the hub names, until they go through or
     * {@link #RATE_LIMITED_ROUNDS} rounds in a row get none through.
     */
    private static List<JsonNode> sendChunk(HubClient client, List<JsonNode> chunk) throws InterruptedException {
        JsonNode[] results = new JsonNode[chunk.size()];
        List<Integer> pending = IntStream.range(0, chunk.size()).boxed().toList();
        for (int idle = 0; !pending.isEmpty() && idle <= RATE_LIMITED_ROUNDS; ) {
            ObjectNode body = JsonTrees.object();
            var array = body.putArray("messages");
            pending.forEach(i -> array.add(chunk.get(i)));
            JsonNode answer = client.post("/v1/messages:batch", body);
            List<Integer> limited = new ArrayList<>();
            long wait = 1;
            for (int k = 0; k < pending.size(); k++) {
                JsonNode result = answer.path("results").path(k);
                results[pending.get(k)] = result;
                if ("rate_limited".equals(result.path("error").asText())) {
                    limited.add(pending.get(k));
                    wait = Math.max(wait, result.path("retryAfter").asLong(1));
                }
            }
            idle = limited.size() == pending.size() ? idle + 1 : 0;
            pending = limited;
            if (!pending.isEmpty() && idle <= RATE_LIMITED_ROUNDS) {
                Thread.sleep(Duration.ofSeconds(wait)); // the wait the hub's rate limit names
            }
        }
        return List.of(results);
    }
}
