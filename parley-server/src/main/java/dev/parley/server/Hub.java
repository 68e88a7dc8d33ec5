package dev.parley.server;

import dev.parley.core.AccessPolicy;
import dev.parley.core.Admission;
import dev.parley.core.Rate;
import dev.parley.core.RateLimits;
import dev.parley.store.SqliteAdmissions;
import dev.parley.core.Broadcasts;
import dev.parley.core.DeliveryPolicies;
import dev.parley.core.Notices;
import dev.parley.core.Graph;
import dev.parley.core.GraphSnapshot;
import dev.parley.core.Messages;
import dev.parley.core.Registry;
import dev.parley.core.Router;
import dev.parley.core.Tasks;
import dev.parley.core.Tokens;
import dev.parley.core.Topics;
import dev.parley.core.UuidV7;
import dev.parley.store.SqliteDeliveries;
import dev.parley.store.SqliteStore;
import io.helidon.common.socket.SocketOptions;
import io.helidon.webserver.WebServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;

/**
 * A running hub. {@link #start(HubConfig)} opens the store, starts HTTP and returns once
 * the hub is listening; {@link #close()} shuts it down gracefully: streams end cleanly,
 * the listener stops, and every queued commit finishes before the store closes.
 */
public final class Hub implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Hub.class.getName());
    static final String ADMIN_TOKEN_FILE = "admin.token";
    private static final String ADMIN_TOKEN_PREFIX = "pa_";

    private final WebServer server;
    private final SqliteStore store;
    private final InboxFeeds feeds;
    private final Dispatcher dispatcher;
    private final StreamWatchdog watchdog;
    private final String adminToken;
    private final boolean adminTokenCreated;
    private final String host;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final CountDownLatch closedLatch = new CountDownLatch(1);
    // ---- issue 5 (MCP channel bridge): begin ----
    private McpRoutes mcp;

    /**
     * Conformance runs only: MCP requests without any Authorization header act as
     * {@code node}. Refused unless the hub listens on loopback; off unless called.
     */
    public void allowUnauthenticatedMcp(String node) {
        mcp.unauthenticatedAs(dev.parley.core.NodeId.of(node));
    }
    // ---- issue 5 (MCP channel bridge): end ----

    private Hub(WebServer server, SqliteStore store, InboxFeeds feeds, Dispatcher dispatcher, StreamWatchdog watchdog,
                String adminToken, boolean adminTokenCreated, String host) {
        this.server = server;
        this.store = store;
        this.feeds = feeds;
        this.dispatcher = dispatcher;
        this.watchdog = watchdog;
        this.adminToken = adminToken;
        this.adminTokenCreated = adminTokenCreated;
        this.host = host;
    }

    public static Hub start(HubConfig config) {
        JsonLogFormatter.install();
        InstantSource clock = () -> Instant.ofEpochMilli(System.currentTimeMillis()); // the wire has millisecond times
        boolean[] created = new boolean[1];
        String admin = config.adminToken().orElseGet(() -> loadOrCreateAdminToken(config.dataDir(), created));

        InboxFeeds feeds = new InboxFeeds();
        CommitListeners committed = new CommitListeners().add(feeds);
        Metrics metrics = new Metrics();
        SqliteStore store = SqliteStore.open(config.dataDir(), committed, metrics);
        SqliteDeliveries deliveries = store.deliveries(KeyFileSealer.open(config.dataDir()));
        metrics.backlogFrom(store::backlog);
        GraphSnapshot snapshot = store.loadGraph();
        Graph graph = new Graph();
        snapshot.nodes().forEach(graph::put);
        snapshot.retired().forEach(graph::retire);
        snapshot.grants().forEach(graph::putGrant);
        Tokens tokens = new Tokens(admin, snapshot.tokenHashes());
        UuidV7 ids = new UuidV7(clock);
        Registry registry = new Registry(graph, tokens, store, clock, ids, config.maxDepth());
        // --- admission by invite and rate limits (issue 4) ---
        HubConfig.Gate gate = config.gate();
        SqliteAdmissions admissions = store.admissions();
        SigningKeys signingKeys = SigningKeys.open(config.dataDir(),
                gate.ticketTtl().plus(JwtTickets.SKEW).plusSeconds(1), clock);
        Admission admission = new Admission(registry, admissions, new JwtTickets(signingKeys, clock), clock, ids,
                gate.requireNodeProof(), gate.ticketTtl());
        RateLimits rateLimits = new RateLimits(graph, admissions, clock, System::nanoTime,
                new Rate(gate.nodeRate(), gate.nodeBurst()));
        // --- end admission by invite and rate limits ---
        // --- policy rules and payload schemas (issue 4): one access policy and one schema check for every surface ---
        LivePolicy livePolicy;
        JsonSchemas schemas;
        try {
            livePolicy = LivePolicy.start(config.policy().file(), config.policy().reloadInterval(), metrics, clock);
            schemas = JsonSchemas.load(store.schemas(), metrics, clock);
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
        metrics.policyVersionFrom(() -> livePolicy.state().version());
        AccessPolicy access = new AccessPolicy(graph, livePolicy);
        // --- end policy rules and payload schemas ---
        Router router = new Router(graph, access, schemas, store, clock, ids);
        DeliveryPolicies policies = new DeliveryPolicies(deliveries, graph, clock);
        ReplyWaiters waiters = new ReplyWaiters(deliveries);
        Dispatcher dispatcher = new Dispatcher(deliveries, policies, feeds, new Notices(ids),
                new Courier(config.pushTimeout()), metrics, clock);
        committed.add(waiters).add(dispatcher);
        StreamWatchdog watchdog = new StreamWatchdog(config.slowReaderTimeout());
        InboxStream stream = new InboxStream(store, policies, feeds, watchdog, metrics, clock, config.heartbeat());

        Routes routes = new Routes(tokens, config.maxBodyBytes());
        new OpsRoutes(store, metrics).register(routes);
        new NodeRoutes(registry, feeds, admission).register(routes);
        new GrantRoutes(registry).register(routes);
        new MessageRoutes(router, new Messages(store, clock), waiters, metrics).register(routes);
        new InboxRoutes(store, policies, registry, stream, clock).register(routes);
        new DeliveryRoutes(policies).register(routes);
        new DeadLetterRoutes(deliveries, feeds, dispatcher, clock).register(routes);
        // Topics, broadcasts and tasks: fan-out and delegation under the same graph and ACL.
        AccessPolicy acl = access;
        var topicStore = store.topics();
        new TopicRoutes(new Topics(graph, acl, schemas, topicStore, clock, ids), metrics).register(routes);
        new BroadcastRoutes(new Broadcasts(graph, acl, schemas, topicStore, store, clock, ids), metrics).register(routes);
        new TaskRoutes(new Tasks(graph, acl, registry, store.tasks(), store, Views.TASK_FORMAT, clock, ids), feeds,
                metrics).register(routes);
        // ---- issue 5 (MCP channel bridge): begin ----
        // Peers and MCP over HTTP ask the same access policy and router as every other route.
        dev.parley.core.Peers peers = new dev.parley.core.Peers(graph, access, clock);
        new PeerRoutes(peers).register(routes);
        McpRoutes mcp = new McpRoutes(new LocalHubPort.Services(router, new Messages(store, clock), registry, store,
                policies, peers, metrics, clock), new McpSessions(), McpRoutes.loopback(config.host()), clock);
        mcp.register(routes);
        // ---- issue 5 (MCP channel bridge): end ----
        // ---- issue 5 (A2A): begin ----
        // Every node is an A2A agent (JSON-RPC and HTTP+JSON): its tasks are Parley tasks moved through
        // Tasks and the Router; push configs become task webhooks on the dispatcher's persisted schedule.
        A2aTaskWatch a2aWatch = new A2aTaskWatch();
        committed.add(a2aWatch);
        A2aPushes a2aPushes = new A2aPushes(store.taskWebhooks(KeyFileSealer.open(config.dataDir())), policies, ids,
                clock);
        store.tapTasks(a2aPushes);
        dispatcher.shapePushes(a2aPushes);
        new A2aRoutes(new A2aAgent(graph, router, new Tasks(graph, acl, registry, store.tasks(), store,
                Views.TASK_FORMAT, clock, ids), a2aWatch, a2aPushes, metrics, config.heartbeat().toMillis()),
                new A2aCards(java.util.Objects.requireNonNullElse(Hub.class.getPackage().getImplementationVersion(),
                        "0.1.0")), graph, "http://" + config.host() + ":" + config.port(), config.heartbeat().toMillis())
                .register(routes);
        // ---- issue 5 (A2A): end ----

        // --- admission by invite and rate limits (issue 4): every request passes the limiter first ---
        routes.limitWith(new RequestLimiter(rateLimits, Rate.perMinute(gate.exchangesPerMinute()), metrics));
        new AdmissionRoutes(admission, registry, signingKeys, store, metrics).register(routes);
        new LimitRoutes(rateLimits).register(routes);
        // --- end admission by invite and rate limits ---

        // --- policy rules, payload schemas and audit retention (issue 4) ---
        new PolicyRoutes(livePolicy, new AccessPolicy(graph, livePolicy.quiet()), graph, clock).register(routes);
        new SchemaRoutes(schemas).register(routes);
        AuditRetention retention = AuditRetention.start(store, config.policy().auditRetention(), metrics, clock);
        // --- end policy rules, payload schemas and audit retention ---

        WebServer server;
        try {
            server = WebServer.builder()
                    .host(config.host())
                    .port(config.port())
                    .shutdownHook(false)
                    // SSE frames are small and must leave at once; Nagle would hold them back.
                    .connectionOptions(SocketOptions.builder().tcpNoDelay(true).build())
                    // Our own limit answers 413 with the contract's body; this is only a backstop.
                    .maxPayloadSize(Math.max(config.maxBodyBytes() * 4, 1 << 20))
                    .directHandlers(TransportErrors.handlers()) // issue 4: refused before routing, still a contract body
                    .routing(routes::install)
                    .build()
                    .start();
        } catch (RuntimeException e) {
            dispatcher.close();
            watchdog.close();
            retention.close(); // issue 4: policy and retention
            livePolicy.close(); // issue 4: policy and retention
            store.close();
            throw e;
        }
        Hub hub = new Hub(server, store, feeds, dispatcher, watchdog, admin, created[0], config.host());
        // ---- issue 5 (MCP channel bridge): begin ----
        hub.mcp = mcp;
        // ---- issue 5 (MCP channel bridge): end ----
        hub.policyJobs = java.util.List.of(retention::close, livePolicy::close); // policy and retention (issue 4)
        hub.signingKeys = signingKeys; // admission (issue 4)
        LOG.info("parley hub listening on " + hub.url() + " with data in " + config.dataDir().toAbsolutePath()
                + " (" + snapshot.nodes().size() + " nodes)");
        return hub;
    }

    // --- admission by invite (issue 4) ---
    private volatile SigningKeys signingKeys;

    /**
     * Makes a new ticket signing key and retires the current one, which still verifies the
     * tickets it signed until they expire. Returns the new key's id.
     */
    public String rotateSigningKey() {
        return AdmissionRoutes.rotate(signingKeys, store, Instant.now());
    }
    // --- end admission by invite ---

    // --- policy rules and audit retention (issue 4) ---
    /** The policy file watcher and the audit retention job: stopped before the store closes. */
    private volatile java.util.List<Runnable> policyJobs = java.util.List.of();
    // --- end policy rules and audit retention ---

    public int port() {
        return server.port();
    }

    public String url() {
        String shown = host.contains(":") ? "[" + host + "]" : host;
        return "http://" + shown + ":" + port();
    }

    public String adminToken() {
        return adminToken;
    }

    public boolean adminTokenCreated() {
        return adminTokenCreated;
    }

    public void awaitClosed() throws InterruptedException {
        closedLatch.await();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        LOG.info("parley hub shutting down");
        feeds.closeAll();
        server.stop();
        dispatcher.close();
        watchdog.close();
        policyJobs.forEach(Runnable::run); // policy and retention (issue 4), before the store
        store.close();
        LOG.info("parley hub stopped");
        closedLatch.countDown();
    }

    private static String loadOrCreateAdminToken(Path dataDir, boolean[] created) {
        Path file = dataDir.resolve(ADMIN_TOKEN_FILE);
        try {
            Files.createDirectories(dataDir);
            if (Files.exists(file)) {
                return Files.readString(file, StandardCharsets.UTF_8).strip();
            }
            String token = Tokens.mint(ADMIN_TOKEN_PREFIX);
            try {
                Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            } catch (FileAlreadyExistsException raced) {
                return Files.readString(file, StandardCharsets.UTF_8).strip();
            }
            Files.writeString(file, token + "\n", StandardCharsets.UTF_8);
            created[0] = true;
            return token;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read or create the admin token at " + file, e);
        }
    }
}
