package dev.parley.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code parley tail}: follows an inbox over Server-Sent Events and survives the hub going
 * away. After a lost connection it reconnects with backoff, sending the last printed seq as
 * {@code Last-Event-ID}, so an envelope is neither missed nor printed twice.
 */
@Command(name = "tail", mixinStandardHelpOptions = true,
        description = {"Follow your inbox (or, as admin, a node's with --node) and print each envelope.",
                "Reconnects after the hub restarts, resuming after the last envelope printed."})
final class TailCommand extends ClientCommand {

    /** The arrow of "from → to", plain ASCII where stdout cannot encode it. */
    static final String ARROW = System.out.charset().newEncoder().canEncode('→') ? "→" : "->";

    private static final Duration FIRST_RETRY = Duration.ofMillis(200);
    private static final Duration LAST_RETRY = Duration.ofSeconds(5);

    @Option(names = "--after", paramLabel = "SEQ",
            description = "Start after this seq (default: the envelopes not yet delivered, then live).")
    Long after;

    @Option(names = "--node", paramLabel = "ID", description = "Follow this node's inbox (admin token).")
    String node;

    @Option(names = "--count", paramLabel = "N", description = "Exit after printing N envelopes.")
    Long count;

    @Option(names = "--idle-timeout", paramLabel = "DURATION", defaultValue = "45s",
            converter = DurationConverter.class,
            description = "Reconnect when nothing, not even a heartbeat, arrives for this long (default: ${DEFAULT-VALUE}).")
    Duration idleTimeout;

    @Override
    protected void execute(HubClient client) throws InterruptedException {
        if (after != null && after < 0) {
            throw new ParameterException(spec.commandLine(), "--after must be 0 or more");
        }
        if (count != null && count < 1) {
            throw new ParameterException(spec.commandLine(), "--count must be 1 or more");
        }
        String path = node == null ? "/v1/inbox/stream" : "/v1/nodes/" + HubClient.segment(node) + "/inbox/stream";
        Long cursor = after;
        long printed = 0;
        int failures = 0;
        boolean connected = false;
        while (true) {
            String lost;
            try (EventStream stream = client.stream(path, cursor)) {
                connected = true;
                failures = 0;
                for (EventStream.Event event; (event = stream.next(idleTimeout)) != null; ) {
                    JsonNode envelope = parse(event);
                    long seq = seq(event, envelope);
                    if (cursor != null && seq <= cursor) {
                        continue; // a replay overlapping what was already printed
                    }
                    print(seq, envelope);
                    cursor = seq;
                    if (count != null && ++printed >= count) {
                        return;
                    }
                }
                lost = "the hub ended the stream";
            } catch (HubException e) {
                // Before the first connection a failure is the answer (exit 3, 4, ...); after it,
                // only failures that a restarted hub could cure are waited out.
                if (!connected || !e.retryable()) {
                    throw e;
                }
                lost = e.getMessage();
            } catch (IOException e) {
                lost = e.getMessage();
            }
            Duration wait = backoff(failures++);
            err().println("parley: stream lost (" + lost + "); reconnecting in " + wait.toMillis() + " ms"
                    + (cursor == null ? "" : " after seq " + cursor));
            err().flush();
            Thread.sleep(wait);
        }
    }

    /** Exponential from 0.2 s to 5 s with jitter, so restarting hubs are not hit by every tail at once. */
    private static Duration backoff(int failures) {
        long ceiling = Math.min(LAST_RETRY.toMillis(), FIRST_RETRY.toMillis() << Math.min(failures, 10));
        return Duration.ofMillis(ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1));
    }

    private static JsonNode parse(EventStream.Event event) {
        try {
            return JsonTrees.read(event.data());
        } catch (JsonProcessingException e) {
            throw HubException.malformed("the hub streamed an envelope that is not JSON: " + e.getOriginalMessage());
        }
    }

    /** The cursor: the SSE id, which the contract makes the envelope's seq. */
    private static long seq(EventStream.Event event, JsonNode envelope) {
        try {
            return event.id() != null ? Long.parseLong(event.id().strip()) : envelope.path("seq").asLong();
        } catch (NumberFormatException e) {
            throw HubException.malformed("the hub streamed a non-numeric event id: " + event.id());
        }
    }

    private void print(long seq, JsonNode envelope) {
        emit(envelope, () -> out().println("[" + seq + "] " + field(envelope, "from") + " " + ARROW + " "
                + field(envelope, "to") + "  " + field(envelope, "kind") + ": " + summary(envelope)));
    }

    /** The text, else the data as JSON; kept on one line so each envelope is one line. */
    static String summary(JsonNode envelope) {
        JsonNode text = envelope.path("text");
        String shown = text.isTextual() ? text.asText() : envelope.path("data").toString();
        return shown.replace("\r", "\\r").replace("\n", "\\n");
    }
}
