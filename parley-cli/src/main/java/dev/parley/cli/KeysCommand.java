package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;

/** {@code parley keys ...}: the hub's ticket-signing keys (EdDSA), which admission tickets are signed with. */
@Command(name = "keys", mixinStandardHelpOptions = true,
        description = "List and rotate the hub's ticket-signing keys.",
        subcommands = {KeysCommand.ListKeys.class, KeysCommand.RotateKeys.class})
final class KeysCommand extends CommandGroup {

    @Command(name = "list", aliases = "ls", mixinStandardHelpOptions = true,
            description = {"List the keys that verify tickets: the active one, and retired ones",
                    "until the last ticket they signed has expired."})
    static final class ListKeys extends ClientCommand {
        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode answer = client.get("/v1/auth/keys");
            emit(answer, () -> {
                out().println("issuer  " + field(answer, "issuer"));
                Table table = new Table("KID", "CREATED", "RETIRED");
                answer.path("keys").forEach(k -> table.row(field(k, "kid"), field(k, "createdAt"),
                        field(k, "retiredAt")));
                table.print(out());
            });
        }
    }

    @Command(name = "rotate", mixinStandardHelpOptions = true,
            description = {"Sign tickets with a new key from now on (admin).",
                    "The previous key still verifies the tickets it signed until they expire."})
    static final class RotateKeys extends ClientCommand {
        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode answer = client.post("/v1/auth/keys/rotate", JsonTrees.object());
            emit(answer, () -> line("rotated", "kid", field(answer, "kid")));
        }
    }
}
