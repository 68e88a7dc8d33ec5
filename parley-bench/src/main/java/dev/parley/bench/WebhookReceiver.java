package dev.parley.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The webhook endpoints of a bench run: a JDK HTTP server on loopback, one virtual thread
 * per exchange, answering every POST with 204. Each push's arrival time is recorded, keyed
 * by its target node and seq (read from the envelope JSON), into that node's
 * {@link InboxArrivals}, so the load's figures come out as for streams; its
 * {@code Parley-Event-Id} is recorded too, so that pushes of the same envelope (retries,
 * redeliveries) are counted.
 */
final class WebhookReceiver implements AutoCloseable {
    private static final byte[] SEQ = "\"seq\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TO = "\"to\":\"".getBytes(StandardCharsets.US_ASCII);

    private final HttpServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
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
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1024);
        server.setExecutor(executor);
        server.createContext("/", this::handle);
        server.start();
    }

    /** The URL a node's webhook should point at. */
    String url(String nodeId) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/hook/" + nodeId;
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

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            byte[] body;
            try (InputStream in = ex.getRequestBody()) {
                body = in.readAllBytes();
            }
            long now = System.nanoTime();
            pushes.incrementAndGet();
            String eventId = ex.getRequestHeaders().getFirst("Parley-Event-Id");
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
            ex.sendResponseHeaders(204, -1);
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
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
