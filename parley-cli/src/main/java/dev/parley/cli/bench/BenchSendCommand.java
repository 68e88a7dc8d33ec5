package dev.parley.cli.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.server.Hub;
import dev.parley.server.HubConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code parley bench send}: durable-send throughput and end-to-end latency.
 *
 * <p>Starts a hub in this process on a temporary data directory, creates one root node
 * ({@code bench-lead}) with M inbox nodes and N sender nodes as its children (siblings may
 * message each other), opens one SSE stream per inbox, then runs N senders, each on its own
 * keep-alive HTTP/1.1 connection, POSTing to {@code /v1/messages} in a closed loop (the next
 * send starts when the 202 arrives). The measured window follows a warm-up. Every accepted
 * envelope must then be seen on its inbox's stream; any that is not is reported as lost and
 * makes the command exit 1.
 */
@Command(name = "send", mixinStandardHelpOptions = true,
        description = {"Measure durable sends/s and end-to-end latency.",
                "",
                "Starts a hub in this process on a temporary directory (removed afterwards), creates M inbox "
                        + "nodes and N sender nodes, opens one SSE stream per inbox and runs N closed-loop senders, "
                        + "each on its own keep-alive connection. Prints sends/s over the measured window, latency "
                        + "from send start to the envelope's arrival on its stream, 202 latency and the hub's mean "
                        + "commit batch. Exits 1 when an accepted envelope never reached its stream."})
public final class BenchSendCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final byte[] SEQ_FIELD = "\"seq\":".getBytes(StandardCharsets.US_ASCII);
    private static final String LEAD = "bench-lead";

    @Spec
    CommandSpec spec;

    @Option(names = "--senders", defaultValue = "64",
            description = "Concurrent senders, each its own node and connection (default: ${DEFAULT-VALUE}).")
    int senders;

    @Option(names = "--inboxes", defaultValue = "64",
            description = "Inbox nodes, each read by one SSE stream (default: ${DEFAULT-VALUE}).")
    int inboxes;

    @Option(names = "--seconds", defaultValue = "10", description = "Measured window in seconds (default: ${DEFAULT-VALUE}).")
    int seconds;

    @Option(names = "--warmup", defaultValue = "2", description = "Warm-up before the window, seconds (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--size", defaultValue = "1024", description = "Bytes of text per message (default: ${DEFAULT-VALUE}).")
    int size;

    @Option(names = "--json", description = "Also print the results as one JSON object on the last line.")
    boolean json;

    @Option(names = "--quick", description = "A smoke run: no warm-up, 3 s measured, 16 senders, 16 inboxes "
            + "(options given explicitly still win).")
    boolean quick;

    @Option(names = "--drain-seconds", defaultValue = "15", hidden = true,
            description = "How long to wait for the streams to catch up after the senders stop.")
    int drainSeconds;

    private volatile boolean stop;

    @Override
    public Integer call() throws Exception {
        applyQuick();
        validate();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Path dir = Files.createTempDirectory("parley-bench-");
        Hub hub = null;
        List<Reader> readers = new ArrayList<>();
        HttpConnection admin = null;
        try {
            hub = Hub.start(HubConfig.defaults(dir).withPort(0));
            String host = URI.create(hub.url()).getHost();
            int port = hub.port();
            String adminToken = hub.adminToken();
            progress(err, "hub listening at " + hub.url() + " (data in " + dir + ")");
            admin = new HttpConnection(host, port, 30_000);

            createNode(admin, adminToken, LEAD, null);
            String[] inboxIds = new String[inboxes];
            String[] inboxTokens = new String[inboxes];
            for (int i = 0; i < inboxes; i++) {
                inboxIds[i] = String.format(Locale.ROOT, "bench-in-%04d", i);
                inboxTokens[i] = createNode(admin, adminToken, inboxIds[i], LEAD);
            }
            String[] senderTokens = new String[senders];
            for (int i = 0; i < senders; i++) {
                senderTokens[i] = createNode(admin, adminToken, String.format(Locale.ROOT, "bench-tx-%04d", i), LEAD);
            }
            progress(err, "created " + (1 + inboxes + senders) + " nodes");

            CountDownLatch ready = new CountDownLatch(inboxes);
            for (int i = 0; i < inboxes; i++) {
                Reader reader = new Reader(ready);
                reader.stream = new SseStream(host, port, "/v1/inbox/stream", inboxTokens[i], reader);
                readers.add(reader);
                reader.stream.open();
                Thread.ofPlatform().daemon().name("bench-sse-" + i).start(reader.stream);
            }
            if (!ready.await(15, TimeUnit.SECONDS)) {
                throw new IllegalStateException((inboxes - ready.getCount()) + " of " + inboxes
                        + " streams sent ': parley ready' within 15 s");
            }
            progress(err, "opened " + inboxes + " streams");

            // Request bodies are shared by all senders; ids have a fixed width so every body
            // (and so every sender's request head) has the same length.
            String text = text(size);
            byte[][] bodies = new byte[inboxes][];
            for (int i = 0; i < inboxes; i++) {
                ObjectNode body = JSON.createObjectNode();
                body.put("to", inboxIds[i]);
                body.put("text", text);
                bodies[i] = JSON.writeValueAsBytes(body);
                if (bodies[i].length != bodies[0].length) {
                    throw new IllegalStateException("request bodies differ in length");
                }
            }
            Sender[] workers = new Sender[senders];
            Thread[] threads = new Thread[senders];
            for (int i = 0; i < senders; i++) {
                HttpConnection conn = new HttpConnection(host, port, 30_000);
                byte[] head = HttpConnection.head("POST", "/v1/messages", conn.hostHeader(), senderTokens[i],
                        "application/json", bodies[0].length);
                workers[i] = new Sender(i, conn, head, bodies);
            }
            for (int i = 0; i < senders; i++) {
                threads[i] = Thread.ofPlatform().daemon().name("bench-send-" + i).start(workers[i]);
            }
            progress(err, "sending: " + senders + " senders -> " + inboxes + " inboxes, warm-up " + warmup
                    + " s, window " + seconds + " s");
            Thread.sleep(warmup * 1000L);
            Map<String, Double> m0 = metrics(admin, adminToken);
            long cpu0 = processCpuNanos();
            long[] machine0 = machineCpuTicks();
            long w0 = System.nanoTime();
            Thread.sleep(seconds * 1000L);
            long w1 = System.nanoTime();
            long cpu1 = processCpuNanos();
            long[] machine1 = machineCpuTicks();
            Map<String, Double> m1 = metrics(admin, adminToken);
            stop = true;
            for (Thread t : threads) {
                t.join(60_000);
            }

            long acceptedTotal = 0;
            for (Sender s : workers) {
                acceptedTotal += s.n;
            }
            long drainDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(drainSeconds);
            while (seenTotal(readers) < acceptedTotal && System.nanoTime() < drainDeadline) {
                Thread.sleep(20);
            }

            Result r = compute(workers, readers, w0, w1, acceptedTotal);
            r.meanBatch = delta(m0, m1, "parley_commit_batch_size_sum") / delta(m0, m1, "parley_commit_batch_size_count");
            r.hubAccepted = delta(m0, m1, "parley_sends_accepted_total");
            r.commitsPerSecond = delta(m0, m1, "parley_commit_batch_size_count") / r.windowSeconds;
            r.meanCommitMs = 1000.0 * delta(m0, m1, "parley_commit_latency_seconds_sum")
                    / delta(m0, m1, "parley_commit_latency_seconds_count");
            r.cpuPercent = cpu0 < 0 || cpu1 < 0 ? Double.NaN
                    : 100.0 * (cpu1 - cpu0) / (double) (w1 - w0) / Runtime.getRuntime().availableProcessors();
            if (machine0 != null && machine1 != null && machine1[0] > machine0[0]) {
                r.machinePercent = 100.0 * ((machine1[0] - machine0[0]) - (machine1[1] - machine0[1]))
                        / (machine1[0] - machine0[0]);
            }
            print(out, r);
            return r.lost == 0 && r.accepted > 0 ? 0 : 1;
        } finally {
            for (Reader reader : readers) {
                if (reader.stream != null) {
                    reader.stream.close();
                }
            }
            if (admin != null) {
                admin.close();
            }
            if (hub != null) {
                hub.close();
            }
            deleteTree(dir);
        }
    }

    private void applyQuick() {
        if (!quick) {
            return;
        }
        var parsed = spec.commandLine().getParseResult();
        if (!parsed.hasMatchedOption("--senders")) {
            senders = 16;
        }
        if (!parsed.hasMatchedOption("--inboxes")) {
            inboxes = 16;
        }
        if (!parsed.hasMatchedOption("--warmup")) {
            warmup = 0;
        }
        if (!parsed.hasMatchedOption("--seconds")) {
            seconds = 3;
        }
    }

    private void validate() {
        if (senders < 1 || senders > 9999) {
            throw new ParameterException(spec.commandLine(), "--senders must be 1..9999");
        }
        if (inboxes < 1 || inboxes > 9999) {
            throw new ParameterException(spec.commandLine(), "--inboxes must be 1..9999");
        }
        if (seconds < 1) {
            throw new ParameterException(spec.commandLine(), "--seconds must be at least 1");
        }
        if (warmup < 0) {
            throw new ParameterException(spec.commandLine(), "--warmup must not be negative");
        }
        if (size < 1 || size > 200_000) {
            throw new ParameterException(spec.commandLine(), "--size must be 1..200000 bytes");
        }
    }

    private static void progress(PrintWriter err, String message) {
        err.println("bench: " + message);
        err.flush();
    }

    private static String text(int n) {
        String alphabet = "parley-bench-0123456789-abcdefghijklmnopqrstuvwxyz ";
        StringBuilder sb = new StringBuilder(n);
        for (int i = 0; i < n; i++) {
            sb.append(alphabet.charAt(i % alphabet.length()));
        }
        return sb.toString();
    }

    private static String createNode(HttpConnection admin, String adminToken, String id, String parent)
            throws IOException {
        ObjectNode body = JSON.createObjectNode();
        body.put("id", id);
        body.put("kind", "external");
        if (parent != null) {
            body.put("parent", parent);
        }
        HttpConnection.Response res = admin.call("POST", "/v1/nodes", adminToken, JSON.writeValueAsString(body));
        if (res.status() != 201) {
            throw new IllegalStateException("POST /v1/nodes " + body + " answered " + res.status() + ": " + res.body());
        }
        JsonNode token = JSON.readTree(res.body()).get("token");
        if (token == null || !token.isTextual()) {
            throw new IllegalStateException("POST /v1/nodes answered without a token: " + res.body());
        }
        return token.asText();
    }

    /** Sample values from GET /metrics, summed over label sets; missing series read as NaN. */
    private static Map<String, Double> metrics(HttpConnection admin, String adminToken) throws IOException {
        HttpConnection.Response res = admin.call("GET", "/metrics", adminToken, null);
        Map<String, Double> values = new TreeMap<>();
        if (res.status() != 200) {
            return values;
        }
        for (String line : res.body().split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int nameEnd = 0;
            while (nameEnd < line.length() && line.charAt(nameEnd) != ' ' && line.charAt(nameEnd) != '{') {
                nameEnd++;
            }
            String name = line.substring(0, nameEnd);
            int valueStart = nameEnd;
            if (nameEnd < line.length() && line.charAt(nameEnd) == '{') {
                valueStart = line.indexOf('}', nameEnd) + 1;
                if (valueStart == 0) {
                    continue;
                }
            }
            String[] rest = line.substring(valueStart).trim().split("\\s+");
            try {
                values.merge(name, Double.parseDouble(rest[0]), Double::sum);
            } catch (NumberFormatException | ArrayIndexOutOfBoundsException ignored) {
                // not a sample line we understand
            }
        }
        return values;
    }

    private static double delta(Map<String, Double> before, Map<String, Double> after, String name) {
        Double a = before.get(name);
        Double b = after.get(name);
        return a == null || b == null ? Double.NaN : b - a;
    }

    private static long processCpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    /** {total, idle} jiffies from /proc/stat (Linux), or null. */
    private static long[] machineCpuTicks() {
        try {
            String first = Files.readAllLines(Path.of("/proc/stat")).getFirst();
            String[] f = first.trim().split("\\s+");
            if (!f[0].equals("cpu") || f.length < 6) {
                return null;
            }
            long total = 0;
            for (int i = 1; i < Math.min(f.length, 9); i++) { // user..steal; guest is already in user
                total += Long.parseLong(f[i]);
            }
            long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
            return new long[] {total, idle};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static long seenTotal(List<Reader> readers) {
        long total = 0;
        for (Reader r : readers) {
            total += r.count;
        }
        return total;
    }

    // ---- results ----

    static final class Result {
        long accepted;        // 202s whose answer arrived inside the window
        double windowSeconds;
        long acceptedTotal;   // 202s over the whole run (warm-up and tail included)
        long seen;            // of those, seen on a stream
        long lost;
        long duplicatesOnStream;
        long errors;
        Map<String, Long> errorKinds = new TreeMap<>();
        long[] e2e;           // nanos, sorted, sends started inside the window
        long[] ack;           // nanos, sorted, sends started inside the window
        double meanBatch;
        double hubAccepted;
        double commitsPerSecond;
        double meanCommitMs;
        double cpuPercent;
        double machinePercent = Double.NaN;
    }

    private Result compute(Sender[] workers, List<Reader> readers, long w0, long w1, long acceptedTotal) {
        Result r = new Result();
        r.windowSeconds = (w1 - w0) / 1e9;
        r.acceptedTotal = acceptedTotal;
        long inWindowStarts = 0;
        for (Sender s : workers) {
            for (int k = 0; k < s.n; k++) {
                if (s.start[k] >= w0 && s.start[k] < w1) {
                    inWindowStarts++;
                }
            }
        }
        long[] e2e = new long[(int) inWindowStarts];
        long[] ack = new long[(int) inWindowStarts];
        int ne = 0;
        int na = 0;
        for (Sender s : workers) {
            r.errors += s.errors;
            s.errorKinds.forEach((k, v) -> r.errorKinds.merge(k, v, Long::sum));
            for (int k = 0; k < s.n; k++) {
                long start = s.start[k];
                long answered = s.ack[k];
                if (answered >= w0 && answered < w1) {
                    r.accepted++;
                }
                long seenAt = readers.get(s.inbox[k]).seenAt(s.seq[k]);
                if (seenAt == Long.MIN_VALUE) {
                    r.lost++;
                } else {
                    r.seen++;
                }
                if (start >= w0 && start < w1) {
                    ack[na++] = answered - start;
                    if (seenAt != Long.MIN_VALUE) {
                        e2e[ne++] = seenAt - start;
                    }
                }
            }
        }
        for (Reader reader : readers) {
            r.duplicatesOnStream += reader.duplicates;
        }
        r.e2e = Arrays.copyOf(e2e, ne);
        r.ack = Arrays.copyOf(ack, na);
        Arrays.sort(r.e2e);
        Arrays.sort(r.ack);
        return r;
    }

    private static double pct(long[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))] / 1e6;
    }

    private static double max(long[] sorted) {
        return sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1] / 1e6;
    }

    private void print(PrintWriter out, Result r) throws IOException {
        double rate = r.accepted / r.windowSeconds;
        out.printf(Locale.ROOT, "parley bench send: %d senders -> %d inboxes, %d-byte text, warm-up %d s, window %.2f s%n",
                senders, inboxes, size, warmup, r.windowSeconds);
        out.printf(Locale.ROOT, "  %-34s %s%n", "metric", "value");
        out.printf(Locale.ROOT, "  %-34s %,d%n", "accepted sends (202) in window", r.accepted);
        out.printf(Locale.ROOT, "  %-34s %,.0f%n", "sends/s", rate);
        out.printf(Locale.ROOT, "  %-34s %s ms%n", "end-to-end p50 / p99 / max", triple(r.e2e));
        out.printf(Locale.ROOT, "  %-34s %s ms%n", "202 latency p50 / p99 / max", triple(r.ack));
        out.printf(Locale.ROOT, "  %-34s %s%n", "mean commit batch (writes/commit)",
                Double.isNaN(r.meanBatch) ? "n/a (no parley_commit_batch_size in /metrics)"
                        : String.format(Locale.ROOT, "%.1f", r.meanBatch));
        if (!Double.isNaN(r.meanCommitMs)) {
            out.printf(Locale.ROOT, "  %-34s %,.0f/s, %.2f ms each (writer busy %.0f%%)%n", "commits",
                    r.commitsPerSecond, r.meanCommitMs, r.commitsPerSecond * r.meanCommitMs / 10.0);
        }
        out.printf(Locale.ROOT, "  %-34s %,d%s%n", "errors", r.errors, r.errorKinds.isEmpty() ? "" : " " + r.errorKinds);
        out.printf(Locale.ROOT, "  %-34s %,d of %,d accepted%n", "lost (accepted, never streamed)", r.lost,
                r.acceptedTotal);
        if (r.duplicatesOnStream > 0) {
            out.printf(Locale.ROOT, "  %-34s %,d%n", "duplicate frames on streams", r.duplicatesOnStream);
        }
        if (!Double.isNaN(r.cpuPercent)) {
            out.printf(Locale.ROOT, "  %-34s %.0f%% of %d cores%n", "process CPU (hub + bench) in window",
                    r.cpuPercent, Runtime.getRuntime().availableProcessors());
        }
        if (!Double.isNaN(r.machinePercent)) {
            out.printf(Locale.ROOT, "  %-34s %.0f%% (other processes about %.0f%%)%n", "machine CPU busy in window",
                    r.machinePercent, Math.max(0, r.machinePercent - r.cpuPercent));
        }
        if (json) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("senders", senders);
            o.put("inboxes", inboxes);
            o.put("size", size);
            o.put("warmupSeconds", warmup);
            o.put("windowSeconds", round(r.windowSeconds));
            o.put("accepted", r.accepted);
            o.put("sendsPerSecond", round(rate));
            o.put("e2eP50Ms", round(pct(r.e2e, 50)));
            o.put("e2eP99Ms", round(pct(r.e2e, 99)));
            o.put("e2eMaxMs", round(max(r.e2e)));
            o.put("ackP50Ms", round(pct(r.ack, 50)));
            o.put("ackP99Ms", round(pct(r.ack, 99)));
            o.put("ackMaxMs", round(max(r.ack)));
            o.put("meanCommitBatch", round(r.meanBatch));
            o.put("hubAcceptedInWindow", round(r.hubAccepted));
            o.put("commitsPerSecond", round(r.commitsPerSecond));
            o.put("meanCommitMs", round(r.meanCommitMs));
            o.put("errors", r.errors);
            o.put("errorKinds", r.errorKinds);
            o.put("acceptedTotal", r.acceptedTotal);
            o.put("seen", r.seen);
            o.put("lost", r.lost);
            o.put("duplicatesOnStream", r.duplicatesOnStream);
            o.put("cpuPercent", round(r.cpuPercent));
            o.put("machineCpuPercent", round(r.machinePercent));
            o.put("cores", Runtime.getRuntime().availableProcessors());
            out.println(JSON.writeValueAsString(o));
        }
        out.flush();
    }

    private static String triple(long[] sorted) {
        return String.format(Locale.ROOT, "%.2f / %.2f / %.2f", pct(sorted, 50), pct(sorted, 99), max(sorted));
    }

    private static Double round(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? null : Math.round(v * 1000.0) / 1000.0;
    }

    private static void deleteTree(Path dir) {
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
                    Files.deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException ignored) {
            // best effort: it is a temporary directory
        }
    }

    // ---- workers ----

    /** One closed-loop sender: its own node token and keep-alive connection. */
    private final class Sender implements Runnable {
        private final int index;
        private final HttpConnection conn;
        private final byte[] head;
        private final byte[][] bodies;
        long[] start = new long[1 << 14];
        long[] ack = new long[1 << 14];
        int[] inbox = new int[1 << 14];
        long[] seq = new long[1 << 14];
        int n;
        long errors;
        final Map<String, Long> errorKinds = new TreeMap<>();

        Sender(int index, HttpConnection conn, byte[] head, byte[][] bodies) {
            this.index = index;
            this.conn = conn;
            this.head = head;
            this.bodies = bodies;
        }

        @Override
        public void run() {
            int m = bodies.length;
            long k = index;
            try {
                while (!stop) {
                    int target = (int) (k++ % m);
                    long t0 = System.nanoTime();
                    int status;
                    try {
                        status = conn.exchange(head, bodies[target]);
                    } catch (IOException e) {
                        error(e.getClass().getSimpleName());
                        sleepQuietly();
                        continue;
                    }
                    long t1 = System.nanoTime();
                    if (status == 202) {
                        long s = conn.bodyLongField(SEQ_FIELD);
                        if (s < 0) {
                            error("202 without seq");
                            continue;
                        }
                        record(t0, t1, target, s);
                    } else {
                        error("HTTP " + status);
                        if (status == 429 || status >= 500) {
                            sleepQuietly();
                        }
                    }
                }
            } finally {
                conn.close();
            }
        }

        private void record(long t0, long t1, int target, long s) {
            if (n == start.length) {
                int cap = n * 2;
                start = Arrays.copyOf(start, cap);
                ack = Arrays.copyOf(ack, cap);
                inbox = Arrays.copyOf(inbox, cap);
                seq = Arrays.copyOf(seq, cap);
            }
            start[n] = t0;
            ack[n] = t1;
            inbox[n] = target;
            seq[n] = s;
            n++;
        }

        private void error(String kind) {
            errors++;
            errorKinds.merge(kind, 1L, Long::sum);
        }

        private void sleepQuietly() {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                stop = true;
            }
        }
    }

    /** Records, per inbox, when each seq arrived on the stream. */
    private static final class Reader implements SseStream.Listener {
        private final CountDownLatch ready;
        private final LongLongMap arrivals = new LongLongMap(1 << 14);
        SseStream stream;
        volatile long count;
        long duplicates;
        private boolean sawReady;

        Reader(CountDownLatch ready) {
            this.ready = ready;
        }

        @Override
        public void onComment(String text) {
            if (!sawReady && text.contains("parley ready")) {
                sawReady = true;
                ready.countDown();
            }
        }

        @Override
        public void onEvent(long id, String event, byte[] data, int dataLength) {
            long now = System.nanoTime();
            if (id < 0) {
                return;
            }
            synchronized (this) {
                if (!arrivals.putIfAbsent(id, now)) {
                    duplicates++;
                }
                count = arrivals.size();
            }
        }

        /** When the seq was seen, or Long.MIN_VALUE. */
        synchronized long seenAt(long seq) {
            return arrivals.get(seq, Long.MIN_VALUE);
        }
    }
}
