package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

import java.util.List;

/** {@code parley topic ...}: publish/subscribe, under the same ACL as direct sends. */
@Command(name = "topic", mixinStandardHelpOptions = true,
        description = {"Subscribe to topics and publish events to their subscribers.",
                "A subscriber receives only what the ACL lets the publisher send it (or a grant to topic:NAME)."},
        subcommands = {TopicCommand.Subscribe.class, TopicCommand.Unsubscribe.class, TopicCommand.Publish.class,
                TopicCommand.Subscribers.class})
final class TopicCommand extends CommandGroup {

    static String path(String topic, String what) {
        return "/v1/topics/" + HubClient.segment(topic) + "/" + what;
    }

    @Command(name = "subscribe", aliases = "sub", mixinStandardHelpOptions = true,
            description = "Subscribe yourself: the topic's events arrive in your inbox (kind event).")
    static final class Subscribe extends ClientCommand {
        @Parameters(paramLabel = "NAME", description = "Topic name: lower case letters, digits, '.', '_', '-'.")
        String topic;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode subscription = client.post(path(topic, "subscriptions"), JsonTrees.object());
            emit(subscription, () -> line("subscribed", "topic", field(subscription, "topic"),
                    "node", field(subscription, "node"), "since", field(subscription, "createdAt")));
        }
    }

    @Command(name = "unsubscribe", aliases = "unsub", mixinStandardHelpOptions = true,
            description = {"Leave a topic.",
                    "With --json prints {\"topic\":NAME,\"unsubscribed\":true} (the hub answers 204 without a body)."})
    static final class Unsubscribe extends ClientCommand {
        @Parameters(paramLabel = "NAME", description = "Topic name.")
        String topic;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            client.delete(path(topic, "subscriptions"));
            emit(JsonTrees.object().put("topic", topic).put("unsubscribed", true),
                    () -> line("unsubscribed", "topic", topic));
        }
    }

    @Command(name = "publish", aliases = "pub", mixinStandardHelpOptions = true,
            description = "Publish an event: one envelope into each subscriber's inbox, committed together.")
    static final class Publish extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME", description = "Topic name.")
        String topic;

        @Parameters(index = "1..*", paramLabel = "TEXT", arity = "0..*",
                description = "The text; '-' reads it from stdin.")
        List<String> words;

        @Mixin
        MessageContent content;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            ObjectNode body = JsonTrees.object();
            content.fill(body, words);
            JsonNode publication = client.post(path(topic, "events"), body);
            emit(publication, () -> line("published", "id", field(publication, "id"), "topic", topic,
                    "delivered", field(publication, "delivered")));
        }
    }

    @Command(name = "subscribers", mixinStandardHelpOptions = true, description = "List a topic's subscribers (admin).")
    static final class Subscribers extends ClientCommand {
        @Parameters(paramLabel = "NAME", description = "Topic name.")
        String topic;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode answer = client.get(path(topic, "subscriptions"));
            emit(answer, () -> {
                Table table = new Table("NODE", "SINCE");
                answer.path("items").forEach(s -> table.row(field(s, "node"), field(s, "createdAt")));
                table.print(out());
            });
        }
    }
}
