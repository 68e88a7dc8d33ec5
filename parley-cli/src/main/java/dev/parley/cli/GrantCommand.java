package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.TypeConversionException;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;

/** {@code parley grant ...}: one-way permissions to send across groups. */
@Command(name = "grant", mixinStandardHelpOptions = true,
        description = "Manage grants: a grant lets one node send to another (one direction).",
        subcommands = {GrantCommand.AddGrant.class, GrantCommand.ListGrants.class, GrantCommand.RemoveGrant.class})
final class GrantCommand extends CommandGroup {

    @Command(name = "add", mixinStandardHelpOptions = true, description = "Let --from send to --to (admin).")
    static final class AddGrant extends ClientCommand {
        @Option(names = "--from", required = true, paramLabel = "A", description = "Sender.")
        String from;

        @Option(names = "--to", required = true, paramLabel = "B", description = "Receiver.")
        String to;

        @ArgGroup(exclusive = true, multiplicity = "0..1")
        Expiry expiry;

        @Option(names = "--note", description = "Why the grant exists.")
        String note;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            ObjectNode body = JsonTrees.object().put("from", from).put("to", to);
            body.put("expiresAt", expiry == null ? null : expiry.instant().truncatedTo(ChronoUnit.MILLIS).toString());
            if (note != null) {
                body.put("note", note);
            }
            JsonNode grant = client.post("/v1/grants", body);
            emit(grant, () -> line("granted", "id", field(grant, "id"), "from", field(grant, "from"),
                    "to", field(grant, "to"), "expires", field(grant, "expiresAt")));
        }
    }

    /** Either an absolute end or a lifetime from now; the hub only knows {@code expiresAt}. */
    static final class Expiry {
        @Option(names = "--expires", paramLabel = "RFC3339", converter = InstantConverter.class,
                description = "When the grant ends, e.g. 2026-12-01T00:00:00Z.")
        Instant at;

        @Option(names = "--ttl", paramLabel = "DURATION", converter = DurationConverter.class,
                description = "How long the grant lasts from now, e.g. 10m, 2h, 7d.")
        Duration ttl;

        Instant instant() {
            return at != null ? at : Instant.now().plus(ttl);
        }
    }

    static final class InstantConverter implements ITypeConverter<Instant> {
        @Override
        public Instant convert(String value) {
            try {
                return Instant.parse(value.strip());
            } catch (DateTimeParseException e) {
                throw new TypeConversionException("'" + value + "' is not an RFC 3339 time (e.g. 2026-12-01T00:00:00Z)");
            }
        }
    }

    @Command(name = "list", aliases = "ls", mixinStandardHelpOptions = true,
            description = "List grants (admin: all; a node: those from or to itself).")
    static final class ListGrants extends ClientCommand {
        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode answer = client.get("/v1/grants");
            emit(answer, () -> {
                Table table = new Table("ID", "FROM", "TO", "EXPIRES", "NOTE");
                answer.path("items").forEach(grant -> table.row(field(grant, "id"), field(grant, "from"),
                        field(grant, "to"), field(grant, "expiresAt"), field(grant, "note")));
                table.print(out());
            });
        }
    }

    @Command(name = "rm", aliases = "remove", mixinStandardHelpOptions = true,
            description = {"Remove a grant (admin).",
                    "With --json prints {\"id\":ID,\"deleted\":true} (the hub answers 204 without a body)."})
    static final class RemoveGrant extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "Grant id.")
        String id;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            client.delete("/v1/grants/" + HubClient.segment(id));
            emit(JsonTrees.object().put("id", id).put("deleted", true),
                    () -> line("deleted", "grant", id));
        }
    }
}
