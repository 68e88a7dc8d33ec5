package dev.parley.server;

import dev.parley.core.AccessPolicy;
import dev.parley.core.Admission;
import dev.parley.core.Arrivals;
import dev.parley.core.AuditLog;
import dev.parley.core.Broadcasts;
import dev.parley.core.DeadLetters;
import dev.parley.core.DeliveryPolicies;
import dev.parley.core.Federation;
import dev.parley.core.GatewayInvites;
import dev.parley.core.GatewayMint;
import dev.parley.core.AgentSpec;
import dev.parley.core.AgentStore;
import dev.parley.core.Agents;
import dev.parley.core.Capabilities;
import dev.parley.core.Chats;
import dev.parley.core.Claims;
import dev.parley.core.Graph;
import dev.parley.core.GraphSnapshot;
import dev.parley.core.Inboxes;
import dev.parley.core.Messages;
import dev.parley.core.Node;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Notices;
import dev.parley.core.OwnerAckPolicy;
import dev.parley.core.Peers;
import dev.parley.core.Principal;
import dev.parley.core.Rate;
import dev.parley.core.RateLimits;
import dev.parley.core.Registry;
import dev.parley.core.Router;
import dev.parley.core.Schedules;
import dev.parley.core.StateReplica;
import dev.parley.core.TaskWebhooks;
import dev.parley.core.Tasks;
import dev.parley.core.Traces;
import dev.parley.core.Tokens;
import dev.parley.core.Topics;
import dev.parley.core.UuidV7;
import dev.parley.nats.Gateway;
import dev.parley.nats.GatewayConfig;
import dev.parley.nats.auth.AuthorityFile;
import dev.parley.server.agents.AgentRuntime;
import dev.parley.server.agents.AgentSpecs;
import dev.parley.server.agents.Sweeper;
import dev.parley.server.a2a.A2aAgent;
import dev.parley.server.a2a.A2aCards;
import dev.parley.server.a2a.A2aPushes;
import dev.parley.server.a2a.A2aRoutes;
import dev.parley.server.a2a.A2aTaskWatch;
import dev.parley.server.delivery.CommitListeners;
import dev.parley.server.delivery.Courier;
import dev.parley.server.delivery.Dispatcher;
import dev.parley.server.delivery.InboxFeeds;
import dev.parley.server.delivery.InboxStream;
import dev.parley.server.delivery.MessageFlow;
import dev.parley.server.delivery.ReplyWaiters;
import dev.parley.server.delivery.StreamWatchdog;
import dev.parley.server.http.Connections;
import dev.parley.server.http.HttpEdge;
import dev.parley.server.http.RequestLimiter;
import dev.parley.server.http.Routes;
import dev.parley.server.keys.JwtTickets;
import dev.parley.server.keys.KeyFileSealer;
import dev.parley.server.keys.SigningKeys;
import dev.parley.server.mcp.LocalHubPort;
import dev.parley.server.mcp.McpRoutes;
import dev.parley.server.mcp.McpSessions;
import dev.parley.server.metrics.Metrics;
import dev.parley.server.policy.JsonSchemas;
import dev.parley.server.policy.Re2Patterns;
import dev.parley.server.policy.LivePolicy;
import dev.parley.server.rest.AdmissionRoutes;
import dev.parley.server.rest.AgentRoutes;
import dev.parley.server.rest.CapabilityRoutes;
import dev.parley.server.rest.ChatRoutes;
import dev.parley.server.rest.ConsoleRoutes;
import dev.parley.server.chat.ChatOutbox;
import dev.parley.server.rest.BroadcastRoutes;
import dev.parley.server.rest.DeadLetterRoutes;
import dev.parley.server.rest.DeliveryRoutes;
import dev.parley.server.rest.GatewayRoutes;
import dev.parley.server.rest.GrantRoutes;
import dev.parley.server.rest.InboxRoutes;
import dev.parley.server.rest.LimitRoutes;
import dev.parley.server.rest.MessageRoutes;
import dev.parley.server.rest.NodeRoutes;
import dev.parley.server.rest.OpsRoutes;
import dev.parley.server.permission.Permissions;
import dev.parley.server.rest.PeerRoutes;
import dev.parley.server.rest.PermissionRoutes;
import dev.parley.server.rest.PolicyRoutes;
import dev.parley.server.rest.ScheduleRoutes;
import dev.parley.server.rest.SchemaRoutes;
import dev.parley.server.schedule.Scheduler;
import dev.parley.server.schedule.UnixCron;
import dev.parley.server.rest.TaskRoutes;
import dev.parley.server.rest.TopicRoutes;
import dev.parley.server.rest.TraceRoutes;
import dev.parley.server.telemetry.HubTelemetry;
import dev.parley.server.wire.Views;
import dev.parley.store.SqliteAgents;
import dev.parley.store.SqliteDeliveries;
import dev.parley.store.SqliteFederation;
import dev.parley.store.SqliteStore;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A running hub. {@link #start(HubConfig)} opens the store, wires every part and starts
 * HTTP, returning once the hub is listening; {@link #close()} shuts it down gracefully:
 * streams end, the listener stops, background services stop, and every queued commit
 * finishes before the store closes.
 */
public final class Hub implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Hub.class.getName());
    static final String ADMIN_TOKEN_FILE = "admin.token";
    private static final String ADMIN_TOKEN_PREFIX = "pa_";

    /** How long a stop waits for each kind of stream it ended to write its end. */
    private static final Duration STREAMS_END = Duration.ofSeconds(5);
    private final HttpEdge server;
    private final SqliteStore store;
    /** Ends every open stream: the inboxes', the message flow's and A2A tasks'. */
    private final Runnable endStreams;
    /** Background services, stopped in this order after the listener and before the store. */
    private final List<AutoCloseable> services;
    private final McpRoutes mcp;
    private final Admission admission;
    private final String adminToken;
    private final boolean adminTokenCreated;
    private final String host;
    private final Sweeper sweeper;
    private final Scheduler scheduler;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final CountDownLatch closedLatch = new CountDownLatch(1);

    private Hub(HttpEdge server, SqliteStore store, Runnable endStreams, List<AutoCloseable> services, McpRoutes mcp,
                Admission admission, String adminToken, boolean adminTokenCreated, String host, Sweeper sweeper,
                Scheduler scheduler) {
        this.sweeper = sweeper;
        this.scheduler = scheduler;
        this.server = server;
        this.store = store;
        this.endStreams = endStreams;
        this.services = List.copyOf(services);
        this.mcp = mcp;
        this.admission = admission;
        this.adminToken = adminToken;
        this.adminTokenCreated = adminTokenCreated;
        this.host = host;
    }

    /** Sweeps the agent protocol's claims now, as the hub does every {@link dev.parley.core.Sweep#INTERVAL}. */
    public Claims.Swept sweep() {
        return sweeper.sweep();
    }

    /**
     * Fires the scheduled sends due at the hub's clock now, as the hub does by itself when the
     * next one comes due (a test moves its clock on, then calls this instead of waiting).
     */
    public Schedules.Pass fireSchedules() {
        return scheduler.pass();
    }

    /**
     * Starts a hub listening on the configured host and port. A hub that cannot start (a port
     * another process holds, a store it cannot open, a policy it cannot read) throws, its store
     * and services closed again.
     */
    public static Hub start(HubConfig config) {
        return start(config, System::nanoTime);
    }

    /**
     * Starts a hub whose rate buckets refill by {@code ticker} (monotonic nanoseconds), so a
     * test can hold time still and count a limit exactly however slow the machine is.
     */
    public static Hub start(HubConfig config, LongSupplier ticker) {
        return start(config, ticker, () -> Instant.ofEpochMilli(System.currentTimeMillis())); // the wire has millisecond times
    }

    /**
     * Starts a hub that tells the time by {@code clock} (millisecond times), so a test can move
     * it on and see what the hub decides then, such as the sweep of claims.
     */
    public static Hub start(HubConfig config, LongSupplier ticker, InstantSource clock) {
        JsonLogFormatter.install();
        boolean[] created = new boolean[1];
        String admin = config.adminToken().orElseGet(() -> loadOrCreateAdminToken(config.dataDir(), created));

        InboxFeeds feeds = new InboxFeeds();
        CommitListeners committed = new CommitListeners().add(feeds);
        Metrics metrics = new Metrics();
        // OTLP export (OTEL_EXPORTER_OTLP_ENDPOINT, --otlp-endpoint): off unless an endpoint is set
        Optional<HubTelemetry> telemetry = HubTelemetry.start(config.export(), clock);
        SqliteStore store = SqliteStore.open(config.dataDir(), committed,
                telemetry.map(t -> t.observing(metrics)).orElse(metrics));
        List<AutoCloseable> services = new ArrayList<>();
        telemetry.ifPresent(services::add);
        HttpEdge[] listening = new HttpEdge[1]; // stopped first if what follows its start fails
        try {
            KeyFileSealer sealer = KeyFileSealer.open(config.dataDir());
            SqliteDeliveries deliveries = store.deliveries(sealer);
            metrics.backlogFrom(store::backlog);
            GraphSnapshot snapshot = store.loadGraph();
            Graph graph = new Graph();
            snapshot.into(graph);
            Tokens tokens = new Tokens(admin, snapshot.tokenHashes());
            UuidV7 ids = new UuidV7(clock);
            // The policy rules in force: every access decision, and every audit entry, records their version.
            LivePolicy livePolicy = LivePolicy.start(config.policy().file(), config.policy().reloadInterval(), metrics,
                    clock);
            services.add(livePolicy);
            AccessPolicy access = new AccessPolicy(graph, livePolicy);

            // Federation (--gateway, --nats): the state room fills the graph before anything is decided.
            Optional<Gateway> gateway = config.gateway().map(g -> joinFederation(g, graph, tokens, access, store,
                    livePolicy, clock, config.maxBodyBytes()));
            gateway.ifPresent(g -> {
                services.add(g);
                committed.add(envelope -> g.wake());
                metrics.federationFrom(() -> Optional.of(g.status()));
            });
            Federation federation = gateway.<Federation>map(g -> g).orElse(Federation.NONE);
            Registry registry = new Registry(graph, tokens, store, livePolicy, clock, ids, config.maxDepth(), federation);

            // Admission and rate limits.
            HubConfig.Gate gate = config.gate();
            SigningKeys signingKeys = SigningKeys.open(config.dataDir(),
                    gate.ticketTtl().plus(JwtTickets.SKEW).plusSeconds(1), clock);
            Admission admission = new Admission(registry, store.admissions(), livePolicy,
                    new JwtTickets(signingKeys, clock), clock, ids, gate.requireNodeProof(), gate.ticketTtl());
            RateLimits rateLimits = new RateLimits(graph, store.admissions(), livePolicy, clock, ticker,
                    new Rate(gate.nodeRate(), gate.nodeBurst()));

            // One access decision (policy rules around the ACL) and one schema check for every surface.
            JsonSchemas schemas = JsonSchemas.load(store.schemas(), livePolicy, metrics, clock);
            metrics.policyVersionFrom(() -> livePolicy.state().version());
            Router router = new Router(graph, access, schemas, store, clock, ids, federation);
            Messages messages = new Messages(store, livePolicy, clock);
            Notices notices = new Notices(ids, livePolicy);
            // Managed agents: the hub runs them, woken by their mail; a task may spawn one from a template.
            SqliteAgents agentSpecs = store.agents();
            Agents agents = new Agents(graph, registry, agentSpecs, store, livePolicy, access, AgentSpecs.YAML_FORMAT,
                    config.gateway().map(GatewayConfig::id), clock);
            // Capabilities: tasks addressed to cap.… go to their owners; misfires raise reviews.
            Capabilities capabilities = new Capabilities(graph, store.capabilities(), agentSpecs, store.tasks(), schemas,
                    notices, Views::skillReviewData, store, livePolicy, clock, ids);
            Tasks tasks = new Tasks(graph, access, registry, store.tasks(), store, Views.TASK_FORMAT, clock, ids,
                    agents::provision, capabilities);
            Peers peers = new Peers(graph, access, clock);
            // Agent turns: their runners record them; each joins the trace of the envelope it works.
            Traces traces = new Traces(graph, store, store.traces(), clock);
            telemetry.ifPresent(t -> {
                committed.add(t);
                traces.onTurnEnded(turn -> t.turnEnded(turn, store));
                metrics.exportFrom(t.exporter()::exported, t.exporter()::dropped, t.exporter()::failures);
            });

            // Delivery after acceptance: waiters for replies, pushes, redeliveries, deadlines.
            DeliveryPolicies policies = new DeliveryPolicies(deliveries, graph, livePolicy, clock);
            ReplyWaiters waiters = new ReplyWaiters(deliveries);
            Dispatcher dispatcher = new Dispatcher(deliveries, store.federation(), federation, config.gateway()
                    .map(GatewayConfig::ownerAck).orElse(OwnerAckPolicy.DEFAULT), policies, feeds, notices,
                    new Courier(config.pushTimeout()), metrics, clock);
            services.add(dispatcher);
            StreamWatchdog watchdog = new StreamWatchdog(config.slowReaderTimeout(), config.heartbeat());
            services.add(watchdog);
            Inboxes inboxes = new Inboxes(store, policies, registry, clock);
            InboxStream stream = new InboxStream(inboxes, feeds, watchdog, metrics);
            services.add(stream); // its last delivery marks are made before the store closes
            // The live flow of every commit (the console's), each follower shown what it may see.
            MessageFlow flow = new MessageFlow(watchdog, metrics);
            committed.add(flow);
            A2aTaskWatch a2aWatch = new A2aTaskWatch();
            A2aPushes a2aPushes = new A2aPushes(new TaskWebhooks(store.taskWebhooks(sealer), policies, livePolicy, clock),
                    livePolicy, ids, clock);
            store.tapTasks(a2aPushes);
            dispatcher.shapePushes(a2aPushes);
            committed.add(waiters).add(dispatcher).add(a2aWatch);
            // Humans in chat rooms: messaging groups, wirings, approval cards; chat adapters are edges.
            Chats chats = new Chats(graph, registry, router, messages, store.chats(sealer), new Re2Patterns(),
                    Views::approvalCardNotice, notices, store, livePolicy, clock, ids);
            AtomicReference<String> url = new AtomicReference<>();
            AgentRuntime agentRuntime = new AgentRuntime(graph, store, router, messages, tasks, chats, traces,
                    config.dataDir().resolve("agents"), agents::failed, agents::ended, agents::credential, url::get,
                    clock);
            services.add(agentRuntime);
            committed.add(agentRuntime);
            tasks.onRetire(node -> { // a child spawned for a task, deleted with its end: however the task ended
                feeds.close(node);
                agentRuntime.retire(node);
            });
            // Permission requests: the agent's blocklist, the policy's permission rules, else its approver asked.
            Permissions permissions = new Permissions(router, graph, agents, livePolicy, waiters, metrics, traces,
                    clock);
            Claims claims = new Claims(store.claims(), store, notices, livePolicy, clock);
            // Scheduled sends: decided when created and again when each occurrence fires.
            Scheduler scheduler = new Scheduler(clock, metrics);
            Schedules schedules = new Schedules(graph, access, schemas, store.schedules(), store, new UnixCron(), clock,
                    ids, scheduler::wake);
            services.add(AuditRetention.start(store, config.policy().auditRetention(), metrics, clock));

            HubConfig.Transport transport = config.transport();
            Connections connections = new Connections(transport.idleTimeout(), transport.headerTimeout(),
                    transport.bodyTimeout(), transport.maxConnectionsPerAddress(), metrics);
            services.add(connections);
            // Our own limit answers 413 with the contract's body; past this an early answer closes the connection.
            Routes routes = new Routes(tokens, config.maxBodyBytes(),
                    Math.max(config.maxBodyBytes() * MessageRoutes.BATCH_BODY_FACTOR * 2, 1 << 20), connections);
            RequestLimiter limiter = new RequestLimiter(rateLimits, Rate.perMinute(gate.exchangesPerMinute()), metrics);
            routes.limitWith(limiter);
            new MessageRoutes(router, schedules, messages, claims, waiters, metrics, limiter, flow).register(routes);
            new OpsRoutes(store::health, new AuditLog(store), metrics, () -> gateway.map(Gateway::status))
                    .register(routes);
            new NodeRoutes(registry, feeds, admission).register(routes);
            new GrantRoutes(registry).register(routes);
            new ScheduleRoutes(schedules).register(routes);
            new InboxRoutes(inboxes, stream).register(routes);
            new DeliveryRoutes(policies, dispatcher, feeds).register(routes);
            new DeadLetterRoutes(new DeadLetters(deliveries, livePolicy, clock, redriven -> {
                feeds.redeliver(redriven);
                dispatcher.wake();
                agentRuntime.committed(redriven); // a managed agent takes it again
            })).register(routes);
            new TopicRoutes(new Topics(graph, access, schemas, store.topics(), clock, ids, federation), metrics).register(routes);
            new BroadcastRoutes(new Broadcasts(graph, access, schemas, store.topics(), store, clock, ids), metrics)
                    .register(routes);
            new TaskRoutes(tasks, agentRuntime, metrics).register(routes);
            new AgentRoutes(agents, agentRuntime, claims).register(routes);
            new PermissionRoutes(permissions).register(routes);
            new CapabilityRoutes(capabilities, tasks).register(routes);
            new TraceRoutes(traces).register(routes);
            // The chat adapters: the webhook bridges' way out, and every stored IRC network connected to again.
            ChatOutbox chatOutbox = new ChatOutbox(chats, graph, metrics);
            services.add(chatOutbox);
            committed.add(chatOutbox);
            chats.ircNetworks().forEach(chatOutbox::follow);
            new ChatRoutes(chats, chatOutbox).register(routes);
            new AdmissionRoutes(admission, registry, signingKeys, metrics).register(routes);
            // A gateway that holds the federation's NATS authority (`parley gateway init`) admits new gateways.
            Optional<GatewayMint> mint = config.gateway().flatMap(g -> AuthorityFile.open(config.dataDir(), sealer));
            new GatewayRoutes(() -> gateway.map(Gateway::status),
                    new GatewayInvites(store.admissions(), mint, livePolicy, clock, ids)).register(routes);
            new LimitRoutes(rateLimits).register(routes);
            new PolicyRoutes(livePolicy, new AccessPolicy(graph, livePolicy.quiet()), graph, clock).register(routes);
            new SchemaRoutes(schemas).register(routes);
            new PeerRoutes(peers).register(routes);
            new ConsoleRoutes().register(routes); // static files only: the pages call the routes above
            McpRoutes mcp = new McpRoutes(new LocalHubPort.Services(router, messages, registry, inboxes, peers,
                    permissions, metrics),
                    graph, new McpSessions(), McpRoutes.loopback(config.host()), clock);
            mcp.register(routes);
            A2aRoutes a2a = new A2aRoutes(new A2aAgent(graph, router, tasks, a2aWatch, a2aPushes, metrics,
                    config.heartbeat().toMillis()), new A2aCards(version(), graph::owner, capabilities::of), graph,
                    "http://" + config.host() + ":" + config.port(), config.heartbeat().toMillis(), watchdog, metrics);
            a2a.register(routes);

            HttpEdge server = HttpEdge.start(config.host(), config.port(), routes, connections);
            listening[0] = server;
            // Agents start once the hub listens: a process agent speaks to it at once.
            url.set(localUrl(config.host(), server.port()));
            // Children a hub stopped between their task's end and their deletion left behind go first.
            tasks.retireLeftovers(agentSpecs.agents().keySet());
            agentSpecs.agents().forEach((id, stored) -> adoptAgent(agentRuntime, agents, graph, id, stored));
            // Then the first sweep: claims whose claimant is gone (its process died with the hub before) are taken back.
            Sweeper sweeper = new Sweeper(claims, capabilities, agentRuntime, metrics, dispatcher::wake, clock);
            services.add(sweeper.start(config.sweepInterval()));
            // Then what fell due while the hub was down fires, once per schedule.
            services.add(scheduler.start(schedules));
            Hub hub = new Hub(server, store, () -> {
                feeds.closeAll();
                flow.closeAll();
                a2aWatch.close();
                try { // the ended streams write their last chunk before the listener closes their connections
                    stream.awaitEnded(STREAMS_END);
                    flow.awaitEnded(STREAMS_END);
                    a2a.awaitEnded(STREAMS_END);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, services, mcp, admission, admin, created[0], config.host(), sweeper,
                    scheduler);
            LOG.info("parley hub listening on " + hub.url() + " with data in " + config.dataDir().toAbsolutePath()
                    + " (" + snapshot.nodes().size() + " nodes)");
            return hub;
        } catch (RuntimeException e) {
            if (listening[0] != null) {
                listening[0].close();
            }
            stop(services);
            store.close();
            throw e;
        }
    }

    /** Takes charge of an agent found in the store; one whose spec no longer holds is left out, loudly. */
    private static void adoptAgent(AgentRuntime agents, Agents specs, Graph graph, NodeId id,
                                   AgentStore.Stored stored) {
        try {
            AgentSpec spec = AgentSpecs.parse(stored.spec()).withParent(graph.node(id).flatMap(Node::parent));
            specs.requireRunsHere(spec); // data moved to a hub of another gateway: not this hub's to run
            agents.adopt(spec, stored.stoppedAt().isPresent(), stored.failure());
        } catch (ParleyException e) {
            LOG.warning("agent " + id + " is not run: its stored spec does not hold (" + e.getMessage() + ")");
        }
    }

    /** Joins the federation as gateway {@code config}: the state room mirrored into the graph, relay and ingest started. */
    private static Gateway joinFederation(GatewayConfig config, Graph graph, Tokens tokens, AccessPolicy access,
                                         SqliteStore store,
                                         LivePolicy policy, InstantSource clock, long maxBodyBytes) {
        SqliteFederation federation = store.federation();
        // An outbox record carries an envelope whose body was at most maxBodyBytes, plus its JSON framing.
        return Gateway.start(config, new Gateway.Parts(
                new StateReplica(graph, tokens, federation, store, policy, clock, config.id()),
                new Arrivals(graph, access, store, federation, store.topics(), store.tasks(), Views.TASK_FORMAT,
                        clock), federation, maxBodyBytes * 2 + 4096,
                version(), clock));
    }

    private static String version() {
        return java.util.Objects.requireNonNullElse(Hub.class.getPackage().getImplementationVersion(), "0.1.0");
    }

    /**
     * Conformance runs only: MCP requests without any Authorization header act as
     * {@code node}, rate limit included. Refused unless the hub listens on loopback
     * ({@link IllegalStateException}) and unless {@code node} exists
     * ({@link IllegalArgumentException}); off unless called.
     */
    public void allowUnauthenticatedMcp(String node) {
        mcp.unauthenticatedAs(NodeId.of(node));
    }

    /**
     * Makes a new ticket signing key and retires the current one, which still verifies the
     * tickets it signed until they expire. Returns the new key's id.
     */
    public String rotateSigningKey() {
        return admission.rotateKeys(new Principal.Admin());
    }

    public int port() {
        return server.port();
    }

    public String url() {
        String shown = host.contains(":") ? "[" + host + "]" : host;
        return "http://" + shown + ":" + port();
    }

    /** The hub's URL for its own agents' processes on this host: a wildcard address is reached on loopback. */
    private static String localUrl(String host, int port) {
        String reach = switch (host) {
            case "0.0.0.0" -> "127.0.0.1";
            case "::", "[::]" -> "[::1]";
            default -> host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
        };
        return "http://" + reach + ":" + port;
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
        endStreams.run();
        server.close();
        stop(services);
        store.close();
        LOG.info("parley hub stopped");
        closedLatch.countDown();
    }

    /** Stops background services in reverse order of start; one failing does not keep the others running. */
    private static void stop(List<AutoCloseable> services) {
        for (AutoCloseable service : services.reversed()) {
            try {
                service.close();
            } catch (Exception e) {
                LOG.log(Level.WARNING, "a service did not stop cleanly", e);
            }
        }
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
