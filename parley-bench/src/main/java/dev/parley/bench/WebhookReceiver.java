package dev.parley.bench;

import dev.parley.bench.http.HeadLine;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The webhook endpoints of a bench run: an HTTP/1.1 server on loopback, one virtual thread
 * per connection, answering every POST with 204 and keeping the connection. It is as lean as
 * the bench's SSE readers (its own parsing of the request head, no JDK {@code HttpServer}),
 * because it shares the bench's JVM and CPU with the hub it measures. Each push's arrival time
 * is recorded, keyed by its target node and seq (read from the envelope JSON), into that node's
 * {@link InboxArrivals}, so the load's figures come out as for streams; its
 * {@code Parley-Event-Id} is recorded too, so that pushes of the same envelope (retries,
 * redeliveries) are counted. A request without a {@code Content-Length} is answered 411 and
 * its connection closed (the hub always sends one).
 */
final class WebhookReceiver implements AutoCloseable {
    private static final byte[] SEQ = "\"seq\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TO = "\"to\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NO_CONTENT = "HTTP/1.1 204 No Content\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] LENGTH_REQUIRED = "HTTP/1.1 411 Length Required\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
            .getBytes(StandardCharsets.US_ASCII);
    private static final int MAX_LINE = 8 * 1024;

    private final ServerSocket server;
    private final Thread acceptor;
    private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
    private final Map<String, Integer> nodeIndex = new HashMap<>();
    private final InboxArrivals[] arrivals;
    private final Set<String> eventIds = ConcurrentHashMap.newKeySet();
    private final AtomicLong pushes = new AtomicLong();
    private final AtomicLong repeated = new AtomicLong();
    private final AtomicLong unparsed = new AtomicLong();

    /** Listens on a free loopback port for pushes to {@code nodeIds} (arrivals in the same order). */
    WebhookReceiver(String[] nodeIds) throws IOException {
        arrivals = new InboxArrivals[nodeIds.length];
        for (int i = 0; i < nodeIds.length; i++) {
            nodeIndex.put(nodeIds[i], i);
            arrivals[i] = new InboxArrivals(null);
        }
        server = new ServerSocket(0, 1024, InetAddress.getLoopbackAddress());
        acceptor = Thread.ofVirtual().name("webhook-receiver").start(this::accept);
    }

    /** The URL a node's webhook should point at. */
    String url(String nodeId) {
        return "http://127.0.0.1:" + server.getLocalPort() + "/hook/" + nodeId;
    }

    /** Arrivals per node, in the order the node ids were given. */
    InboxArrivals[] arrivals() {
        return arrivals;
    }

    /** POSTs answered. */
    long pushes() {
        return pushes.get();
    }

    /** POSTs whose Parley-Event-Id had been seen before. */
    long repeated() {
        return repeated.get();
    }

    /** POSTs whose body did not name a known node and a seq. */
    long unparsed() {
        return unparsed.get();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                connections.add(s);
                Thread.ofVirtual().start(() -> serve(s));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    /** Answers the requests of one connection until the hub closes it (or the receiver does). */
    private void serve(Socket socket) {
        try (socket) {
            socket.setTcpNoDelay(true);
            Connection c = new Connection(socket.getInputStream());
            OutputStream out = new BufferedOutputStream(socket.getOutputStream(), 256);
            while (c.readHead()) {
                if (c.contentLength < 0) {
                    out.write(LENGTH_REQUIRED);
                    out.flush();
                    return;
                }
                byte[] body = c.readBody();
                received(body, c.eventId);
                out.write(NO_CONTENT);
                out.flush();
                if (c.close) {
                    return;
                }
            }
        } catch (IOException e) {
            // the hub closed the connection, or the receiver is closing
        } finally {
            connections.remove(socket);
        }
    }

    private void received(byte[] body, String eventId) {
        long now = System.nanoTime();
        pushes.incrementAndGet();
        if (eventId != null && !eventIds.add(eventId)) {
            repeated.incrementAndGet();
        }
        long seq = longField(body, SEQ);
        Integer node = nodeIndex.get(stringField(body, TO));
        if (seq < 0 || node == null) {
            unparsed.incrementAndGet();
        } else {
            arrivals[node].arrived(seq, now);
        }
    }

    /** The reading side of one connection: request heads (the headers this receiver needs) and bodies. */
    private static final class Connection {
        private final InputStream in;
        private final byte[] buf = new byte[16 * 1024];
        private int pos;
        private int lim;
        private final HeadLine line = new HeadLine(MAX_LINE);
        long contentLength;
        String eventId;
        boolean close;

        Connection(InputStream in) {
            this.in = in;
        }

        /** Reads a request line and headers; false when the connection ended between requests. */
        boolean readHead() throws IOException {
            if (pos == lim && !fill()) {
                return false;
            }
            readLine(); // "POST /hook/n1 HTTP/1.1"
            contentLength = -1;
            eventId = null;
            close = line.length() > 8 && line.at(line.length() - 1) == '0'; // HTTP/1.0 closes unless told otherwise
            for (readLine(); line.length() > 0; readLine()) {
                if (line.headerIs("content-length")) {
                    contentLength = Long.parseLong(line.headerValue());
                } else if (line.headerIs("parley-event-id")) {
                    eventId = line.headerValue();
                } else if (line.headerIs("connection")) {
                    close = line.headerValue().toLowerCase(java.util.Locale.ROOT).contains("close");
                }
            }
            return true;
        }

        byte[] readBody() throws IOException {
            byte[] body = new byte[Math.toIntExact(contentLength)];
            int got = 0;
            while (got < body.length) {
                if (pos == lim && !fill()) {
                    throw new EOFException("connection closed mid-body");
                }
                int take = Math.min(body.length - got, lim - pos);
                System.arraycopy(buf, pos, body, got, take);
                pos += take;
                got += take;
            }
            return body;
        }

        private void readLine() throws IOException {
            do {
                if (pos == lim && !fill()) {
                    throw new EOFException("connection closed mid-head");
                }
                pos = line.take(buf, pos, lim);
            } while (!line.complete());
        }

        private boolean fill() throws IOException {
            int n = in.read(buf, 0, buf.length);
            if (n < 0) {
                return false;
            }
            pos = 0;
            lim = n;
            return true;
        }
    }

    private static int find(byte[] b, byte[] pattern) {
        outer:
        for (int i = 0; i + pattern.length <= b.length; i++) {
            for (int j = 0; j < pattern.length; j++) {
                if (b[i + j] != pattern[j]) {
                    continue outer;
                }
            }
            return i + pattern.length;
        }
        return -1;
    }

    private static long longField(byte[] b, byte[] name) {
        int k = find(b, name);
        if (k < 0) {
            return -1;
        }
        while (k < b.length && b[k] == ' ') {
            k++;
        }
        long v = 0;
        int digits = 0;
        while (k < b.length && b[k] >= '0' && b[k] <= '9') {
            v = v * 10 + (b[k++] - '0');
            digits++;
        }
        return digits == 0 ? -1 : v;
    }

    private static String stringField(byte[] b, byte[] name) {
        int k = find(b, name);
        if (k < 0) {
            return "";
        }
        int end = k;
        while (end < b.length && b[end] != '"') {
            end++;
        }
        return new String(b, k, end - k, StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        server.close();
        connections.forEach(s -> {
            try {
                s.close();
            } catch (IOException e) {
                // closing is all that is wanted
            }
        });
    }
}
