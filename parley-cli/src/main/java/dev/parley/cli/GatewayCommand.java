package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.core.IoReason;
import dev.parley.nats.auth.AuthorityFile;
import dev.parley.nats.auth.GatewayId;
import dev.parley.nats.auth.NatsAuthority;
import dev.parley.nats.auth.StateRoomBuckets;
import dev.parley.server.keys.KeyFileSealer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
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
                GatewayCommand.Revoke.class, GatewayCommand.ListGateways.class, GatewayCommand.GatewayStatus.class})
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

        @Mixin
        DataDirectory data;

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
            if (AuthorityFile.exists(data.path())) {
                err.println("parley: gateway init: " + data.path() + " already holds a NATS authority: a federation"
                        + " has one; mint with it (`parley gateway invite`) instead of making another");
                return ExitStatus.CONFLICT;
            }
            NatsAuthority authority = NatsAuthority.create();
            List<Path> written = new java.util.ArrayList<>();
            try {
                Files.createDirectories(data.path());
                Files.writeString(conf, "listen: \"" + listen + "\"\n" + authority.serverConfig(store.toAbsolutePath()),
                        StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE_NEW);
                written.add(conf);
                writeSecret(credsFile, authority.mint(new GatewayId(gateway), StateRoomBuckets.DEFAULT).creds());
                written.add(credsFile);
                // last: it makes the next init refuse
                AuthorityFile.create(data.path(), KeyFileSealer.open(data.path()), authority);
            } catch (IOException | RuntimeException e) {
                written.forEach(GatewayCommand::deleteQuietly); // all or nothing
                err.println("parley: gateway init: " + java.util.Objects.requireNonNullElse(e.getMessage(),
                        "cannot write the files") + "; nothing was written");
                return e instanceof IllegalStateException ? ExitStatus.CONFLICT : ExitStatus.REFUSED;
            }
            out.println("authority  " + data.path().resolve("nats-authority").toAbsolutePath() + " (sealed with "
                    + data.path().resolve("hub.key").toAbsolutePath() + ")");
            out.println("nats conf  " + conf.toAbsolutePath());
            out.println("creds      " + credsFile.toAbsolutePath() + " (gateway " + gateway + ")");
            out.println("next       nats-server -c " + conf + "   then   parley serve --data " + data.path()
                    + " --gateway " + gateway + " --nats nats://" + listen + " --nats-creds " + credsFile);
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
            var body = JsonTrees.object().put("gateway", gateway);
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
                answer = client.post("/v1/auth/gateway", JsonTrees.object().put("inviteToken", invite));
                Files.writeString(creds, answer.path("creds").asText(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new ParameterException(spec.commandLine(), "--creds: cannot write " + creds + " (" + e.getMessage()
                        + "); the invite is used: ask for another");
            } catch (RuntimeException | InterruptedException e) {
                deleteQuietly(creds);
                throw e;
            }
            // the seed goes to the file only, never to the terminal
            JsonNode shown = JsonTrees.object().put("gateway", answer.path("gateway").asText())
                    .put("user", answer.path("user").asText()).put("creds", creds.toAbsolutePath().toString());
            emit(shown, () -> {
                line("joined", "gateway", field(shown, "gateway"), "user", field(shown, "user"));
                out().println("creds    " + field(shown, "creds"));
            });
        }
    }

    @Command(name = "revoke", mixinStandardHelpOptions = true,
            description = {"Revoke a gateway's NATS credentials, on the gateway that ran `parley gateway init` (the",
                    "hub need not run): the user key (as `parley gateway join` printed it, and the audit log of the",
                    "exchange holds it) is refused from now on. --conf rewrites the account in the nats-server",
                    "configuration so that a restarted server refuses it too; --nats pushes it to a running server,",
                    "which closes that user's connections at once."})
    static final class Revoke implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "USER", description = "The gateway's NATS user public key (U...).")
        String user;

        @Mixin
        DataDirectory data;

        @Option(names = "--conf", paramLabel = "FILE", description = "The nats-server configuration to rewrite.")
        Path conf;

        @Option(names = "--nats", paramLabel = "URL", description = "A running nats-server to push the account to.")
        String nats;

        @Override
        public Integer call() throws InterruptedException {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            if (!NatsAuthority.isUserKey(user)) {
                throw new ParameterException(spec.commandLine(), "USER: not a NATS user public key: " + user);
            }
            if (!AuthorityFile.exists(data.path())) {
                err.println("parley: gateway revoke: " + data.path() + " holds no NATS authority: revoke on the"
                        + " gateway that ran `parley gateway init`");
                return ExitStatus.NOT_FOUND;
            }
            String configuration;
            try {
                configuration = conf == null ? null : Files.readString(conf, StandardCharsets.UTF_8);
            } catch (IOException e) {
                err.println("parley: gateway revoke: cannot read " + conf + " (" + IoReason.of(e)
                        + "); nothing changed");
                return ExitStatus.REFUSED;
            }
            NatsAuthority revoked;
            try {
                revoked = AuthorityFile.revoke(data.path(), KeyFileSealer.open(data.path()), user,
                        java.time.Instant.now());
            } catch (RuntimeException e) {
                err.println("parley: gateway revoke: " + e.getMessage() + "; nothing changed");
                return ExitStatus.REFUSED;
            }
            out.println("revoked  " + user + " (in " + data.path().resolve("nats-authority").toAbsolutePath() + ")");
            if (configuration != null) {
                try {
                    Files.writeString(conf, preloading(configuration, revoked), StandardCharsets.UTF_8);
                    out.println("conf     " + conf.toAbsolutePath() + " (a restarted nats-server refuses it too)");
                } catch (IOException | IllegalArgumentException e) {
                    err.println("parley: gateway revoke: " + conf + " not rewritten: " + e.getMessage());
                    return ExitStatus.REFUSED;
                }
            }
            if (nats != null) {
                try {
                    revoked.publishAccount(nats);
                    out.println("nats     " + nats + " refuses it now");
                } catch (IOException | RuntimeException e) {
                    err.println("parley: gateway revoke: " + nats + " not told: " + e.getMessage()
                            + " (the authority and the configuration hold the revocation; run again with --nats)");
                    return ExitStatus.REFUSED;
                }
            }
            out.flush();
            return ExitStatus.OK;
        }

        /** The configuration with the account's preloaded JWT replaced by the one that carries the revocations. */
        private static String preloading(String configuration, NatsAuthority authority) {
            String prefix = authority.accountPublicKey() + ": ";
            List<String> lines = new java.util.ArrayList<>(configuration.lines().toList());
            int at = -1;
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).strip().startsWith(prefix)) {
                    at = i;
                }
            }
            if (at < 0) {
                throw new IllegalArgumentException("it preloads no account " + authority.accountPublicKey()
                        + ": not this federation's configuration");
            }
            String line = lines.get(at);
            lines.set(at, line.substring(0, line.indexOf(prefix)) + prefix + authority.accountJwt());
            return String.join("\n", lines) + "\n";
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
