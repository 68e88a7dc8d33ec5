package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code parley token ...}: node credentials. */
@Command(name = "token", mixinStandardHelpOptions = true, description = "Manage node tokens.",
        subcommands = TokenCommand.RotateToken.class)
final class TokenCommand extends CommandGroup {

    @Command(name = "rotate", mixinStandardHelpOptions = true,
            description = "Issue a new token for a node (admin or the node itself); the old one stops working.")
    static final class RotateToken extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "Node id.")
        String id;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode answer = client.post("/v1/nodes/" + HubClient.segment(id) + "/token",
                    HubClient.JSON.createObjectNode());
            emit(answer, () -> {
                line("rotated", "node", id);
                NodeCommand.printToken(out(), field(answer, "token"));
            });
        }
    }
}
