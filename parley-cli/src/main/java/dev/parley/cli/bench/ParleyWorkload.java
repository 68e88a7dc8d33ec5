package dev.parley.cli.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The Parley side of the send workload, shared by {@code bench send}, {@code compare} and
 * {@code growth}: one root {@code bench-lead} with M inbox nodes and N sender nodes as its
 * children (siblings, so every send is allowed), one SSE stream per inbox, and N
 * {@link ClosedLoopSender}s, each on its own keep-alive connection.
 *
 * <p>Use: {@link #createNodes} once per data directory, then {@link #openStreams} against a
 * running hub, then {@link #measure}; {@link #close} closes the streams.
 */
final class ParleyWorkload implements AutoCloseable {
    static final String LEAD = "bench-lead";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Called at the edges of the measured window, with the System.nanoTime() of the edge. */
    interface Edge {
        void at(long nanos) throws Exception;
    }

    final int senders;
    final int inboxes;
    final int size;
    final String[] inboxIds;
    final String[] senderIds;
    private final String[] inboxTokens;
    private final String[] senderTokens;
    private final PrintWriter err;

    private String host;
    private int port;
    private InboxArrivals[] readers = new InboxArrivals[0];
    private ClosedLoopSender[] workers = new ClosedLoopSender[0];

    // Optional shaping (bench guarded, bench webhook): a kind and data on every send, labels on the nodes.
    private String kind;
    private ObjectNode data;
    private java.util.Map<String, String> inboxLabels = java.util.Map.of();
    private java.util.Map<String, String> senderLabels = java.util.Map.of();

    /** Every send carries {@code kind} (null: the default) and {@code data} (null: none) besides its text. */
    ParleyWorkload payload(String sendKind, ObjectNode sendData) {
        this.kind = sendKind;
        this.data = sendData;
        return this;
    }

    /** Labels for the inbox and sender nodes {@link #createNodes} creates. */
    ParleyWorkload labels(java.util.Map<String, String> inbox, java.util.Map<String, String> sender) {
        this.inboxLabels = java.util.Map.copyOf(inbox);
        this.senderLabels = java.util.Map.copyOf(sender);
        return this;
    }

    /**
     * Deliveries are observed by {@code arrivals} (one per inbox, e.g. fed by a webhook
     * receiver) instead of by streams: use instead of {@link #openStreams}.
     */
    void useArrivals(String hubHost, int hubPort, InboxArrivals[] arrivals) {
        if (arrivals.length != inboxes) {
            throw new IllegalArgumentException("one arrivals record per inbox");
        }
        this.host = hubHost;
        this.port = hubPort;
        this.readers = arrivals.clone();
    }

    /** The request bodies of {@link #measure}: {@link #bodies} plus the kind and data of {@link #payload}. */
    private byte[][] requestBodies() throws Exception {
        if (kind == null && data == null) {
            return bodies(inboxIds, size);
        }
        String text = BenchSupport.text(size);
        byte[][] out = new byte[inboxIds.length][];
        for (int i = 0; i < inboxIds.length; i++) {
            ObjectNode body = JSON.createObjectNode();
            body.put("to", inboxIds[i]);
            if (kind != null) {
                body.put("kind", kind);
            }
            body.put("text", text);
            if (data != null) {
                body.set("data", data);
            }
            out[i] = JSON.writeValueAsBytes(body);
            if (out[i].length != out[0].length) {
                throw new IllegalStateException("request bodies differ in length");
            }
        }
        return out;
    }

    ParleyWorkload(int senders, int inboxes, int size, PrintWriter err) {
        this.senders = senders;
        this.inboxes = inboxes;
        this.size = size;
        this.err = err;
        inboxIds = new String[inboxes];
        inboxTokens = new String[inboxes];
        senderIds = new String[senders];
        senderTokens = new String[senders];
        for (int i = 0; i < inboxes; i++) {
            inboxIds[i] = inboxId(i);
        }
        for (int i = 0; i < senders; i++) {
            senderIds[i] = senderId(i);
        }
    }

    static String inboxId(int i) {
        return String.format(Locale.ROOT, "bench-in-%04d", i);
    }

    static String senderId(int i) {
        return String.format(Locale.ROOT, "bench-tx-%04d", i);
    }

    /**
     * The request body of a send of {@code size} bytes of text to each inbox; ids have a fixed
     * width so every body (and so every sender's request head) has the same length.
     */
    static byte[][] bodies(String[] inboxIds, int size) throws Exception {
        String text = BenchSupport.text(size);
        byte[][] bodies = new byte[inboxIds.length][];
        for (int i = 0; i < inboxIds.length; i++) {
            ObjectNode body = JSON.createObjectNode();
            body.put("to", inboxIds[i]);
            body.put("text", text);
            bodies[i] = JSON.writeValueAsBytes(body);
            if (bodies[i].length != bodies[0].length) {
                throw new IllegalStateException("request bodies differ in length");
            }
        }
        return bodies;
    }

    /** Creates the lead, the inboxes and the senders (tokens are kept for later restarts). */
    void createNodes(BenchHub hub) throws Exception {
        hub.createNode(LEAD, null);
        List<BenchHub.NodeSpec> specs = new ArrayList<>();
        for (String id : inboxIds) {
            specs.add(new BenchHub.NodeSpec(id, LEAD, inboxLabels));
        }
        for (String id : senderIds) {
            specs.add(new BenchHub.NodeSpec(id, LEAD, senderLabels));
        }
        String[] tokens = hub.createNodes(specs, 4);
        System.arraycopy(tokens, 0, inboxTokens, 0, inboxes);
        System.arraycopy(tokens, inboxes, senderTokens, 0, senders);
        BenchSupport.progress(err, "created " + (1 + inboxes + senders) + " nodes");
    }

    String inboxToken(int i) {
        return inboxTokens[i];
    }

    String senderToken(int i) {
        return senderTokens[i];
    }

    /** Opens one SSE stream per inbox (no cursor: replay of undelivered, then live) and waits for each to be ready. */
    void openStreams(String hubHost, int hubPort) throws Exception {
        this.host = hubHost;
        this.port = hubPort;
        CountDownLatch ready = new CountDownLatch(inboxes);
        readers = new InboxArrivals[inboxes];
        for (int i = 0; i < inboxes; i++) {
            InboxArrivals reader = new InboxArrivals(ready);
            reader.stream = new SseStream(host, port, "/v1/inbox/stream", inboxTokens[i], reader);
            readers[i] = reader;
            reader.stream.open();
            Thread.ofPlatform().daemon().name("bench-sse-" + i).start(reader.stream);
        }
        if (!ready.await(15, TimeUnit.SECONDS)) {
            throw new IllegalStateException((inboxes - ready.getCount()) + " of " + inboxes
                    + " streams sent ': parley ready' within 15 s");
        }
        BenchSupport.progress(err, "opened " + inboxes + " streams");
    }

    /** What the reader of inbox {@code i} has seen. */
    InboxArrivals arrivals(int i) {
        return readers[i];
    }

    /**
     * Runs the senders for {@code warmup} seconds, then a measured window of {@code seconds},
     * stops them, waits up to {@code drainSeconds} for the streams to catch up, and computes
     * the figures. {@code atStart} and {@code atEnd} run at the window's edges.
     */
    LoadResult measure(int warmup, int seconds, int drainSeconds, Edge atStart, Edge atEnd) throws Exception {
        byte[][] bodies = requestBodies();
        workers = new ClosedLoopSender[senders];
        Thread[] threads = new Thread[senders];
        for (int i = 0; i < senders; i++) {
            HttpConnection conn = new HttpConnection(host, port, 30_000);
            byte[] head = HttpConnection.head("POST", "/v1/messages", conn.hostHeader(), senderTokens[i],
                    "application/json", bodies[0].length);
            workers[i] = new ClosedLoopSender(i, conn, head, bodies);
        }
        for (int i = 0; i < senders; i++) {
            threads[i] = Thread.ofPlatform().daemon().name("bench-send-" + i).start(workers[i]);
        }
        BenchSupport.progress(err, "sending: " + senders + " senders -> " + inboxes + " inboxes, warm-up " + warmup
                + " s, window " + seconds + " s");
        Thread.sleep(warmup * 1000L);
        long w0 = System.nanoTime();
        if (atStart != null) {
            atStart.at(w0);
        }
        Thread.sleep(Math.max(0, seconds * 1000L - (System.nanoTime() - w0) / 1_000_000));
        long w1 = System.nanoTime();
        if (atEnd != null) {
            atEnd.at(w1);
        }
        for (ClosedLoopSender w : workers) {
            w.stop();
        }
        for (Thread t : threads) {
            t.join(60_000);
        }
        SendLog[] logs = new SendLog[senders];
        for (int i = 0; i < senders; i++) {
            logs[i] = workers[i].log;
        }
        LoadResult.awaitArrivals(logs, readers, TimeUnit.SECONDS.toNanos(drainSeconds));
        return LoadResult.compute(logs, readers, w0, w1);
    }

    @Override
    public void close() {
        for (InboxArrivals reader : readers) {
            if (reader != null && reader.stream != null) {
                reader.stream.close();
            }
        }
    }
}
