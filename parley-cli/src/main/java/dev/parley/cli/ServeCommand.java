package dev.parley.cli;

import dev.parley.server.Hub;
import dev.parley.server.HubConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;

/** {@code parley serve}: runs a hub in this process until it is stopped (SIGTERM or Ctrl-C). */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = {"Run a hub in this process until SIGTERM or Ctrl-C.",
                "The first start into a data directory creates the admin token, prints it once and stores it "
                        + "in <data>/admin.token (mode 0600).",
                "PARLEY_ADMIN_TOKEN, when set, is the admin token instead."})
final class ServeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--data", paramLabel = "DIR", defaultValue = "${env:PARLEY_DATA:-parley-data}",
            description = "Data directory (default: env PARLEY_DATA, else ./parley-data).")
    Path data;

    @Option(names = "--host", defaultValue = HubConfig.DEFAULT_HOST,
            description = "Listen address (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", defaultValue = "" + HubConfig.DEFAULT_PORT,
            description = "Listen port, 0 for any free one (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--max-depth", paramLabel = "N", defaultValue = "1",
            description = "How deep lineage may go; 1 means a child may not create nodes (default: ${DEFAULT-VALUE}).")
    int maxDepth;

    @Option(names = "--mcp-unauthenticated-as", paramLabel = "NODE",
            description = {"Conformance runs only: MCP requests to /mcp without any Authorization header act as NODE,"
                    + " under NODE's rate limit.",
                    "RISK: anyone who can reach the hub's port (any local user or process) then sends, reads"
                            + " and acks as NODE without a token.",
                    "NODE must exist when the hub starts (else the hub refuses to start); refused unless the hub"
                            + " listens on loopback."})
    String mcpUnauthenticatedAs;

    @Option(names = "--policy", paramLabel = "FILE",
            description = {"Policy rules, JSON or YAML:",
                    "{\"rules\": [{\"name\", \"effect\": \"allow\"|\"deny\", \"when\": CEL}]}.",
                    "Reloaded when it changes (default: the built-in ACL alone)."})
    Path policy;

    @Option(names = "--require-node-proof",
            description = "Admit by invite only newcomers that prove an Ed25519 key (parley join always does).")
    boolean requireNodeProof;

    @Option(names = "--rate", paramLabel = "N",
            description = "Requests a second each node may make, unless parley limits says otherwise (default: 200).")
    Double rate;

    @Option(names = "--burst", paramLabel = "N", description = "Requests a node may make at once (default: 400).")
    Long burst;

    @Option(names = "--audit-retention", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Audit entries older than this are pruned, e.g. 90d (default: 30d).")
    Duration auditRetention;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        HubConfig config = config();
        Hub hub;
        try {
            hub = Hub.start(config);
        } catch (RuntimeException e) {
            spec.commandLine().getErr().println("parley: serve_failed: " + e.getMessage());
            spec.commandLine().getErr().flush();
            return ExitStatus.REFUSED;
        }
        if (mcpUnauthenticatedAs != null) {
            try {
                hub.allowUnauthenticatedMcp(mcpUnauthenticatedAs);
            } catch (RuntimeException e) {
                hub.close();
                spec.commandLine().getErr().println("parley: serve_failed: " + e.getMessage());
                spec.commandLine().getErr().flush();
                return ExitStatus.REFUSED;
            }
        }
        out.println("parley hub listening on " + hub.url());
        if (hub.adminTokenCreated()) {
            out.println("admin token (shown once; stored in " + data.resolve("admin.token").toAbsolutePath() + "):");
            out.println(hub.adminToken());
        }
        out.flush();
        // SIGTERM and Ctrl-C run shutdown hooks: close gracefully so in-flight commits finish.
        Thread shutdown = new Thread(hub::close, "parley-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdown);
        hub.awaitClosed();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdown);
        } catch (IllegalStateException shuttingDown) {
            // the hook itself closed the hub; nothing to undo
        }
        return ExitStatus.OK;
    }

    /** The hub's configuration from the options (and PARLEY_ADMIN_TOKEN); out-of-range limits are usage errors. */
    HubConfig config() {
        if ((rate != null && !(rate > 0)) || (burst != null && burst < 1)) {
            throw new ParameterException(spec.commandLine(), "--rate must be above 0 and --burst at least 1");
        }
        Optional<String> adminToken = Optional.ofNullable(System.getenv("PARLEY_ADMIN_TOKEN"))
                .map(String::strip)
                .filter(token -> !token.isEmpty());
        HubConfig config = HubConfig.defaults(data)
                .withHost(host)
                .withPort(port)
                .withMaxDepth(maxDepth)
                .withAdminToken(adminToken)
                .withPolicy(Optional.ofNullable(policy))
                .withRequireNodeProof(requireNodeProof);
        config = config.withNodeRate(rate != null ? rate : config.gate().nodeRate(),
                burst != null ? burst : config.gate().nodeBurst());
        return auditRetention != null ? config.withAuditRetention(auditRetention) : config;
    }
}
