package dev.parley.cli;

import dev.parley.server.Hub;
import dev.parley.core.OwnerAckPolicy;
import dev.parley.nats.GatewayConfig;
import dev.parley.server.HubConfig;
import dev.parley.trace.export.OtlpSettings;
import dev.parley.trace.export.OtlpSettingsException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import sun.misc.Signal;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;

/** {@code parley serve}: runs a hub in this process until it is stopped (SIGTERM or Ctrl-C). */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = {"Run a hub in this process until SIGTERM or Ctrl-C.",
                "The first start into a data directory creates the admin token, prints it once and stores it "
                        + "in <data>/admin.token (mode 0600).",
                "PARLEY_ADMIN_TOKEN, when set, is the admin token instead."})
final class ServeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    DataDirectory data;

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

    @Option(names = "--log-level", paramLabel = "[LOGGER=]LEVEL", converter = LogLevel.Converter.class,
            description = {"Log level of every logger (e.g. FINE), or of one logger and those under it "
                    + "(e.g. dev.parley.store=FINE); repeatable, a later one wins.",
                    "Levels: SEVERE, WARNING, INFO, CONFIG, FINE, FINER, FINEST, ALL, OFF (or error, warn, debug, "
                            + "trace) (default: INFO)."})
    List<LogLevel> logLevels = List.of();

    // --- OpenTelemetry export (over the standard OTEL_* variables) ---
    @Option(names = "--otlp-endpoint", paramLabel = "URL",
            description = {"Export spans and agent turns over OTLP/HTTP to URL (/v1/traces is appended), as "
                    + "OTEL_EXPORTER_OTLP_ENDPOINT does; this wins over it.",
                    "Langfuse: https://cloud.langfuse.com/api/public/otel (default: off unless the variable is set)."})
    String otlpEndpoint;

    @Option(names = "--otlp-header", paramLabel = "KEY=VALUE",
            description = "A header on every export request, over OTEL_EXPORTER_OTLP_HEADERS (value URL-encoded, "
                    + "e.g. Authorization=Basic%%20...); repeatable.")
    List<String> otlpHeaders = List.of();

    @Option(names = "--service-name", paramLabel = "NAME",
            description = "service.name of the exported spans, over OTEL_SERVICE_NAME (default: parley).")
    String serviceName;

    // --- connection timeouts and the per-address cap ---
    @Option(names = "--idle-timeout", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Close a connection with no request under way after this, e.g. 2m (default: 60s).")
    Duration idleTimeout;

    @Option(names = "--header-timeout", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "A request's headers must be in this long after its request line, or the connection "
                    + "is closed (default: 10s).")
    Duration headerTimeout;

    @Option(names = "--body-timeout", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "A request's body must be in this long after its headers, or the connection is closed "
                    + "(default: 30s). Answers being written, such as SSE streams, are never cut by these timeouts.")
    Duration bodyTimeout;

    @Option(names = "--max-connections-per-address", paramLabel = "N",
            description = "Connections one client address may hold open at once; the next is refused with 429 "
                    + "too_many_connections. Raise it when many clients share one address, e.g. behind a proxy "
                    + "(default: 512).")
    Integer maxConnectionsPerAddress;

    @Option(names = "--gateway", paramLabel = "ID",
            description = "Run as gateway ID of a federation over NATS JetStream (needs --nats). Without it the hub is "
                    + "a single-host hub.")
    String gateway;

    @Option(names = "--nats", paramLabel = "URL", description = "The NATS server (with JetStream) the gateway joins, "
            + "e.g. nats://127.0.0.1:4222; for a NATS cluster, its servers separated by commas.")
    String nats;

    @Option(names = "--nats-replicas", paramLabel = "N", description = "Replicas of the gateway's outbox stream and of "
            + "the state room buckets: 1 on one nats-server, 3 on a cluster of three (default: 1).")
    Integer natsReplicas;

    @Option(names = "--owner-ack-window", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "How long a gateway waits for the gateway owning a target to confirm an envelope before "
                    + "publishing it again; each further wait is twice as long (default: 30s).")
    Duration ownerAckWindow;

    @Option(names = "--owner-ack-publications", paramLabel = "N", description = "Publications of an envelope its "
            + "owner never confirms before it is dead-lettered with a notice to its sender (default: 5).")
    Integer ownerAckPublications;

    @Option(names = "--nats-creds", paramLabel = "FILE", description = "The gateway's NATS credentials (user JWT and "
            + "nkey seed). Without it the gateway runs in development mode: its outbox is not protected.")
    Path natsCreds;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        HubConfig config = config();
        LogLevel.apply(logLevels);
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
            out.println("admin token (shown once; stored in " + data.path().resolve("admin.token").toAbsolutePath()
                    + "):");
            out.println(hub.adminToken());
        }
        out.flush();
        // Close gracefully so in-flight commits finish. SIGTERM, the way a hub is stopped, is handled
        // here: the JVM's own handler would exit 143 however cleanly the hub shut down. Ctrl-C and
        // the other signals run the shutdown hook.
        GracefulStop stop = new GracefulStop(hub);
        Thread hook = new Thread(stop::run, "parley-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        Signal.handle(new Signal("TERM"), signal -> Thread.ofPlatform().name("parley-sigterm").start(stop::run));
        boolean clean = stop.await();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook itself is closing the hub; nothing to undo
        }
        if (!clean) {
            spec.commandLine().getErr().println("parley: shutdown_failed: the hub did not stop cleanly (see the log)");
            spec.commandLine().getErr().flush();
            return ExitStatus.HUB_FAILURE;
        }
        return ExitStatus.OK;
    }

    /** Closes the hub once, whoever asks first; every caller returns only when it is closed. */
    private static final class GracefulStop {
        private static final Logger LOG = Logger.getLogger(ServeCommand.class.getName());
        private final Hub hub;
        private final AtomicBoolean started = new AtomicBoolean();
        private final CountDownLatch done = new CountDownLatch(1);
        private volatile boolean clean;

        private GracefulStop(Hub hub) {
            this.hub = hub;
        }

        void run() {
            if (started.compareAndSet(false, true)) {
                try {
                    hub.close();
                    clean = true;
                } catch (RuntimeException e) {
                    LOG.log(Level.SEVERE, "the hub did not stop cleanly", e);
                } finally {
                    done.countDown();
                }
            }
            awaitUninterruptibly();
        }

        /** Waits until the hub is closed (by a signal or the hook); true when it closed cleanly. */
        boolean await() throws InterruptedException {
            done.await();
            return clean;
        }

        private void awaitUninterruptibly() {
            boolean interrupted = false;
            while (true) {
                try {
                    done.await();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The hub's configuration from the options (and PARLEY_ADMIN_TOKEN); out-of-range limits are usage errors. */
    HubConfig config() {
        if ((rate != null && !(rate > 0)) || (burst != null && burst < 1)) {
            throw new ParameterException(spec.commandLine(), "--rate must be above 0 and --burst at least 1");
        }
        Optional<String> adminToken = Optional.ofNullable(System.getenv("PARLEY_ADMIN_TOKEN"))
                .map(String::strip)
                .filter(token -> !token.isEmpty());
        HubConfig config = HubConfig.defaults(data.path())
                .withHost(host)
                .withPort(port)
                .withMaxDepth(maxDepth)
                .withAdminToken(adminToken)
                .withPolicy(Optional.ofNullable(policy))
                .withRequireNodeProof(requireNodeProof);
        config = config.withNodeRate(rate != null ? rate : config.gate().nodeRate(),
                burst != null ? burst : config.gate().nodeBurst());
        config = config.withTransport(transport(config.transport()));
        config = config.withGateway(gateway());
        config = config.withExport(export());
        return auditRetention != null ? config.withAuditRetention(auditRetention) : config;
    }

    /** The OTLP export: the OTEL_* variables, the options over them; a bad value is a usage error naming it. */
    private OtlpSettings export() {
        try {
            return OtlpSettings.fromEnvironment(System.getenv()).withOptions(Optional.ofNullable(otlpEndpoint),
                    otlpHeaders, Optional.ofNullable(serviceName));
        } catch (OtlpSettingsException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    private Optional<GatewayConfig> gateway() {
        if (gateway == null && nats == null && natsCreds == null && natsReplicas == null && ownerAckWindow == null
                && ownerAckPublications == null) {
            return Optional.empty();
        }
        if (gateway == null || nats == null) {
            throw new ParameterException(spec.commandLine(), "--gateway and --nats go together (and --nats-creds, "
                    + "--nats-replicas, --owner-ack-window, --owner-ack-publications with them)");
        }
        try {
            OwnerAckPolicy ownerAck = new OwnerAckPolicy(Objects.requireNonNullElse(ownerAckWindow,
                    OwnerAckPolicy.DEFAULT.window()), Objects.requireNonNullElse(ownerAckPublications,
                    OwnerAckPolicy.DEFAULT.publications()));
            return Optional.of(new GatewayConfig(gateway, nats, Optional.ofNullable(natsCreds),
                    natsReplicas == null ? 1 : natsReplicas, ownerAck));
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    private HubConfig.Transport transport(HubConfig.Transport defaults) {
        try {
            return new HubConfig.Transport(Objects.requireNonNullElse(idleTimeout, defaults.idleTimeout()),
                    Objects.requireNonNullElse(headerTimeout, defaults.headerTimeout()),
                    Objects.requireNonNullElse(bodyTimeout, defaults.bodyTimeout()),
                    Objects.requireNonNullElse(maxConnectionsPerAddress, defaults.maxConnectionsPerAddress()));
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }
}
