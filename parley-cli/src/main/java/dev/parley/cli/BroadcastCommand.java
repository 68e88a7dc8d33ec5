package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.NodeKind;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code parley broadcast}: one payload to every node a filter selects. */
@Command(name = "broadcast", mixinStandardHelpOptions = true,
        description = {"Send one envelope (kind broadcast) to every node the filter selects.",
                "The admin reaches anyone; a node only its own groups (its parent's and the one it leads)."})
final class BroadcastCommand extends ClientCommand {

    @Option(names = "--group", paramLabel = "G", description = "Only the group led by this node (it and its children).")
    String group;

    @Option(names = "--label", paramLabel = "K=V", description = "Only nodes with this label; repeatable (all must match).")
    Map<String, String> labels = new LinkedHashMap<>();

    @Option(names = "--kind", paramLabel = "KIND", converter = NodeCommand.KindConverter.class,
            completionCandidates = NodeCommand.KindCandidates.class,
            description = "Only nodes of this kind: external, managed or human.")
    NodeKind kind;

    @Mixin
    MessageContent content;

    @Parameters(paramLabel = "TEXT", arity = "0..*", description = "The text; '-' reads it from stdin.")
    List<String> words;

    @Override
    protected void execute(HubClient client) throws InterruptedException {
        ObjectNode body = JsonTrees.object();
        if (group != null || !labels.isEmpty() || kind != null) {
            ObjectNode filter = body.putObject("filter");
            if (group != null) {
                filter.put("group", group);
            }
            if (!labels.isEmpty()) {
                filter.set("labels", JsonTrees.texts(labels));
            }
            if (kind != null) {
                filter.put("kind", kind.wire());
            }
        }
        content.fill(body, words);
        JsonNode publication = client.post("/v1/broadcasts", body);
        emit(publication, () -> line("broadcast", "id", field(publication, "id"),
                "delivered", field(publication, "delivered")));
    }
}
