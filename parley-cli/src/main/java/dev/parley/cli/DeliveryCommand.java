package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.time.Duration;

/** {@code parley delivery ...}: how the hub reaches a node (webhook push, retries, redelivery). */
@Command(name = "delivery", mixinStandardHelpOptions = true,
        description = "Set and show how a node's envelopes are delivered: webhook push, retries, redelivery.",
        subcommands = {DeliveryCommand.SetDelivery.class, DeliveryCommand.ShowDelivery.class})
final class DeliveryCommand extends CommandGroup {

    static String path(String node) {
        return "/v1/nodes/" + HubClient.segment(node) + "/delivery";
    }

    /** The readable form of the hub's policy view; the secret is never shown back. */
    static void print(PrintWriter out, String node, JsonNode policy) {
        JsonNode webhook = policy.path("webhook");
        JsonNode retry = policy.path("retry");
        JsonNode redeliver = policy.path("redeliverAfterMs");
        new Table()
                .row("node", node)
                .row("webhook", webhook.isObject() ? ClientCommand.field(webhook, "url") + "  (signed with its secret)"
                        : "none: delivered to streams and polls")
                .row("retry", "maxAttempts=" + ClientCommand.field(retry, "maxAttempts")
                        + "  baseMs=" + ClientCommand.field(retry, "baseMs")
                        + "  capMs=" + ClientCommand.field(retry, "capMs"))
                .row("redeliver", redeliver.isNumber() ? "after " + redeliver.asLong() + " ms without an ack" : "never")
                .print(out);
    }

    @Command(name = "set", mixinStandardHelpOptions = true,
            description = {"Set how a node is delivered to (admin or the node itself).",
                    "Replaces the whole policy: what is not given takes the hub's default",
                    "(no --webhook: streams and polls; retries: 15 attempts, base 2s, cap 5m; no redelivery)."})
    static final class SetDelivery extends ClientCommand {
        @Parameters(paramLabel = "NODE", description = "Node id.")
        String node;

        @ArgGroup(exclusive = false, heading = "Webhook push:%n")
        Webhook webhook;

        @ArgGroup(exclusive = false, heading = "Retries of a failed push:%n")
        Retry retry;

        @Option(names = "--redeliver-after", paramLabel = "DURATION", converter = DurationConverter.class,
                description = "Deliver again an envelope delivered but not acked within this long (100ms to 1d).")
        Duration redeliverAfter;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            ObjectNode body = JsonTrees.object();
            if (webhook != null) {
                body.putObject("webhook").put("url", webhook.url).put("secret", webhook.secret);
            }
            if (retry != null) {
                ObjectNode retries = body.putObject("retry");
                if (retry.maxAttempts != null) {
                    retries.put("maxAttempts", retry.maxAttempts);
                }
                if (retry.base != null) {
                    retries.put("baseMs", retry.base.toMillis());
                }
                if (retry.cap != null) {
                    retries.put("capMs", retry.cap.toMillis());
                }
            }
            if (redeliverAfter != null) {
                body.put("redeliverAfterMs", redeliverAfter.toMillis());
            }
            JsonNode policy = client.put(path(node), body);
            emit(policy, () -> print(out(), node, policy));
        }
    }

    /** A webhook needs both: where to POST, and the key its signatures are made with. */
    static final class Webhook {
        @Option(names = "--webhook", required = true, paramLabel = "URL",
                description = "Push each envelope as a POST to this http(s) URL.")
        String url;

        @Option(names = "--secret", required = true, paramLabel = "S",
                description = "HMAC-SHA256 key of the Parley-Signature header (16 to 256 characters).")
        String secret;
    }

    static final class Retry {
        @Option(names = "--max-attempts", paramLabel = "N",
                description = "Attempts before the envelope is dead-lettered (1 to 100).")
        Integer maxAttempts;

        @Option(names = "--base", paramLabel = "DURATION", converter = DurationConverter.class,
                description = "Backoff ceiling after the first failure; doubles after each (jittered).")
        Duration base;

        @Option(names = "--cap", paramLabel = "DURATION", converter = DurationConverter.class,
                description = "Longest backoff between two attempts.")
        Duration cap;
    }

    @Command(name = "show", mixinStandardHelpOptions = true,
            description = "Show how a node is delivered to (admin or the node itself).")
    static final class ShowDelivery extends ClientCommand {
        @Parameters(paramLabel = "NODE", description = "Node id.")
        String node;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode policy = client.get(path(node));
            emit(policy, () -> print(out(), node, policy));
        }
    }
}
