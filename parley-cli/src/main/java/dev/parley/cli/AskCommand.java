package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

import java.time.Duration;
import java.util.List;

/**
 * {@code parley ask}: a request that waits for its answer. The hub holds the call
 * ({@code ?wait=}) until the receiver replies, so a script can use the reply as the
 * command's output; no reply in time is its own exit status.
 */
@Command(name = "ask", mixinStandardHelpOptions = true,
        description = {"Send a message that requires a reply and wait for it.",
                "Prints the reply's text, or its data as JSON (with --json: the request's receipt and the reply).",
                "No reply within --timeout: exit " + ExitStatus.NO_REPLY + "; the request stays accepted and "
                        + "a later reply still reaches your inbox."})
final class AskCommand extends ClientCommand {
    /** The longest the hub holds a call open for a reply. */
    private static final Duration MAX_TIMEOUT = Duration.ofMinutes(5);

    @Option(names = "--to", required = true, paramLabel = "NODE", description = "Receiver.")
    String to;

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "30s", converter = DurationConverter.class,
            description = "How long to wait for the reply, at most 5m (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Option(names = "--kind", paramLabel = "KIND", description = "Message kind (hub default: message).")
    String kind;

    @Mixin
    MessageContent content;

    @Parameters(paramLabel = "TEXT", arity = "0..*", description = "The question; '-' reads it from stdin.")
    List<String> words;

    @Override
    protected void execute(HubClient client) throws InterruptedException {
        if (timeout.toMillis() < 1 || timeout.compareTo(MAX_TIMEOUT) > 0) {
            throw new ParameterException(spec.commandLine(), "--timeout must be between 1ms and 5m");
        }
        ObjectNode body = JsonTrees.object().put("to", to);
        if (kind != null) {
            body.put("kind", kind);
        }
        content.fill(body, words);
        body.put("requiresReply", true);
        JsonNode answer;
        try {
            answer = client.post(HubClient.query("/v1/messages", "wait", timeout.toMillis()), body, timeout);
        } catch (HubException e) {
            // The request id lets a script look the request up later (parley status ID).
            throw e.exitStatus() == ExitStatus.NO_REPLY && e.body().hasNonNull("id")
                    ? e.withDetail("request " + e.body().path("id").asText()) : e;
        }
        JsonNode reply = answer.path("reply");
        emit(answer, () -> {
            JsonNode text = reply.path("text");
            out().println(text.isTextual() ? text.asText() : reply.path("data").toString());
        });
    }
}
