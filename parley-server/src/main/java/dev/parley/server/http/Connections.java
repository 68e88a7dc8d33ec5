package dev.parley.server.http;

import dev.parley.server.metrics.ConnectionPhase;
import dev.parley.server.metrics.Metrics;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Logger;
import java.util.stream.Stream;

/**
 * The hub's TCP connections, from accept to close. A connection that waits too long for its
 * request line, its headers or its body is closed, and one client address holds at most so
 * many connections at once. Jetty's idle timeout counts time without any byte, so it cannot
 * end a connection that trickles its headers; the hub keeps its own ledger: {@link #admit}
 * counts each socket by address as it is accepted, {@link #onOpened} registers its connection,
 * the route guard reports the request it runs and the end of its answer, and a sweeper sees a
 * next request begin in the connection's bytes in and closes whatever is past its deadline.
 * While an answer is being written (an SSE stream that idles between heartbeats) no timeout runs.
 */
public final class Connections implements Connection.Listener, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Connections.class.getName());

    private final Duration idleTimeout;
    private final Duration headerTimeout;
    private final Duration bodyTimeout;
    private final int maxConnectionsPerAddress;
    private final Metrics metrics;
    private final Map<EndPoint, Ledger> open = new ConcurrentHashMap<>();
    /** Connections held by each address, accepted and not yet closed; guarded by itself. */
    private final Map<InetAddress, Integer> byAddress = new HashMap<>();
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
        metrics.openConnectionsFrom(open::size);
        long period = Math.max(10, Math.min(1000, Stream.of(idleTimeout, headerTimeout, bodyTimeout)
                .mapToLong(Duration::toMillis).min().orElseThrow() / 4));
        sweeper.scheduleAtFixedRate(this::sweep, period, period, TimeUnit.MILLISECONDS);
    }

    /**
     * The longest any of the ledger's timeouts runs: the transport's own idle timeout, which also
     * bounds a write the client never reads, is set well past it so that the ledger decides first.
     */
    Duration longestTimeout() {
        return Stream.of(idleTimeout, headerTimeout, bodyTimeout).max(Duration::compareTo).orElseThrow();
    }

    /**
     * Takes a socket just accepted into its address's share, or answers it 429 and closes it
     * (before any HTTP is read, so the answer is bytes); false when it was refused.
     */
    boolean admit(Socket socket) {
        if (!(socket.getRemoteSocketAddress() instanceof InetSocketAddress peer)) {
            return true;
        }
        synchronized (byAddress) {
            int held = byAddress.getOrDefault(peer.getAddress(), 0);
            if (held < maxConnectionsPerAddress) {
                byAddress.put(peer.getAddress(), held + 1);
                return true;
            }
        }
        metrics.connectionsRefused.increment();
        LOG.fine(() -> "refused a connection from " + peer.getAddress().getHostAddress() + ": it holds "
                + maxConnectionsPerAddress + " already");
        try (SocketChannel channel = socket.getChannel()) {
            // a fresh socket's send buffer takes the few hundred bytes whole, even non-blocking
            channel.write(ByteBuffer.wrap(TransportErrors.tooManyConnections(maxConnectionsPerAddress)));
        } catch (IOException e) {
            LOG.fine(() -> "answering a refused connection failed: " + e.getMessage());
        }
        return false;
    }

    private void release(InetAddress address) {
        synchronized (byAddress) {
            byAddress.computeIfPresent(address, (a, held) -> held > 1 ? held - 1 : null);
        }
    }

    @Override
    public void onOpened(Connection connection) {
        InetAddress address = connection.getEndPoint().getRemoteSocketAddress() instanceof InetSocketAddress peer
                ? peer.getAddress() : null;
        open.put(connection.getEndPoint(), new Ledger(connection, address));
    }

    @Override
    public void onClosed(Connection connection) {
        Ledger ledger = open.remove(connection.getEndPoint());
        if (ledger != null && ledger.address != null) {
            release(ledger.address); // the closed socket no longer knows its peer
        }
    }

    /** The guard runs {@code exchange}'s request: its body must be in within the body timeout. */
    void running(Exchange exchange) {
        Ledger ledger = open.get(exchange.endPoint());
        if (ledger != null) {
            ledger.state.set(new State(ConnectionPhase.REQUEST, System.nanoTime(), exchange, 0));
        }
    }

    /** The answer to {@code exchange} is out: the connection waits for its next request. */
    void answered(Exchange exchange) {
        Ledger ledger = open.get(exchange.endPoint());
        if (ledger != null) {
            ledger.state.set(ledger.idle());
        }
    }

    private void sweep() {
        long now = System.nanoTime();
        for (Ledger ledger : open.values()) {
            State state = ledger.state.get();
            if (state.phase() == ConnectionPhase.IDLE && ledger.connection.getBytesIn() > state.bytesIn()) {
                // bytes of a next request came in since the last answer: its headers are on their way
                State headers = new State(ConnectionPhase.HEADERS, now, null, 0);
                state = ledger.state.compareAndSet(state, headers) ? headers : ledger.state.get();
            }
            Optional<Duration> limit = limit(state);
            if (limit.isPresent() && now - state.since() > limit.get().toNanos()) {
                timeOut(ledger.connection, state.phase(), limit.get());
            }
        }
    }

    /** The time the connection may stay in its state; none while a request runs with its body read. */
    private Optional<Duration> limit(State state) {
        return switch (state.phase()) {
            case IDLE -> Optional.of(idleTimeout);
            case HEADERS -> Optional.of(headerTimeout);
            case REQUEST -> state.request().bodyLeft() ? Optional.of(bodyTimeout) : Optional.empty();
        };
    }

    private void timeOut(Connection connection, ConnectionPhase phase, Duration limit) {
        metrics.connectionTimedOut(phase);
        LOG.fine(() -> "closed a connection from " + connection.getEndPoint().getRemoteSocketAddress() + ": no "
                + (phase == ConnectionPhase.IDLE ? "request" : phase.label()) + " within " + limit.toMillis() + " ms");
        connection.getEndPoint().close(); // a read blocked on it ends at once
    }

    @Override
    public void close() {
        sweeper.shutdownNow();
    }

    /**
     * Where a connection is and since when; the request running on it (in {@link ConnectionPhase#REQUEST}),
     * or the bytes it had read when it went idle (in {@link ConnectionPhase#IDLE}).
     */
    private record State(ConnectionPhase phase, long since, Exchange request, long bytesIn) {
    }

    private static final class Ledger {
        private final Connection connection;
        private final InetAddress address;
        private final AtomicReference<State> state;

        private Ledger(Connection connection, InetAddress address) {
            this.connection = connection;
            this.address = address;
            this.state = new AtomicReference<>(idle());
        }

        State idle() {
            return new State(ConnectionPhase.IDLE, System.nanoTime(), null, connection.getBytesIn());
        }
    }
}
