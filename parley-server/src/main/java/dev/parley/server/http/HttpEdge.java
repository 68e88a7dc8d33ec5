package dev.parley.server.http;

import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

import java.net.Socket;
import java.util.concurrent.Executors;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The hub's HTTP/1.1 listener: Jetty 12's core API, one acceptor and one selector thread, each
 * request's handler on a virtual thread of its own (it blocks on the writer's commit, the policy,
 * the store), and between requests a connection holds no thread. Every request goes through
 * {@link Routes}; {@link Connections} admits sockets and keeps the timeouts; requests the parser
 * refuses get {@link TransportErrors}' bodies. docs/idle-streams-edge.md says why this edge.
 */
public final class HttpEdge implements AutoCloseable {
    /** Jetty's own lines for each start and stop are noise in the hub's log; its warnings stay. */
    private static final Logger JETTY = Logger.getLogger("org.eclipse.jetty");

    static {
        JETTY.setLevel(Level.WARNING);
    }

    /** Header fields of a request, in all: tokens and trace headers are short; 64 KiB is refused. */
    private static final int MAX_HEADER_BYTES = 16 * 1024;

    private final Server server;
    private final ServerConnector connector;

    private HttpEdge(Server server, ServerConnector connector) {
        this.server = server;
        this.connector = connector;
    }

    /**
     * Listens on {@code host}:{@code port} (0: any free port); {@link IllegalStateException} when
     * it cannot (the port is taken or the address is not this machine's).
     */
    public static HttpEdge start(String host, int port, Routes routes, Connections connections) {
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("parley-http");
        threads.setVirtualThreadsExecutor(Executors.newThreadPerTaskExecutor(
                Thread.ofVirtual().name("parley-request-", 0).factory()));
        Server server = new Server(threads);
        server.setStopAtShutdown(false);

        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendXPoweredBy(false);
        http.setRequestHeaderSize(MAX_HEADER_BYTES);
        // the route guard starts the body timeout: it must run before the body's first byte
        http.setDelayDispatchUntilContent(false);
        // a path with an escaped slash reaches the route guard, which refuses it in the contract's words
        http.setUriCompliance(UriCompliance.DEFAULT.with("parley",
                UriCompliance.Violation.AMBIGUOUS_PATH_SEPARATOR));

        ServerConnector connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(http)) {
            @Override
            protected void configure(Socket socket) {
                super.configure(socket);
                connections.admit(socket); // a refused socket is closed: the selector drops it
            }
        };
        connector.setHost(host);
        connector.setPort(port);
        // A backstop for a write the client never reads; the ledger's timeouts decide everything else.
        connector.setIdleTimeout(connections.longestTimeout().toMillis() * 2);
        connector.addBean(connections); // told of every connection opened and closed
        server.addConnector(connector);
        server.setErrorHandler(new TransportErrors());
        server.setHandler(routes);
        try {
            server.start();
        } catch (Exception e) {
            try {
                server.stop();
            } catch (Exception ignored) {
                // the start's failure is what the caller needs
            }
            throw new IllegalStateException("cannot listen on " + host + ":" + port
                    + ": the port is taken or the address is not this machine's (" + e.getMessage() + ")", e);
        }
        return new HttpEdge(server, connector);
    }

    public int port() {
        return connector.getLocalPort();
    }

    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            throw new IllegalStateException("the HTTP listener did not stop cleanly", e);
        }
    }
}
