package dev.parley.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.bench.http.HttpConnection;
import dev.parley.server.Hub;
import dev.parley.server.HubConfig;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * A hub for one bench run, on a temporary data directory that is removed at {@link #close()}:
 * either started in this JVM ({@link #inProcess}) or as a child process running
 * {@code parley serve} ({@link #child}), whose memory and CPU are then its own (the bench
 * client's sockets and threads do not count). Gives the admin token, an admin connection,
 * node creation (also many at once) and {@code /metrics} samples.
 */
public final class BenchHub implements AutoCloseable {
    /**
     * A bench opens all its connections (thousands of streams) from one address, and its
     * {@link HttpConnection} never retries a request on a connection the hub closed while it
     * idled: the per-address cap and the idle timeout are lifted.
     */
    private static final int BENCH_CONNECTIONS = 1_000_000;
    private static final Duration BENCH_IDLE = Duration.ofHours(1);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path dir;
    private final Hub hub;            // in-process, or null
    private final List<String> command; // child: the command line, or null
    private final Map<String, String> env; // child: added to its environment
    private final Path log;           // child: its stdout and stderr
    private Process process;          // child, or null
    private final String host;
    private final int port;
    private final String adminToken;
    private final HttpConnection admin;

    private BenchHub(Path dir, Hub hub, List<String> command, Map<String, String> env, Path log, Process process,
                     String host, int port, String adminToken) {
        this.dir = dir;
        this.hub = hub;
        this.command = command;
        this.env = env;
        this.log = log;
        this.process = process;
        this.host = host;
        this.port = port;
        this.adminToken = adminToken;
        this.admin = new HttpConnection(host, port, 60_000);
    }

    /**
     * Starts a hub in this JVM on a fresh temporary directory and any free port. The node
     * rate limit is raised so far that a bench's senders are never throttled (the limiter
     * itself still runs on every request); {@code customize} may change anything further.
     */
    public static BenchHub inProcess(UnaryOperator<HubConfig> customize) throws IOException {
        Path dir = Files.createTempDirectory("parley-bench-");
        try {
            HubConfig config = customize.apply(HubConfig.defaults(dir).withPort(0)
                    .withNodeRate(1_000_000, 10_000_000).withTransport(benchTransport()));
            Hub hub = Hub.start(config);
            return new BenchHub(dir, hub, null, Map.of(), null, null, "127.0.0.1", hub.port(), hub.adminToken());
        } catch (RuntimeException e) {
            BenchSupport.deleteTree(dir);
            throw e;
        }
    }

    private static HubConfig.Transport benchTransport() {
        HubConfig.Transport defaults = HubConfig.Transport.DEFAULTS;
        return new HubConfig.Transport(BENCH_IDLE, defaults.headerTimeout(), defaults.bodyTimeout(), BENCH_CONNECTIONS);
    }

    /** {@link #inProcess(UnaryOperator)} with nothing changed. */
    public static BenchHub inProcess() throws IOException {
        return inProcess(c -> c);
    }

    /**
     * Starts {@code parley serve} as a child process, as {@code serve} says, on a fresh temporary
     * directory and a free port, waits until {@code /healthz} answers, and returns.
     * {@code serveArgs} are added to {@code serve} (e.g. {@code --policy F});
     * {@code --rate 1000000 --burst 10000000} is passed unless {@code serveArgs} sets a rate.
     * {@code env} is added to its environment (in which no {@code OTEL_} variable of this
     * process's is left), {@code jvmArgs} go to the child JVM. When {@code openFiles} &gt; 0 the
     * child runs under {@code bash -c 'ulimit -n <openFiles>; exec java …'} (the limit actually
     * in force is {@link #openFilesLimit()}).
     */
    public static BenchHub child(ParleyServe serve, List<String> serveArgs, Map<String, String> env,
                                 List<String> jvmArgs, int openFiles) throws IOException {
        Path dir = Files.createTempDirectory("parley-bench-");
        try {
            Path data = Files.createDirectories(dir.resolve("data"));
            Path log = dir.resolve("hub.log");
            int port = BenchSupport.freePort();
            String token = "pa_bench-" + HexFormat.of().formatHex(randomBytes(16));
            List<String> args = new ArrayList<>(List.of("--data", data.toString(), "--host", "127.0.0.1", "--port",
                    Integer.toString(port)));
            if (!serveArgs.contains("--rate")) {
                args.addAll(List.of("--rate", "1000000", "--burst", "10000000"));
            }
            if (!serveArgs.contains("--max-connections-per-address")) {
                args.addAll(List.of("--max-connections-per-address", Integer.toString(BENCH_CONNECTIONS),
                        "--idle-timeout", BENCH_IDLE.toSeconds() + "s"));
            }
            args.addAll(serveArgs);
            List<String> cmd = new ArrayList<>();
            if (openFiles > 0) {
                cmd.addAll(List.of("bash", "-c", "ulimit -n " + openFiles + " 2>/dev/null || ulimit -n hard; exec \"$@\"",
                        "parley-hub"));
            }
            cmd.addAll(serve.commandLine(jvmArgs, args));
            BenchHub bench = new BenchHub(dir, null, List.copyOf(cmd), Map.copyOf(env), log, null, "127.0.0.1", port,
                    token);
            bench.spawn();
            return bench;
        } catch (IOException | RuntimeException e) {
            BenchSupport.deleteTree(dir);
            throw e;
        }
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        new SecureRandom().nextBytes(b);
        return b;
    }

    private void spawn() throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command);
        // a bench's hub exports spans only where the bench says so, not where the shell running it does
        pb.environment().keySet().removeIf(name -> name.startsWith("OTEL_"));
        pb.environment().putAll(env);
        pb.environment().put("PARLEY_ADMIN_TOKEN", adminToken);
        pb.redirectErrorStream(true);
        pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        Process p = pb.start();
        process = p;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            if (!p.isAlive()) {
                throw new IOException("the hub exited with " + p.exitValue() + " before it answered /healthz"
                        + logTail(4000));
            }
            if (healthy()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                p.destroyForcibly();
                throw new IOException("the hub did not answer /healthz within 60 s" + logTail(4000));
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting for the hub", e);
            }
        }
    }

    private boolean healthy() {
        HttpConnection c = new HttpConnection(host, port, 2000);
        try {
            return c.call("GET", "/healthz", null, null).status() == 200;
        } catch (IOException e) {
            return false;
        } finally {
            c.close();
        }
    }

    /** A child hub: SIGKILL now and wait for it to die. */
    public void kill() throws InterruptedException {
        requireChild();
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
        admin.close();
    }

    /** A child hub: start it again on the same data directory and port (after {@link #kill()}). */
    public void restart() throws IOException {
        requireChild();
        if (process.isAlive()) {
            throw new IllegalStateException("the hub is still running");
        }
        spawn();
    }

    private void requireChild() {
        if (process == null) {
            throw new IllegalStateException("not a child-process hub");
        }
    }

    public boolean isChild() {
        return command != null;
    }

    /** The hub's process id (this JVM's for an in-process hub). */
    public long pid() {
        return process != null ? process.pid() : ProcessHandle.current().pid();
    }

    /**
     * The {@code -X} options the hub's JVM runs with, as its process was started (a child's
     * command line, this JVM's input arguments in process): what a report says the hub ran with.
     */
    public List<String> javaOptions() {
        List<String> args = process != null ? Machine.commandLine(process.pid())
                : java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments();
        return args.stream().filter(a -> a.startsWith("-X")).toList();
    }

    public String host() {
        return host;
    }

    public int port() {
        return port;
    }

    public String url() {
        return "http://" + host + ":" + port;
    }

    public String adminToken() {
        return adminToken;
    }

    /** The temporary directory (a child hub's data is in {@code data/} under it). */
    public Path dir() {
        return dir;
    }

    /** The soft open-files limit of the hub's process. */
    public java.util.OptionalLong openFilesLimit() {
        return Machine.openFilesLimit(pid());
    }

    /** The admin's keep-alive connection (not thread-safe: setup code on one thread). */
    public HttpConnection admin() {
        return admin;
    }

    /** An admin call on the shared connection. */
    public HttpConnection.Response call(String method, String target, String jsonBody) throws IOException {
        return admin.call(method, target, adminToken, jsonBody);
    }

    /** An admin call that must answer {@code expected}. */
    public String callExpect(int expected, String method, String target, String jsonBody) throws IOException {
        HttpConnection.Response res = call(method, target, jsonBody);
        if (res.status() != expected) {
            throw new IllegalStateException(method + " " + target + " answered " + res.status() + ": " + res.body());
        }
        return res.body();
    }

    /** A node to create: id, parent (or null for a root), labels. */
    public record NodeSpec(String id, String parent, Map<String, String> labels) {
        public NodeSpec(String id, String parent) {
            this(id, parent, Map.of());
        }
    }

    /** Creates one node (kind {@code external}) and returns its token. */
    public String createNode(NodeSpec spec) throws IOException {
        return createNode(admin, adminToken, spec);
    }

    /** Creates one node (kind {@code external}) and returns its token. */
    public String createNode(String id, String parent) throws IOException {
        return createNode(new NodeSpec(id, parent));
    }

    /**
     * Creates many nodes over {@code connections} admin connections at once, in list order
     * per connection (create parents in an earlier call). Returns the tokens in list order.
     */
    public String[] createNodes(List<NodeSpec> specs, int connections) throws IOException, InterruptedException {
        String[] tokens = new String[specs.size()];
        forEach(specs.size(), connections, (conn, i) -> tokens[i] = createNode(conn, adminToken, specs.get(i)));
        return tokens;
    }

    /** Work on index i with an admin connection of its own thread. */
    public interface IndexedCall {
        void call(HttpConnection admin, int index) throws IOException;
    }

    /**
     * Runs {@code call} for indexes 0..count-1 on {@code connections} virtual threads, each
     * with its own admin connection; the first failure is rethrown.
     */
    public void forEach(int count, int connections, IndexedCall call) throws IOException, InterruptedException {
        AtomicInteger next = new AtomicInteger();
        List<Future<?>> futures = new ArrayList<>();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int c = 0; c < Math.max(1, Math.min(connections, count)); c++) {
                futures.add(pool.submit(() -> {
                    HttpConnection conn = new HttpConnection(host, port, 60_000);
                    try {
                        for (int i = next.getAndIncrement(); i < count; i = next.getAndIncrement()) {
                            call.call(conn, i);
                        }
                    } finally {
                        conn.close();
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                try {
                    f.get();
                } catch (java.util.concurrent.ExecutionException e) {
                    next.set(count);
                    Throwable cause = e.getCause();
                    if (cause instanceof IOException io) {
                        throw io;
                    }
                    if (cause instanceof RuntimeException re) {
                        throw re;
                    }
                    throw new IllegalStateException(cause);
                }
            }
        }
    }

    private static String createNode(HttpConnection conn, String adminToken, NodeSpec spec) throws IOException {
        ObjectNode body = JSON.createObjectNode();
        body.put("id", spec.id());
        body.put("kind", "external");
        if (spec.parent() != null) {
            body.put("parent", spec.parent());
        }
        if (!spec.labels().isEmpty()) {
            ObjectNode labels = body.putObject("labels");
            spec.labels().forEach(labels::put);
        }
        HttpConnection.Response res = conn.call("POST", "/v1/nodes", adminToken, JSON.writeValueAsString(body));
        if (res.status() != 201) {
            throw new IllegalStateException("POST /v1/nodes " + body + " answered " + res.status() + ": " + res.body());
        }
        JsonNode token = JSON.readTree(res.body()).get("token");
        if (token == null || !token.isTextual()) {
            throw new IllegalStateException("POST /v1/nodes answered without a token: " + res.body());
        }
        return token.asText();
    }

    /** Sample values from GET /metrics, summed over label sets ({@link BenchSupport#metrics}). */
    public Map<String, Double> metrics() throws IOException {
        return BenchSupport.metrics(admin, adminToken);
    }

    /**
     * Heap figures of the hub's JVM in bytes: {used, committed}. In process: the memory
     * bean; a child: {@code jcmd <pid> GC.heap_info}. Null when unavailable.
     */
    public long[] heap() {
        if (!isChild()) {
            var heap = java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
            return new long[] {heap.getUsed(), heap.getCommitted()};
        }
        String out = jcmd("GC.heap_info");
        if (out == null) {
            return null;
        }
        // " garbage-first heap   total reserved 6029312K, committed 262144K, used 123456K [0x…"
        var m = java.util.regex.Pattern.compile("committed (\\d+)K, used (\\d+)K").matcher(out);
        return m.find() ? new long[] {Long.parseLong(m.group(2)) * 1024, Long.parseLong(m.group(1)) * 1024} : null;
    }

    /** Runs a full GC in the hub's JVM (a child through jcmd). */
    public void gc() {
        if (isChild()) {
            jcmd("GC.run");
        } else {
            System.gc();
        }
    }

    /**
     * The top {@code top} lines of the hub JVM's class histogram of live objects (a full GC
     * first), or null: for a child through {@code jcmd GC.class_histogram}; in process the
     * same command against this JVM.
     */
    public String classHistogram(int top) {
        String out = jcmd("GC.class_histogram");
        if (out == null) {
            return null;
        }
        String[] lines = out.split("\n");
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < lines.length && i < top + 3; i++) {
            sb.append(lines[i]).append('\n');
        }
        for (int i = lines.length - 1; i >= 0 && i >= lines.length - 1; i--) {
            sb.append(lines[i]).append('\n'); // the "Total" line
        }
        return sb.toString();
    }

    /**
     * Starts a JDK Flight Recorder recording ({@code profile} settings) in the hub's JVM that
     * {@link #stopFlightRecording()} writes to {@code file}; false when jcmd failed.
     */
    public boolean startFlightRecording(Path file) {
        return jcmd("JFR.start", "name=parley-bench-hub", "settings=profile",
                "filename=" + file.toAbsolutePath()) != null;
    }

    /** Stops the recording of {@link #startFlightRecording} and writes its file. */
    public boolean stopFlightRecording() {
        return jcmd("JFR.stop", "name=parley-bench-hub") != null;
    }

    private String jcmd(String... what) {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        try {
            List<String> cmd = new ArrayList<>(List.of(jcmd.toString(), Long.toString(pid())));
            cmd.addAll(List.of(what));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0 ? out : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** The last {@code max} characters of a child hub's log ("" in process). */
    public String logTail(int max) {
        return log == null ? "" : logTail(log, max);
    }

    /** The last {@code max} bytes of the hub log in {@code log}, headed for a failure message. */
    public static String logTail(Path log, int max) {
        try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
            long len = f.length();
            long from = Math.max(0, len - max);
            byte[] b = new byte[(int) (len - from)];
            f.seek(from);
            f.readFully(b);
            return "\n--- hub log (tail) ---\n" + new String(b, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "\n(no hub log: " + e + ")";
        }
    }

    /** Stops the hub (a child: SIGTERM, then SIGKILL after 20 s) and removes the temporary directory. */
    @Override
    public void close() {
        admin.close();
        if (hub != null) {
            hub.close();
        }
        Process p = process;
        if (p != null && p.isAlive()) {
            p.destroy();
            try {
                if (!p.waitFor(20, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    p.waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        BenchSupport.deleteTree(dir);
    }

}
