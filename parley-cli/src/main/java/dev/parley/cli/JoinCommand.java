package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.NodeId;
import dev.parley.core.NodeProof;
import dev.parley.core.ParleyException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.nio.file.Path;

/**
 * {@code parley join}: the newcomer's side of admission by invite, in one command. It holds
 * (or makes) the node's Ed25519 key, proves it over the invite, trades the invite for a
 * ticket ({@code /v1/auth/exchange}) and the ticket for the node and its token
 * ({@code /v1/auth/redeem}). No token is needed: the invite is the credential.
 */
@Command(name = "join", mixinStandardHelpOptions = true,
        description = {"Join a hub with an invite: create your node and print its token.",
                "Generates the node's Ed25519 key in --key-dir (node.key: PKCS#8 PEM;",
                "node.pub: the raw key in base64url; mode 0600), or uses the key already",
                "there, and signs the exchange with it.",
                "Needs no token (--token and PARLEY_TOKEN are ignored)."})
final class JoinCommand extends ClientCommand {

    @Option(names = "--invite", required = true, paramLabel = "TOKEN", description = "The invite token (pi_...).")
    String invite;

    @Option(names = "--name", required = true, paramLabel = "ID",
            description = "Your node id: ^[a-z0-9][a-z0-9._-]{0,62}$ (the invite's, if it is bound to one).")
    String name;

    @Option(names = "--key-dir", paramLabel = "DIR",
            description = {"Where the node's key lives.", "Default: ~/.parley/keys/<ID>/"})
    Path keyDir;

    @Override
    protected boolean authenticated() {
        return false;
    }

    @Override
    protected void execute(HubClient client) throws InterruptedException {
        NodeId node;
        try {
            node = NodeId.of(name);
        } catch (ParleyException e) {
            throw new ParameterException(spec.commandLine(), "--name: " + e.getMessage());
        }
        Path dir = keyDir != null ? keyDir : NodeKeys.defaultDir(node.value());
        NodeKeys keys = NodeKeys.exists(dir) ? NodeKeys.load(dir) : NodeKeys.generate(dir);
        String nonce = NodeKeys.nonce();
        ObjectNode exchange = JsonTrees.object()
                .put("inviteToken", invite)
                .put("nodeId", node.value())
                .put("nonce", nonce)
                .put("publicKey", keys.publicKey())
                .put("proof", keys.sign(NodeProof.exchangeMessage(invite, node, nonce)));
        JsonNode ticket = client.post("/v1/auth/exchange", exchange);
        JsonNode joined = client.post("/v1/auth/redeem",
                JsonTrees.object().put("ticket", ticket.path("ticket").asText()));
        emit(joined, () -> {
            line("joined", "id", field(joined, "id"), "kind", field(joined, "kind"), "parent", field(joined, "parent"),
                    "depth", field(joined, "depth"));
            out().println("key      " + keys.dir().toAbsolutePath());
            NodeCommand.printToken(out(), field(joined, "token"));
        });
    }
}
