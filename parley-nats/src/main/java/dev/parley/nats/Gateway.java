package dev.parley.nats;

import dev.parley.core.Arrivals;
import dev.parley.core.ErrorCode;
import dev.parley.core.Federation;
import dev.parley.core.FederationStatus;
import dev.parley.core.FederationStore;
import dev.parley.core.Grant;
import dev.parley.core.Node;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Routing;
import dev.parley.core.StateReplica;
import dev.parley.core.Subscription;
import dev.parley.core.TopicName;
import dev.parley.nats.auth.GatewayId;
import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.ErrorListener;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.api.KeyValueWatcher;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * This hub as a gateway of a federation over NATS JetStream. At start it connects, creates
 * its own outbox stream ({@code PARLEY_OUT_<id>} on {@code parley.out.<id>.>}, file storage,
 * a two-minute duplicate window) and the state room's KV buckets (all idempotent), loads and
 * then watches the state room into the {@link StateReplica}, announces itself in the presence
 * bucket, and starts the {@link Relay} (its outbox) and an {@link Ingest} per other gateway.
 */
public final class Gateway implements Federation, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Gateway.class.getName());
    static final String STATE_BUCKET = "parley-state";
    static final String PRESENCE_BUCKET = "parley-presence";
    private static final String SUBSCRIPTION_PREFIX = "sub.";
    /** Presence entries expire this long after the last beat: a gateway gone is gone from presence. */
    private static final Duration PRESENCE_TTL = Duration.ofSeconds(15);
    private static final Duration BEAT = Duration.ofSeconds(3);
    private static final Duration DUPLICATE_WINDOW = Duration.ofMinutes(2);
    /** The error JetStream answers a KV create with when the key exists. */
    private static final int WRONG_LAST_SEQUENCE = 10071;

    /** What the gateway works with on the hub's side. */
    public record Parts(StateReplica replica, Arrivals arrivals, FederationStore store, long maxRecordBytes,
                        String version, InstantSource clock) {
    }

    private final GatewayConfig config;
    private final Parts parts;
    private final Connection connection;
    private final KeyValue state;
    private final KeyValue presence;
    /** The last presence beat of every gateway seen since the start, by id, stamped when it was heard here. */
    private final Map<String, Wire.Beat> beats = new ConcurrentHashMap<>();
    private final Relay relay;
    private final Ingest ingest;
    private final AtomicLong stateSkipped = new AtomicLong();
    private final AtomicLong ownershipMoves = new AtomicLong();
    /** Every node entry of the state room as last seen, with its revision: what compare-and-set writes go against. */
    private final Map<NodeId, Known> nodes = new ConcurrentHashMap<>();
    /**
     * Since when NATS has been in reach without a break; empty while it is not. Only after a
     * whole presence lifetime of it has every present gateway been heard, so only then may
     * this gateway judge another gone.
     */
    private final AtomicReference<Optional<Instant>> connectedSince;
    /** Whether the presence watch has delivered every beat the bucket held when it started. */
    private volatile boolean presenceLoaded;
    private final Thread beat;
    private volatile boolean closed;

    /** A node entry and the state room revision it was read at. */
    private record Known(Wire.NodeEntry entry, long revision) {
    }

    private Gateway(GatewayConfig config, Parts parts, Connection connection,
                    AtomicReference<Optional<Instant>> connectedSince) throws IOException, JetStreamApiException {
        this.config = config;
        this.connectedSince = connectedSince;
        this.parts = parts;
        this.connection = connection;
        ensureOutbox();
        this.state = bucket(STATE_BUCKET, Optional.empty());
        this.presence = bucket(PRESENCE_BUCKET, Optional.of(PRESENCE_TTL));
        this.relay = new Relay(connection, config, parts.store(), parts.clock());
        // the steps taking mail owes go out now, not at the relay's next idle look
        this.ingest = new Ingest(connection, config.id(), parts.arrivals(), parts.store(), parts.maxRecordBytes(),
                relay::wake);
        this.beat = Thread.ofVirtual().name("parley-gateway-presence").unstarted(this::beatLoop);
    }

    /**
     * Joins the federation; returns once the state room is loaded into the local graph.
     * Throws {@link IllegalStateException} with a plain sentence when NATS cannot be reached.
     */
    public static Gateway start(GatewayConfig config, Parts parts) {
        if (config.credentials().isEmpty()) {
            LOG.warning("WARNING: gateway " + config.id() + " connects to NATS without credentials (development"
                    + " mode): outboxes are NOT protected, any NATS client can publish into them. Use --nats-creds"
                    + " in production.");
        }
        Refusals refusals = new Refusals(config.id());
        AtomicReference<Optional<Instant>> connectedSince = new AtomicReference<>(Optional.empty());
        Options.Builder options = Options.builder().server(config.url()).connectionName("parley-gateway-" + config.id())
                .maxReconnects(-1).reconnectWait(Duration.ofMillis(250)).connectionTimeout(Duration.ofSeconds(5))
                // No hidden buffer while NATS is away: what is owed waits in SQLite, marked, and goes in order.
                .reconnectBufferSize(0)
                .connectionListener((c, event) -> {
                    switch (event) {
                        case CONNECTED, RECONNECTED -> connectedSince.set(Optional.of(parts.clock().instant()));
                        case DISCONNECTED, CLOSED -> connectedSince.set(Optional.empty());
                        default -> {
                        }
                    }
                    if (event == ConnectionListener.Events.DISCONNECTED || event == ConnectionListener.Events.RECONNECTED) {
                        LOG.info("gateway " + config.id() + ": NATS " + event.name().toLowerCase(java.util.Locale.ROOT));
                    }
                })
                // Replies come to this prefix: the only subjects a gateway's credentials may subscribe to.
                .inboxPrefix(config.inboxPrefix())
                .errorListener(refusals);
        config.credentials().ifPresent(file -> options.authHandler(Nats.credentials(file.toString())));
        Connection connection;
        try {
            connection = Nats.connect(options.build());
            connectedSince.compareAndSet(Optional.empty(), Optional.of(parts.clock().instant()));
        } catch (IOException e) {
            throw new IllegalStateException("cannot reach NATS at " + config.url() + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while connecting to NATS", e);
        }
        Gateway gateway = null;
        try {
            gateway = new Gateway(config, parts, connection, connectedSince);
            gateway.loadState();
            gateway.relay.start();
            parts.store().cursors().keySet().forEach(gateway.ingest::follow);
            gateway.watchPresence();
            gateway.beat.start();
            LOG.info("gateway " + config.id() + " joined the federation at " + config.url());
            return gateway;
        } catch (IOException | JetStreamApiException | InterruptedException e) {
            if (gateway != null) {
                gateway.close(); // the relay, its clearer and the ingest threads it may have started, and the connection
            } else {
                closeQuietly(connection);
            }
            throw new IllegalStateException(refusals.first().map(refused -> "NATS refused what gateway " + config.id()
                    + " needs (" + refused + "): its credentials are not those of gateway " + config.id()
                    + "; connect with the .creds file minted for it").orElse("cannot set up gateway " + config.id()
                    + " on NATS: " + e.getMessage()), e);
        }
    }

    /**
     * What nats-server refused this connection. A refused request is simply not answered (it
     * times out), so the refusal itself is the only clue: logged, and the first one named when
     * the start fails.
     */
    private static final class Refusals implements ErrorListener {
        private final String gateway;
        private final AtomicReference<String> first = new AtomicReference<>();

        Refusals(String gateway) {
            this.gateway = gateway;
        }

        @Override
        public void errorOccurred(Connection conn, String error) {
            if (error.contains("Permissions Violation")) {
                first.compareAndSet(null, error);
            }
            LOG.warning("gateway " + gateway + ": NATS says " + error);
        }

        Optional<String> first() {
            return Optional.ofNullable(first.get());
        }
    }

    @Override
    public Optional<String> gateway() {
        return Optional.of(config.id());
    }

    @Override
    public void claim(Node node) {
        String key = nodeKey(node.id().value());
        try {
            state.create(key, Wire.node(node, config.id()));
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() != WRONG_LAST_SEQUENCE) {
                throw unavailable(e);
            }
            reclaim(key, node);
        } catch (IOException | IllegalStateException e) {
            throw unavailable(e);
        }
    }

    /**
     * The id's entry exists. The hub creates one id at a time and only ids it does not have, so
     * an entry of this gateway, not deleted, is a claim whose local commit failed (a full disk):
     * a create with the same kind, parent and labels takes it up, as other gateways may already
     * have mirrored those. Anything else means the id is taken.
     */
    private void reclaim(String key, Node node) {
        try {
            KeyValueEntry entry = state.get(key);
            if (entry == null || entry.getValue() == null) {
                throw taken(node, ""); // deleted meanwhile: ids are never reused
            }
            Wire.NodeEntry claimed = Wire.node(entry.getValue());
            Node before = claimed.node();
            if (!claimed.owner().equals(config.id()) || claimed.deletedAt().isPresent()) {
                throw taken(node, "");
            }
            if (before.kind() != node.kind() || !before.parent().equals(node.parent())
                    || !before.labels().equals(node.labels())) {
                throw taken(node, ": an earlier create here claimed it and did not complete; create it as then ("
                        + before.kind().wire() + ", parent " + before.parent().map(NodeId::value).orElse("none")
                        + ", labels " + before.labels() + ")");
            }
            LOG.info("gateway " + config.id() + " takes up its claim of node " + node.id() + ": the create that made"
                    + " it was never committed here");
        } catch (Wire.Unreadable e) {
            throw taken(node, "");
        } catch (IOException | JetStreamApiException | IllegalStateException e) {
            throw unavailable(e);
        }
    }

    private static ParleyException taken(Node node, String why) {
        return new ParleyException(ErrorCode.NODE_EXISTS, "node " + node.id() + " already exists" + why);
    }

    @Override
    public void retire(Node node, Instant at) {
        try {
            state.put(nodeKey(node.id().value()), Wire.node(new Wire.NodeEntry(node, config.id(), Optional.of(at),
                    List.of())));
        } catch (IOException | JetStreamApiException | IllegalStateException e) {
            throw unavailable(e);
        }
    }

    @Override
    public void share(Grant grant) {
        try {
            state.put(grantKey(grant.id()), Wire.grant(grant));
        } catch (IOException | JetStreamApiException | IllegalStateException e) {
            throw unavailable(e);
        }
    }

    @Override
    public void withdraw(String grantId) {
        try {
            state.delete(grantKey(grantId));
        } catch (IOException | JetStreamApiException | IllegalStateException e) {
            throw unavailable(e);
        }
    }

    @Override
    public void subscribed(Subscription subscription) {
        try {
            state.put(subscriptionKey(subscription.topic(), subscription.node()), Wire.subscription(subscription));
        } catch (IOException | JetStreamApiException | IllegalStateException e) {
            throw unavailable(e);
        }
    }

    @Override
    public void unsubscribed(TopicName topic, NodeId node) {
        try {
            state.delete(subscriptionKey(topic, node));
        } catch (IOException | JetStreamApiException | IllegalStateException e) {
            throw unavailable(e);
        }
    }

    @Override
    public boolean spooling() {
        return relay.spooling() || connection.getStatus() != Connection.Status.CONNECTED;
    }

    @Override
    public Routing route(Node node, List<String> fallbacks) {
        List<String> checked = checkFallbacks(fallbacks);
        String key = nodeKey(node.id().value());
        try {
            for (int attempt = 1; ; attempt++) {
                KeyValueEntry entry = state.get(key);
                if (entry == null || entry.getValue() == null) {
                    throw new ParleyException(ErrorCode.NODE_NOT_FOUND, "node " + node.id() + " has no entry in the"
                            + " federation's state room");
                }
                Wire.NodeEntry current = Wire.node(entry.getValue());
                if (current.deletedAt().isPresent()) {
                    throw new ParleyException(ErrorCode.NODE_NOT_FOUND, "node " + node.id() + " was deleted");
                }
                if (!current.owner().equals(config.id())) {
                    throw new ParleyException(ErrorCode.FORBIDDEN, "node " + node.id() + " belongs to gateway "
                            + current.owner() + ": its fallbacks are set there");
                }
                try {
                    state.update(key, Wire.node(new Wire.NodeEntry(current.node(), config.id(), Optional.empty(),
                            checked)), entry.getRevision());
                    return new Routing(node.id(), config.id(), checked);
                } catch (JetStreamApiException e) {
                    if (e.getApiErrorCode() != WRONG_LAST_SEQUENCE || attempt == 3) {
                        throw e;
                    }
                    // written meanwhile (a takeover, another change): read it again and decide again
                }
            }
        } catch (Wire.Unreadable e) {
            throw new ParleyException(ErrorCode.UNAVAILABLE, "node " + node.id() + "'s state room entry cannot be"
                    + " read: " + e.getMessage());
        } catch (IOException | JetStreamApiException | IllegalStateException e) {
            throw unavailable(e);
        }
    }

    /** Fallbacks are gateways of this federation (seen in presence since this one started), each once, not this one. */
    private List<String> checkFallbacks(List<String> fallbacks) {
        for (int i = 0; i < fallbacks.size(); i++) {
            String gateway = fallbacks.get(i);
            try {
                new GatewayId(gateway);
            } catch (IllegalArgumentException e) {
                throw new ParleyException(ErrorCode.INVALID_REQUEST, "fallback " + e.getMessage());
            }
            if (gateway.equals(config.id())) {
                throw new ParleyException(ErrorCode.INVALID_REQUEST, "gateway " + gateway + " owns the node: it cannot"
                        + " also be its fallback");
            }
            if (fallbacks.subList(0, i).contains(gateway)) {
                throw new ParleyException(ErrorCode.INVALID_REQUEST, "gateway " + gateway + " is named twice");
            }
            if (!beats.containsKey(gateway)) {
                throw new ParleyException(ErrorCode.INVALID_REQUEST, "gateway " + gateway + " is not known to this"
                        + " federation: it has not been present since gateway " + config.id() + " started");
            }
        }
        return List.copyOf(fallbacks);
    }

    @Override
    public Optional<Routing> routing(NodeId node) {
        return Optional.ofNullable(nodes.get(node)).map(Known::entry).filter(e -> e.deletedAt().isEmpty())
                .map(e -> new Routing(node, e.owner(), e.fallbacks()));
    }

    @Override
    public Optional<String> unowned(NodeId node) {
        Known known = nodes.get(node);
        Instant now = parts.clock().instant();
        if (known == null || known.entry().deletedAt().isPresent() || known.entry().fallbacks().isEmpty()
                || !judging(now) || present(known.entry().owner(), now)
                || known.entry().fallbacks().stream().anyMatch(g -> present(g, now))) {
            return Optional.empty();
        }
        return Optional.of("no gateway owns " + node + ": its owner " + known.entry().owner() + " and its fallbacks "
                + String.join(", ", known.entry().fallbacks()) + " have all been gone for more than "
                + PRESENCE_TTL.toSeconds() + " s");
    }

    /** Whether {@code gateway} counts as present: this one, or one whose beat was heard within the presence lifetime. */
    private boolean present(String gateway, Instant now) {
        Wire.Beat heard = beats.get(gateway);
        return gateway.equals(config.id()) || (heard != null && heard.at().plus(PRESENCE_TTL).isAfter(now));
    }

    /** Whether NATS has been in reach for a whole presence lifetime, so that a gateway not heard is gone. */
    private boolean judging(Instant now) {
        return presenceLoaded && connectedSince.get().map(since -> !since.plus(PRESENCE_TTL).isAfter(now)).orElse(false);
    }

    /**
     * Takes over, by compare-and-set on their entries, the nodes whose owner is gone and whose
     * first present fallback is this gateway. Two fallbacks that both think so cannot both
     * win: the second write is against a revision that is no longer the last. The gateway a
     * node is taken from becomes its last fallback.
     */
    private void takeOver() {
        Instant now = parts.clock().instant();
        if (!judging(now)) {
            return;
        }
        for (Known known : nodes.values()) {
            Wire.NodeEntry entry = known.entry();
            if (entry.owner().equals(config.id()) || entry.deletedAt().isPresent() || present(entry.owner(), now)
                    || !entry.fallbacks().stream().filter(g -> present(g, now)).findFirst()
                    .equals(Optional.of(config.id()))) {
                continue;
            }
            List<String> fallbacks = new java.util.ArrayList<>(entry.fallbacks());
            fallbacks.remove(config.id());
            fallbacks.add(entry.owner());
            try {
                state.update(nodeKey(entry.node().id().value()), Wire.node(new Wire.NodeEntry(entry.node(),
                        config.id(), Optional.empty(), fallbacks)), known.revision());
                LOG.warning("gateway " + config.id() + " took over node " + entry.node().id() + " from gateway "
                        + entry.owner() + ", gone for more than " + PRESENCE_TTL.toSeconds() + " s");
            } catch (JetStreamApiException e) {
                if (e.getApiErrorCode() != WRONG_LAST_SEQUENCE) {
                    LOG.log(Level.WARNING, "taking over node " + entry.node().id() + " failed; the next beat tries"
                            + " again", e);
                }
                // else another gateway wrote the entry first (it took the node over, or its owner came back)
            } catch (IOException | IllegalStateException e) {
                LOG.log(Level.FINE, "taking over node " + entry.node().id() + " failed; the next beat tries again", e);
            }
        }
    }

    /** Tells the relay that something may be owed (an envelope was committed). */
    public void wake() {
        relay.wake();
    }

    public FederationStatus status() {
        Instant now = parts.clock().instant();
        List<FederationStatus.Peer> peers = beats.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .map(e -> new FederationStatus.Peer(e.getKey(), e.getValue().version(), e.getValue().at(),
                        e.getValue().at().plus(PRESENCE_TTL).isAfter(now)))
                .toList();
        return new FederationStatus(config.id(), !spooling(), parts.store().owedCount(), ingest.cursors(),
                ingest.refused(), ingest.unreadable(), stateSkipped.get(), ownershipMoves.get(), peers);
    }

    @Override
    public void close() {
        closed = true;
        beat.interrupt();
        relay.close();
        ingest.close();
        closeQuietly(connection);
    }

    private void ensureOutbox() throws IOException, JetStreamApiException {
        var jsm = connection.jetStreamManagement();
        StreamConfiguration outbox = StreamConfiguration.builder().name(config.outboxStream())
                .subjects(GatewayConfig.subject(config.id(), ">")).storageType(StorageType.File)
                .duplicateWindow(DUPLICATE_WINDOW).replicas(config.replicas()).build();
        if (jsm.getStreamNames().contains(config.outboxStream())) {
            jsm.updateStream(outbox);
        } else {
            jsm.addStream(outbox);
        }
    }

    private KeyValue bucket(String name, Optional<Duration> ttl) throws IOException, JetStreamApiException {
        var kvm = connection.keyValueManagement();
        if (!kvm.getBucketNames().contains(name)) {
            KeyValueConfiguration.Builder bucket = KeyValueConfiguration.builder().name(name)
                    .storageType(StorageType.File).maxHistoryPerKey(1).replicas(config.replicas());
            ttl.ifPresent(bucket::ttl);
            try {
                kvm.create(bucket.build());
            } catch (JetStreamApiException raced) {
                LOG.log(Level.FINE, "bucket " + name + " was created by another gateway", raced);
            }
        }
        return connection.keyValue(name);
    }

    /** Loads the state room (every node and grant) and keeps watching it. */
    private void loadState() throws IOException, JetStreamApiException, InterruptedException {
        CountDownLatch loaded = new CountDownLatch(1);
        state.watchAll(new KeyValueWatcher() {
            @Override
            public void watch(KeyValueEntry entry) {
                stateEntry(entry);
            }

            @Override
            public void endOfData() {
                loaded.countDown();
            }
        });
        if (!loaded.await(30, TimeUnit.SECONDS)) {
            throw new IOException("the state room did not load within 30 s");
        }
    }

    /** One state room entry; one that cannot be read is skipped and audited, and the watch goes on. */
    private void stateEntry(KeyValueEntry entry) {
        String key = entry.getKey();
        try {
            if (key.startsWith("node.") && entry.getOperation() == KeyValueOperation.PUT) {
                Wire.NodeEntry node = Wire.node(entry.getValue());
                Known before = nodes.get(node.node().id());
                if (before != null && node.deletedAt().isEmpty() && !before.entry().owner().equals(node.owner())
                        && !before.entry().fallbacks().contains(node.owner())) {
                    // Only a fallback takes a node over; an owner written otherwise is not followed.
                    throw new Wire.Unreadable("node " + node.node().id() + " moved from gateway "
                            + before.entry().owner() + " to gateway " + node.owner() + ", which is not one of its"
                            + " fallbacks " + before.entry().fallbacks());
                }
                nodes.put(node.node().id(), new Known(node, entry.getRevision()));
                if (node.deletedAt().isPresent()) {
                    parts.replica().nodeDeleted(node.node().id(), node.owner(), node.deletedAt().get());
                } else if (parts.replica().node(node.node(), node.owner())) {
                    ownershipMoves.incrementAndGet();
                }
            } else if (key.startsWith("grant.")) {
                if (entry.getOperation() == KeyValueOperation.PUT) {
                    parts.replica().grant(Wire.grant(entry.getValue()));
                } else {
                    parts.replica().grantWithdrawn(key.substring("grant.".length()));
                }
            } else if (key.startsWith(SUBSCRIPTION_PREFIX)) {
                if (entry.getOperation() == KeyValueOperation.PUT) {
                    parts.replica().subscription(Wire.subscription(entry.getValue()));
                } else {
                    String[] nodeAndTopic = key.substring(SUBSCRIPTION_PREFIX.length()).split("=", 2);
                    if (nodeAndTopic.length != 2) {
                        throw new Wire.Unreadable("not a subscription key");
                    }
                    parts.replica().subscriptionWithdrawn(TopicName.of(nodeAndTopic[1]), NodeId.of(nodeAndTopic[0]));
                }
            }
        } catch (Wire.Unreadable e) {
            stateSkipped.incrementAndGet();
            parts.replica().unreadable(key, e.getMessage());
        } catch (RuntimeException e) {
            stateSkipped.incrementAndGet();
            LOG.log(Level.WARNING, "state room entry " + key + " could not be applied", e);
            parts.replica().unreadable(key, "could not be applied: " + e.getMessage());
        }
    }

    /** Every gateway present (now or later) other than this one gets an ingest of what it routes here. */
    private void watchPresence() throws IOException, JetStreamApiException, InterruptedException {
        presence.watchAll(new KeyValueWatcher() {
            @Override
            public void watch(KeyValueEntry entry) {
                if (entry.getOperation() != KeyValueOperation.PUT) {
                    return;
                }
                try {
                    String id = new GatewayId(entry.getKey()).value();
                    Wire.Beat beat = Wire.presence(entry.getValue());
                    // When this gateway heard the beat, by its own clock: the beater's clock may be off.
                    beats.put(id, new Wire.Beat(beat.gateway(), beat.version(), parts.clock().instant()));
                    if (!id.equals(config.id())) {
                        ingest.follow(id);
                    }
                } catch (IllegalArgumentException | Wire.Unreadable e) {
                    stateSkipped.incrementAndGet();
                    parts.replica().unreadable(PRESENCE_BUCKET + "/" + entry.getKey(), e.getMessage());
                }
            }

            @Override
            public void endOfData() {
                presenceLoaded = true;
            }
        });
    }

    /** Announces this gateway in presence and mirrors its ingest cursors into the state room, every beat. */
    private void beatLoop() {
        while (!closed) {
            try {
                presence.put(config.id(), Wire.presence(config.id(), parts.version(), parts.clock().instant()));
                try {
                    takeOver();
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "taking over nodes failed; the next beat tries again", e);
                }
                for (var cursor : ingest.cursors().entrySet()) {
                    state.put("cursor." + config.id() + "." + cursor.getKey(), Long.toString(cursor.getValue()));
                }
            } catch (IOException | JetStreamApiException | IllegalStateException e) {
                // IllegalStateException: jnats refuses writes while it reconnects (no reconnect buffer).
                LOG.log(Level.FINE, "presence beat failed; the next one tries again", e);
            }
            try {
                Thread.sleep(BEAT);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static String nodeKey(String id) {
        return "node." + id;
    }

    private static String grantKey(String id) {
        return "grant." + id;
    }

    /** {@code sub.<node>=<topic>}: node ids and topic names may hold dots, never '='. */
    private static String subscriptionKey(TopicName topic, NodeId node) {
        return SUBSCRIPTION_PREFIX + node.value() + "=" + topic.value();
    }

    private static ParleyException unavailable(Exception e) {
        LOG.log(Level.WARNING, "state room write failed", e);
        return new ParleyException(ErrorCode.UNAVAILABLE, "the federation's state room is out of reach; try again");
    }

    private static void closeQuietly(Connection connection) {
        try {
            connection.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
