package dev.parley.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.bench.http.HttpConnection;
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
 *
 * <p>Given several hubs (gateways of one federation), inbox <i>i</i> and sender <i>s</i> belong
 * to hub <i>i mod G</i> and <i>s mod G</i>: each sender sends on its own hub to the inboxes the
 * other hubs own only, each stream reads on its inbox's hub, and sends are matched to arrivals
 * by envelope id (a cross-gateway 202 has no seq).
 */
final class ParleyWorkload implements AutoCloseable {
    static final String LEAD = "bench-lead";
    private static final ObjectMapper JSON = new ObjectMapper();

    final int senders;
    final int inboxes;
    final int size;
    final String[] inboxIds;
    final String[] senderIds;
    private final String[] inboxTokens;
    private final String[] senderTokens;
    private final PrintWriter err;

    /** Where a hub answers. */
    private record Endpoint(String host, int port) {
    }

    private int placedOn;                  // hubs createNodes spread the nodes over (0: not called)
    private List<Endpoint> hubs = List.of(); // set by openStreams / useArrivals
    private InboxArrivals[] readers = new InboxArrivals[0];

    // Optional shaping (bench guarded, bench webhook): a kind and data on every send, labels on the nodes.
    private String kind;
    private ObjectNode data;
    private java.util.Map<String, String> inboxLabels = java.util.Map.of();
    private java.util.Map<String, String> senderLabels = java.util.Map.of();
    private int batch = 1;

    /**
     * Each sender sends {@code size} envelopes per request through {@code POST /v1/messages:batch}
     * (1: single sends to {@code /v1/messages}). One hub only: a batch's answer is matched by seq.
     */
    ParleyWorkload batch(int size) {
        this.batch = size;
        return this;
    }

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
        this.hubs = List.of(new Endpoint(hubHost, hubPort));
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

    /**
     * The bodies of batch requests: body j is {@code {"messages": [...]}} with the sends
     * {@code bodies[j]}, {@code bodies[j + 1]}, … ({@code size} of them, wrapping around).
     */
    static byte[][] batches(byte[][] bodies, int size) {
        byte[][] out = new byte[bodies.length][];
        for (int j = 0; j < bodies.length; j++) {
            java.io.ByteArrayOutputStream batch = new java.io.ByteArrayOutputStream(size * (bodies[0].length + 1) + 16);
            batch.writeBytes("{\"messages\":[".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            for (int k = 0; k < size; k++) {
                if (k > 0) {
                    batch.write(',');
                }
                batch.writeBytes(bodies[(j + k) % bodies.length]);
            }
            batch.write(']');
            batch.write('}');
            out[j] = batch.toByteArray();
        }
        return out;
    }

    /** Creates the lead, the inboxes and the senders (tokens are kept for later restarts). */
    void createNodes(BenchHub hub) throws Exception {
        createNodes(List.of(hub));
    }

    /**
     * Creates the lead on the first hub, then each inbox and sender on the hub it belongs to,
     * and with several hubs waits until every hub sees every node (through the state room).
     */
    void createNodes(List<BenchHub> on) throws Exception {
        on.get(0).createNode(LEAD, null);
        awaitVisible(on, List.of(LEAD));
        int g = on.size();
        for (int h = 0; h < g; h++) {
            List<BenchHub.NodeSpec> specs = new ArrayList<>();
            List<Integer> inboxesHere = new ArrayList<>();
            List<Integer> sendersHere = new ArrayList<>();
            for (int i = h; i < inboxes; i += g) {
                specs.add(new BenchHub.NodeSpec(inboxIds[i], LEAD, inboxLabels));
                inboxesHere.add(i);
            }
            for (int i = h; i < senders; i += g) {
                specs.add(new BenchHub.NodeSpec(senderIds[i], LEAD, senderLabels));
                sendersHere.add(i);
            }
            String[] tokens = on.get(h).createNodes(specs, 4);
            for (int k = 0; k < inboxesHere.size(); k++) {
                inboxTokens[inboxesHere.get(k)] = tokens[k];
            }
            for (int k = 0; k < sendersHere.size(); k++) {
                senderTokens[sendersHere.get(k)] = tokens[inboxesHere.size() + k];
            }
        }
        List<String> all = new ArrayList<>(List.of(inboxIds));
        all.addAll(List.of(senderIds));
        awaitVisible(on, all);
        placedOn = g;
        BenchSupport.progress(err, "created " + (1 + inboxes + senders) + " nodes" + (g > 1 ? " over " + g + " hubs" : ""));
    }

    /** With several hubs: waits (at most 60 s) until every hub answers GET /v1/nodes/{id} for every id. */
    private static void awaitVisible(List<BenchHub> on, List<String> ids) throws Exception {
        if (on.size() < 2) {
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (BenchHub hub : on) {
            for (String id : ids) {
                while (hub.call("GET", "/v1/nodes/" + id, null).status() != 200) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("node " + id + " did not reach the hub at " + hub.url()
                                + " within 60 s");
                    }
                    Thread.sleep(20);
                }
            }
        }
    }

    String inboxToken(int i) {
        return inboxTokens[i];
    }

    String senderToken(int i) {
        return senderTokens[i];
    }

    /** Opens one SSE stream per inbox (no cursor: replay of undelivered, then live) and waits for each to be ready. */
    void openStreams(String hubHost, int hubPort) throws Exception {
        openStreamsAt(List.of(new Endpoint(hubHost, hubPort)));
    }

    /** {@link #openStreams(String, int)} with each stream on the hub its inbox belongs to (as in {@link #createNodes(List)}). */
    void openStreams(List<BenchHub> on) throws Exception {
        openStreamsAt(on.stream().map(h -> new Endpoint(h.host(), h.port())).toList());
    }

    private void openStreamsAt(List<Endpoint> on) throws Exception {
        if (placedOn != 0 && placedOn != on.size()) {
            throw new IllegalStateException("the nodes were created on " + placedOn + " hubs, not " + on.size());
        }
        this.hubs = List.copyOf(on);
        ArrivalKey key = arrivalKey();
        CountDownLatch ready = new CountDownLatch(inboxes);
        readers = new InboxArrivals[inboxes];
        for (int i = 0; i < inboxes; i++) {
            InboxArrivals reader = new InboxArrivals(ready, key);
            Endpoint at = hubs.get(i % hubs.size());
            reader.stream = new HttpConnection(at.host(), at.port(), 10_000).openStream("/v1/inbox/stream", inboxTokens[i],
                    "", reader, key.needsData());
            readers[i] = reader;
            Thread.ofPlatform().daemon().name("bench-sse-" + i).start(reader.stream);
        }
        if (!ready.await(15, TimeUnit.SECONDS)) {
            throw new IllegalStateException((inboxes - ready.getCount()) + " of " + inboxes
                    + " streams sent ': parley ready' within 15 s");
        }
        BenchSupport.progress(err, "opened " + inboxes + " streams");
        awaitRoutes();
    }

    /**
     * With several hubs: a gateway starts ingesting from another only once it has seen it in
     * presence, so before any load, one send from each hub with senders to an inbox on each
     * other hub must reach its stream (at most 60 s). Readers ignore these probes: no log has them.
     */
    private void awaitRoutes() throws Exception {
        int g = hubs.size();
        if (g < 2) {
            return;
        }
        byte[][] bodies = requestBodies();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (int from = 0; from < Math.min(g, senders); from++) {
            Endpoint at = hubs.get(from);
            HttpConnection conn = new HttpConnection(at.host(), at.port(), 30_000);
            try {
                byte[] head = HttpConnection.head("POST", "/v1/messages", conn.hostHeader(), senderTokens[from],
                        "application/json", bodies[0].length);
                for (int to = 0; to < Math.min(g, inboxes); to++) {
                    if (to == from) {
                        continue;
                    }
                    int status = conn.exchange(head, bodies[to]);
                    long k = ArrivalKey.ENVELOPE_ID.ofAck(conn);
                    if (status != 202 || k < 0) {
                        throw new IllegalStateException("a probe from hub " + from + " to hub " + to + " answered " + status
                                + ": " + conn.bodyText());
                    }
                    while (readers[to].seenAt(k) == Long.MIN_VALUE) {
                        if (System.nanoTime() > deadline) {
                            throw new IllegalStateException("a probe from hub " + from + " did not reach hub " + to
                                    + " within 60 s");
                        }
                        Thread.sleep(20);
                    }
                }
            } finally {
                conn.close();
            }
        }
        BenchSupport.progress(err, "every hub delivers to every other");
    }

    /** What the reader of inbox {@code i} has seen. */
    InboxArrivals arrivals(int i) {
        return readers[i];
    }

    /**
     * Runs the senders through the warm-up, then a measured window of {@code seconds},
     * stops them, waits up to {@code drainSeconds} for the streams to catch up, and computes
     * the figures. {@code atStart} and {@code atEnd} run at the window's edges.
     */
    LoadResult measure(Warmup warmup, int seconds, int drainSeconds, LoadResult.Edge atStart, LoadResult.Edge atEnd)
            throws Exception {
        byte[][] bodies = requestBodies();
        ArrivalKey key = arrivalKey();
        int g = hubs.size();
        if (batch > 1 && g > 1) {
            throw new IllegalStateException("batches are measured on one hub");
        }
        byte[][] batched = batch > 1 ? batches(bodies, batch) : bodies;
        ClosedLoopSender[] workers = new ClosedLoopSender[senders];
        for (int i = 0; i < senders; i++) {
            Endpoint at = hubs.get(i % g);
            int home = i % g;
            int[] targets = java.util.stream.IntStream.range(0, inboxes).filter(t -> g == 1 || t % g != home).toArray();
            if (targets.length == 0) {
                throw new IllegalStateException("sender " + i + " has no inbox on another hub");
            }
            byte[][] mine = new byte[targets.length][];
            for (int t = 0; t < targets.length; t++) {
                mine[t] = bodies[targets[t]];
            }
            if (batch > 1) {
                mine = batched; // one hub: every sender's bodies are all of them, built once
            }
            HttpConnection conn = new HttpConnection(at.host(), at.port(), 30_000);
            byte[] head = HttpConnection.head("POST", batch > 1 ? "/v1/messages:batch" : "/v1/messages",
                    conn.hostHeader(), senderTokens[i], "application/json", mine[0].length);
            workers[i] = new ClosedLoopSender(i, conn, head, mine, targets, key, batch);
        }
        BenchSupport.progress(err, "sending: " + senders + " senders -> " + inboxes + " inboxes"
                + (batch > 1 ? ", batches of " + batch : "") + ", warm-up " + warmup.describe() + ", window " + seconds + " s");
        return LoadResult.measure(workers, "bench-send", readers, warmup, seconds, drainSeconds, atStart, atEnd);
    }

    /** Seqs on one hub; envelope ids across hubs, where the 202 has no seq. */
    private ArrivalKey arrivalKey() {
        return hubs.size() > 1 ? ArrivalKey.ENVELOPE_ID : ArrivalKey.SEQ;
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
