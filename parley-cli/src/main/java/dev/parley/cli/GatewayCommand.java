package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;

/** {@code parley gateway ...}: the federation as one gateway sees it (admin). */
@Command(name = "gateway", mixinStandardHelpOptions = true,
        description = "The federation of gateways, as the hub you talk to sees it (admin token).",
        subcommands = {GatewayCommand.ListGateways.class, GatewayCommand.GatewayStatus.class})
final class GatewayCommand extends CommandGroup {

    @Command(name = "list", aliases = "ls", mixinStandardHelpOptions = true,
            description = {"List every gateway seen in presence: whether it is present now, its last beat, its "
                    + "version, and how far this gateway has taken in its outbox (CURSOR)."})
    static final class ListGateways extends ClientCommand {
        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode answer = client.get("/v1/gateways");
            emit(answer, () -> {
                Table table = new Table("ID", "PRESENT", "LAST SEEN", "VERSION", "CURSOR");
                answer.path("gateways").forEach(g -> table.row(field(g, "id")
                        + (g.path("self").asBoolean() ? " (this)" : ""), field(g, "present"), field(g, "lastSeen"),
                        field(g, "version"), g.path("cursor").isNull() ? "-" : field(g, "cursor")));
                table.print(out());
            });
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true,
            description = {"This gateway: connected to NATS or spooling, records owed to other gateways, and "
                    + "inbound records refused or unreadable and state room entries skipped."})
    static final class GatewayStatus extends ClientCommand {
        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode answer = client.get("/v1/gateways");
            emit(answer, () -> new Table()
                    .row("gateway", field(answer, "gateway"))
                    .row("mode", field(answer, "mode"))
                    .row("spool", field(answer, "spoolDepth"))
                    .row("refused", field(answer, "refused"))
                    .row("unreadable", field(answer, "unreadable"))
                    .row("skipped", field(answer, "stateSkipped"))
                    .print(out()));
        }
    }
}
