package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.NodeId;
import dev.parley.core.NodeProof;
import dev.parley.core.ParleyException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

import java.nio.file.Path;

/** {@code parley token ...}: node credentials. */
@Command(name = "token", mixinStandardHelpOptions = true, description = "Manage node tokens.",
        subcommands = TokenCommand.RotateToken.class)
final class TokenCommand extends CommandGroup {

    @Command(name = "rotate", mixinStandardHelpOptions = true,
            description = {"Issue a new token for a node (admin or the node itself); the old one stops working.",
                    "A node that joined with a key must prove it holds it: when --key-dir",
                    "holds the node's key, the request is signed with it."})
    static final class RotateToken extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "Node id.")
        String id;

        @Option(names = "--key-dir", paramLabel = "DIR",
                description = {"Where the node's key lives.", "Default: ~/.parley/keys/<ID>/ when it holds a key."})
        Path keyDir;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            ObjectNode body = JsonTrees.object();
            NodeKeys keys = keys();
            if (keys != null) {
                String nonce = NodeKeys.nonce();
                body.put("nonce", nonce).put("proof", keys.sign(NodeProof.rotateMessage(NodeId.of(id), nonce)));
            }
            JsonNode answer = client.post("/v1/nodes/" + HubClient.segment(id) + "/token", body);
            emit(answer, () -> {
                line("rotated", "node", id, "proof", keys == null ? "none" : "signed");
                NodeCommand.printToken(out(), field(answer, "token"));
            });
        }

        /** The node's key, if it has one here; a --key-dir without a key is a usage error. */
        private NodeKeys keys() {
            NodeId node;
            try {
                node = NodeId.of(id);
            } catch (ParleyException invalid) {
                if (keyDir != null) {
                    throw new ParameterException(spec.commandLine(), "ID: " + invalid.getMessage());
                }
                return null; // the hub refuses the id, with its own code
            }
            if (keyDir != null && !NodeKeys.exists(keyDir)) {
                throw new ParameterException(spec.commandLine(), "--key-dir: no " + NodeKeys.PRIVATE_FILE + " in "
                        + keyDir);
            }
            Path dir = keyDir != null ? keyDir : NodeKeys.defaultDir(node.value());
            return NodeKeys.exists(dir) ? NodeKeys.load(dir) : null;
        }
    }
}
