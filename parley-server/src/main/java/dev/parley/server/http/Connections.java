package dev.parley.server.http;

import dev.parley.server.metrics.ConnectionPhase;
import dev.parley.server.metrics.Metrics;
import io.helidon.common.socket.SocketOptions;
import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http1.Http1ConnectionListener;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import java.util.stream.Stream;

/**
 * The hub's TCP connections, from accept to close. A connection that waits too long for its
 * request line, its headers or its body is closed, and one client address holds at most so
 * many connections at once. Helidon 4.5 offers neither: its idle check cannot end a
 * connection stuck in its headers or one that never sent a byte. So the hub keeps its own
 * ledger: {@link #acceptHook} registers each socket as it is accepted, Helidon's HTTP/1
 * listener reports the request line and headers, and the route guard reports the request
 * it runs and the end of its answer. A sweeper closes whatever is past its deadline. While
 * an answer is being written (an SSE stream that idles between heartbeats) no timeout runs.
 */
public final class Connections implements Http1ConnectionListener, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Connections.class.getName());

    private final Duration idleTimeout;
    private final Duration headerTimeout;
    private final Duration bodyTimeout;
    private final int maxConnectionsPerAddress;
    private final Metrics metrics;
    private final Map<SocketAddress, Connection> byPeer = new ConcurrentHashMap<>();
    /** Guarded by itself; the listener thread adds, the sweeper and the listener drop. */
    private final Map<InetAddress, Set<Connection>> byAddress = new HashMap<>();
    private final ScheduledExecutorService sweeper = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("parley-connections").daemon(true).factory());

    /** The limits as {@code HubConfig.Transport} checked them. */
    public Connections(Duration idleTimeout, Duration headerTimeout, Duration bodyTimeout, int maxConnectionsPerAddress,
                       Metrics metrics) {
        this.idleTimeout = idleTimeout;
        this.headerTimeout = headerTimeout;
        this.bodyTimeout = bodyTimeout;
        this.maxConnectionsPerAddress = maxConnectionsPerAddress;
        this.metrics = metrics;
        metrics.openConnectionsFrom(byPeer::size);
        long shortest = Stream.of(idleTimeout, headerTimeout, bodyTimeout)
                .mapToLong(Duration::toMillis).min().orElseThrow();
        long period = Math.max(10, Math.min(1000, shortest / 4));
        sweeper.scheduleAtFixedRate(this::sweep, period, period, TimeUnit.MILLISECONDS);
    }

    /** Socket options that also register every accepted connection here (the only accept-time hook Helidon has). */
    public SocketOptions acceptHook(SocketOptions options) {
        return new AcceptHook(options, this);
    }

    @Override
    public void prologue(ConnectionContext ctx, HttpPrologue prologue) {
        enter(ctx.remotePeer().address(), ConnectionPhase.HEADERS, null);
    }

    @Override
    public void headers(ConnectionContext ctx, Headers headers) {
        enter(ctx.remotePeer().address(), ConnectionPhase.REQUEST, null);
    }

    /** The guard runs {@code request}: its body must be in within the body timeout of its headers. */
    void running(ServerRequest request) {
        Connection connection = byPeer.get(request.remotePeer().address());
        if (connection != null) {
            State state = connection.state;
            connection.state = new State(ConnectionPhase.REQUEST, state.since(), request);
        }
    }

    /** The answer to {@code request} is out: the connection waits for its next request. */
    void answered(ServerRequest request) {
        enter(request.remotePeer().address(), ConnectionPhase.IDLE, null);
    }

    private void enter(SocketAddress peer, ConnectionPhase phase, ServerRequest request) {
        Connection connection = byPeer.get(peer);
        if (connection != null) {
            connection.state = new State(phase, System.nanoTime(), request);
        }
    }

    private void accepted(SocketChannel channel) throws IOException {
        if (!(channel.getRemoteAddress() instanceof InetSocketAddress peer)) {
            return;
        }
        Connection connection = new Connection(channel, peer);
        if (!admit(connection)) {
            metrics.connectionsRefused.increment();
            LOG.fine(() -> "refused a connection from " + peer.getAddress().getHostAddress() + ": it holds "
                    + maxConnectionsPerAddress + " already");
            try (channel) {
                channel.write(ByteBuffer.wrap(TransportErrors.tooManyConnections(maxConnectionsPerAddress)));
            }
            throw new Refused();
        }
        Connection previous = byPeer.put(peer, connection);
        if (previous != null) {
            forget(previous); // its port was reused before the sweeper saw it close
        }
    }

    private boolean admit(Connection connection) {
        synchronized (byAddress) {
            Set<Connection> held = byAddress.computeIfAbsent(connection.address(), a -> new HashSet<>());
            if (held.size() >= maxConnectionsPerAddress) {
                held.removeIf(Connection::closed); // closed since the last sweep
            }
            if (held.size() >= maxConnectionsPerAddress) {
                return false;
            }
            held.add(connection);
            return true;
        }
    }

    private void forget(Connection connection) {
        byPeer.remove(connection.peer, connection);
        synchronized (byAddress) {
            Set<Connection> held = byAddress.get(connection.address());
            if (held != null && held.remove(connection) && held.isEmpty()) {
                byAddress.remove(connection.address());
            }
        }
    }

    private void sweep() {
        long now = System.nanoTime();
        for (Connection connection : byPeer.values()) {
            if (connection.closed()) {
                forget(connection);
                continue;
            }
            State state = connection.state;
            Optional<Duration> limit = limit(state);
            if (limit.isPresent() && now - state.since() > limit.get().toNanos()) {
                timeOut(connection, state.phase(), limit.get());
            }
        }
    }

    /** The time the connection may stay in its state; none while a request runs with its body read. */
    private Optional<Duration> limit(State state) {
        return switch (state.phase()) {
            case IDLE -> Optional.of(idleTimeout);
            case HEADERS -> Optional.of(headerTimeout);
            case REQUEST -> state.request() != null && !state.request().content().consumed()
                    ? Optional.of(bodyTimeout) : Optional.empty();
        };
    }

    private void timeOut(Connection connection, ConnectionPhase phase, Duration limit) {
        metrics.connectionTimedOut(phase);
        LOG.fine(() -> "closed a connection from " + connection.address().getHostAddress() + ": no "
                + (phase == ConnectionPhase.IDLE ? "request" : phase.label()) + " within " + limit.toMillis() + " ms");
        try {
            connection.channel.close(); // a read blocked on it ends at once
        } catch (IOException e) {
            LOG.fine(() -> "closing a timed-out connection failed: " + e.getMessage());
        }
        forget(connection);
    }

    @Override
    public void close() {
        sweeper.shutdownNow();
    }

    /** Where a connection is, since when, and the request running on it (in {@link ConnectionPhase#REQUEST}). */
    private record State(ConnectionPhase phase, long since, ServerRequest request) {
    }

    private static final class Connection {
        private final SocketChannel channel;
        private final InetSocketAddress peer;
        private volatile State state = new State(ConnectionPhase.IDLE, System.nanoTime(), null);

        private Connection(SocketChannel channel, InetSocketAddress peer) {
            this.channel = channel;
            this.peer = peer;
        }

        InetAddress address() {
            return peer.getAddress();
        }

        boolean closed() {
            return !channel.isOpen();
        }
    }

    /** Thrown from the accept hook so that Helidon drops a refused socket without handling it. */
    private static final class Refused extends RuntimeException {
        private Refused() {
            super("too many connections from one address", null, false, false);
        }
    }

    /** Helidon's connection options, plus registration of each accepted socket. */
    private record AcceptHook(SocketOptions options, Connections connections) implements SocketOptions {
        @Override
        public void configureSocket(SocketChannel socket) {
            options.configureSocket(socket);
            try {
                connections.accepted(socket);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void configureSocket(Socket socket) {
            options.configureSocket(socket);
        }

        @Override
        public Map<SocketOption<?>, Object> socketOptions() {
            return options.socketOptions();
        }

        @Override
        public Duration connectTimeout() {
            return options.connectTimeout();
        }

        @Override
        public Duration readTimeout() {
            return options.readTimeout();
        }

        @Override
        public Optional<Integer> socketReceiveBufferSize() {
            return options.socketReceiveBufferSize();
        }

        @Override
        public Optional<Integer> socketSendBufferSize() {
            return options.socketSendBufferSize();
        }

        @Override
        public boolean socketReuseAddress() {
            return options.socketReuseAddress();
        }

        @Override
        public boolean socketKeepAlive() {
            return options.socketKeepAlive();
        }

        @Override
        public boolean tcpNoDelay() {
            return options.tcpNoDelay();
        }
    }
}
