package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.nats.auth.AuthorityFile;
import dev.parley.nats.auth.GatewayId;
import dev.parley.nats.auth.NatsAuthority;
import dev.parley.nats.auth.StateRoomBuckets;
import dev.parley.server.keys.KeyFileSealer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code parley gateway ...}: making a federation ({@code init}), admitting gateways into it
 * ({@code invite}, {@code join}), and the federation as one gateway sees it ({@code list},
 * {@code status}).
 */
@Command(name = "gateway", mixinStandardHelpOptions = true,
        description = "The federation of gateways: make one, admit gateways, and see it from the hub you talk to.",
        subcommands = {GatewayCommand.Init.class, GatewayCommand.Invite.class, GatewayCommand.Join.class,
                GatewayCommand.ListGateways.class, GatewayCommand.GatewayStatus.class})
final class GatewayCommand extends CommandGroup {

    @Command(name = "init", mixinStandardHelpOptions = true,
            description = {"Make a federation's NATS trust, once, on the first gateway's machine (the hub need not run):",
                    "the authority (operator, accounts, signing key) sealed into the gateway's data directory,",
                    "the nats-server configuration that trusts it, and the first gateway's credentials (mode 0600).",
                    "Then: nats-server -c CONF, and parley serve --gateway ID --nats URL --nats-creds CREDS.",
                    "Other gateways join with `parley gateway invite` here and `parley gateway join` there."})
    static final class Init implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--gateway", required = true, paramLabel = "ID", description = "This first gateway's id.")
        String gateway;

        @Option(names = "--data", paramLabel = "DIR", defaultValue = "${env:PARLEY_DATA:-parley-data}",
                description = "The gateway's data directory, as given to parley serve (default: env PARLEY_DATA, else"
                        + " ./parley-data).")
        Path data;

        @Option(names = "--nats-listen", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:4222",
                description = "Where nats-server listens (default: ${DEFAULT-VALUE}).")
        String listen;

        @Option(names = "--nats-store", required = true, paramLabel = "DIR",
                description = "nats-server's JetStream store directory.")
        Path store;

        @Option(names = "--conf", paramLabel = "FILE", defaultValue = "nats-server.conf",
                description = "Where to write the nats-server configuration (default: ${DEFAULT-VALUE}).")
        Path conf;

        @Option(names = "--creds", paramLabel = "FILE",
                description = "Where to write this gateway's NATS credentials (default: ID.creds).")
        Path creds;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            try {
                new GatewayId(gateway);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), "--gateway: " + e.getMessage());
            }
            Path credsFile = creds != null ? creds : Path.of(gateway + ".creds");
            for (Path file : List.of(conf, credsFile)) {
                if (Files.exists(file)) {
                    err.println("parley: gateway init: " + file + " exists; nothing was written (remove it or choose"
                            + " another path)");
                    return ExitStatus.CONFLICT;
                }
            }
            if (AuthorityFile.exists(data)) {
                err.println("parley: gateway init: " + data + " already holds a NATS authority: a federation has one;"
                        + " mint with it (`parley gateway invite`) instead of making another");
                return ExitStatus.CONFLICT;
            }
            NatsAuthority authority = NatsAuthority.create();
            List<Path> written = new java.util.ArrayList<>();
            try {
                Files.createDirectories(data);
                Files.writeString(conf, "listen: \"" + listen + "\"\n" + authority.serverConfig(store.toAbsolutePath()),
                        StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE_NEW);
                written.add(conf);
                writeSecret(credsFile, authority.mint(new GatewayId(gateway), StateRoomBuckets.DEFAULT).creds());
                written.add(credsFile);
                AuthorityFile.create(data, KeyFileSealer.open(data), authority); // last: it makes the next init refuse
            } catch (IOException | RuntimeException e) {
                written.forEach(GatewayCommand::deleteQuietly); // all or nothing
                err.println("parley: gateway init: " + java.util.Objects.requireNonNullElse(e.getMessage(),
                        "cannot write the files") + "; nothing was written");
                return e instanceof IllegalStateException ? ExitStatus.CONFLICT : ExitStatus.REFUSED;
            }
            out.println("authority  " + data.resolve("nats-authority").toAbsolutePath() + " (sealed with "
                    + data.resolve("hub.key").toAbsolutePath() + ")");
            out.println("nats conf  " + conf.toAbsolutePath());
            out.println("creds      " + credsFile.toAbsolutePath() + " (gateway " + gateway + ")");
            out.println("next       nats-server -c " + conf + "   then   parley serve --data " + data + " --gateway "
                    + gateway + " --nats nats://" + listen + " --nats-creds " + credsFile);
            out.flush();
            return ExitStatus.OK;
        }
    }

    @Command(name = "invite", mixinStandardHelpOptions = true,
            description = {"Invite a new gateway (admin of the gateway that ran `parley gateway init`). Prints a",
                    "single-use invite token (pg_...) that `parley gateway join` trades for the new gateway's NATS",
                    "credentials."})
    static final class Invite extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ID", description = "The new gateway's id.")
        String gateway;

        @Option(names = "--ttl", paramLabel = "SECONDS", description = "How long the invite is valid (10 to 604800;"
                + " default 900).")
        Long ttlSeconds;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            var body = HubClient.JSON.createObjectNode().put("gateway", gateway);
            if (ttlSeconds != null) {
                body.put("ttlSeconds", ttlSeconds);
            }
            JsonNode answer = client.post("/v1/gateways/invites", body);
            emit(answer, () -> {
                line("invited", "gateway", field(answer, "gateway"), "id", field(answer, "id"), "expires",
                        field(answer, "expiresAt"));
                out().println("invite   " + field(answer, "inviteToken"));
            });
        }
    }

    @Command(name = "join", mixinStandardHelpOptions = true,
            description = {"Join a federation with a gateway invite: trades it, at the inviting gateway (--url), for",
                    "this gateway's NATS credentials and writes them to --creds (mode 0600). Needs no token."})
    static final class Join extends ClientCommand {
        @Option(names = "--invite", required = true, paramLabel = "TOKEN", description = "The gateway invite (pg_...).")
        String invite;

        @Option(names = "--creds", required = true, paramLabel = "FILE",
                description = "Where to write the credentials; must not exist.")
        Path creds;

        @Override
        protected boolean authenticated() {
            return false;
        }

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            // The file first (new, 0600): an invite is traded once, so it is spent only where its answer can go.
            try {
                writeSecret(creds, "");
            } catch (IOException e) {
                throw new ParameterException(spec.commandLine(), "--creds: cannot create " + creds + " ("
                        + e.getMessage() + "); the invite was not used");
            }
            JsonNode answer;
            try {
                answer = client.post("/v1/auth/gateway", HubClient.JSON.createObjectNode().put("inviteToken", invite));
                Files.writeString(creds, answer.path("creds").asText(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new ParameterException(spec.commandLine(), "--creds: cannot write " + creds + " (" + e.getMessage()
                        + "); the invite is used: ask for another");
            } catch (RuntimeException | InterruptedException e) {
                deleteQuietly(creds);
                throw e;
            }
            // the seed goes to the file only, never to the terminal
            JsonNode shown = HubClient.JSON.createObjectNode().put("gateway", answer.path("gateway").asText())
                    .put("user", answer.path("user").asText()).put("creds", creds.toAbsolutePath().toString());
            emit(shown, () -> {
                line("joined", "gateway", field(shown, "gateway"), "user", field(shown, "user"));
                out().println("creds    " + field(shown, "creds"));
            });
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // an empty file left behind says nothing secret
        }
    }

    /** Writes a secret into a new file readable by its owner only; refuses to replace a file. */
    private static void writeSecret(Path file, String secret) throws IOException {
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (FileAlreadyExistsException e) {
            throw new IOException(file + " exists", e);
        }
        Files.writeString(file, secret, StandardCharsets.UTF_8);
    }

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
