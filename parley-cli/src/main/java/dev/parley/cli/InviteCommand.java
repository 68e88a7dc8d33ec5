package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.NodeKind;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/** {@code parley invite ...}: single-use invites that a newcomer redeems with {@code parley join}. */
@Command(name = "invite", mixinStandardHelpOptions = true,
        description = "Invite a node to join: the newcomer runs parley join with the invite token.",
        subcommands = InviteCommand.CreateInvite.class)
final class InviteCommand extends CommandGroup {

    @Command(name = "create", mixinStandardHelpOptions = true,
            description = {"Issue a single-use invite and print its token.",
                    "As admin: for a root, or a child of any node (--parent).",
                    "As a node: for a child of itself.",
                    "The joining node gets the invite's kind, parent and labels."})
    static final class CreateInvite extends ClientCommand {
        @Option(names = "--node-id", paramLabel = "ID",
                description = "Bind the invite to this node id (default: the joiner picks one).")
        String nodeId;

        @Option(names = "--kind", paramLabel = "KIND", converter = NodeCommand.KindConverter.class,
                completionCandidates = NodeCommand.KindCandidates.class,
                description = "external, managed or human (hub default: external).")
        NodeKind kind;

        @Option(names = "--parent", paramLabel = "P", description = "Parent of the joining node (as a node: yourself).")
        String parent;

        @Option(names = "--label", paramLabel = "K=V", description = "A label of the joining node; repeatable.")
        Map<String, String> labels = new LinkedHashMap<>();

        @Option(names = "--ttl", paramLabel = "DURATION", converter = DurationConverter.class,
                description = "How long the invite can be used, 10s to 7d (hub default: 15m).")
        Duration ttl;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            ObjectNode body = JsonTrees.object();
            if (nodeId != null) {
                body.put("nodeId", nodeId);
            }
            if (kind != null) {
                body.put("kind", kind.wire());
            }
            if (parent != null) {
                body.put("parent", parent);
            }
            if (!labels.isEmpty()) {
                body.set("labels", JsonTrees.texts(labels));
            }
            if (ttl != null) {
                body.put("ttlSeconds", ttl.toSeconds());
            }
            JsonNode invite = client.post("/v1/invites", body);
            emit(invite, () -> {
                line("invited", "id", field(invite, "id"), "node", field(invite, "nodeId"),
                        "kind", field(invite, "kind"), "parent", field(invite, "parent"),
                        "expires", field(invite, "expiresAt"));
                NodeCommand.printToken(out(), field(invite, "inviteToken"));
            });
        }
    }
}
