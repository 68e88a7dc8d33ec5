package dev.parley.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
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
@Command(name = "send", mixinStandardHelpOptions = true, resourceBundle = "dev.parley.bench.BenchSendCommand",
        description = {"Measure durable sends/s and end-to-end latency.",
                "",
                "Starts a hub in this process on a temporary directory (removed afterwards), creates M inbox "
                        + "nodes and N sender nodes, opens one SSE stream per inbox and runs N closed-loop senders, "
                        + "each on its own keep-alive connection. Prints sends/s over the measured window, latency "
                        + "from send start to the envelope's arrival on its stream, 202 latency and the hub's mean "
                        + "commit batch. Exits 1 when an accepted envelope never reached its stream."})
public final class BenchSendCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Spec
    CommandSpec spec;

    @Mixin
    SenderOptions load = new SenderOptions();

    @Mixin
    InboxOptions targets = new InboxOptions();

    @Mixin
    WindowOptions window = new WindowOptions();

    @Mixin
    DrainOption drain = new DrainOption();

    @Mixin
    OutputOptions output = new OutputOptions();

    @Mixin
    QuickOption quick = new QuickOption();

    @Mixin
    JitSettleOptions settle = new JitSettleOptions();

    @Option(names = "--wal-frames", description = "Also count, at the window's end, the frames (pages) the store's "
            + "write-ahead log holds a send, by the table or index each belongs to (read from the running hub's log).")
    boolean walFrames;

    @Override
    public Integer call() throws Exception {
        quick.unlessGiven("--senders", () -> load.senders = 16).unlessGiven("--inboxes", () -> targets.inboxes = 16)
                .unlessGiven("--warmup", () -> window.warmup = 0).unlessGiven("--seconds", () -> window.seconds = 3)
                .unlessGiven("--jit-settle", () -> settle.jitSettle = false);
        load.validate();
        targets.validate();
        window.validate();
        settle.validate();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try (BenchHub hub = BenchHub.inProcess();
             ParleyWorkload work = new ParleyWorkload(load.senders, targets.inboxes, load.size, err)) {
            BenchSupport.progress(err, "hub listening at " + hub.url() + " (data in " + hub.dir() + ")");
            work.createNodes(hub);
            work.openStreams(hub.host(), hub.port());
            List<Map<String, Double>> m = new ArrayList<>(List.of(Map.of(), Map.of()));
            long[] cpu = new long[2];
            long[][] machine = new long[2][];
            Machine.ThreadTicks[] threads = new Machine.ThreadTicks[2];
            WalFrames.Count[] wal = new WalFrames.Count[1];
            LoadResult r = work.measure(settle.warmup(window.warmup), window.seconds, drain.seconds, w0 -> {
                m.set(0, hub.metrics());
                cpu[0] = BenchSupport.processCpuNanos();
                machine[0] = BenchSupport.machineCpuTicks();
                threads[0] = Machine.ThreadTicks.now();
            }, w1 -> {
                cpu[1] = BenchSupport.processCpuNanos();
                machine[1] = BenchSupport.machineCpuTicks();
                threads[1] = Machine.ThreadTicks.now();
                m.set(1, hub.metrics());
                if (walFrames) { // while the senders go on, so the log is as the window left it
                    wal[0] = countWal(hub.dir(), err);
                }
            });
            r.meanBatch = BenchSupport.delta(m.get(0), m.get(1), "parley_commit_batch_size_sum")
                    / BenchSupport.delta(m.get(0), m.get(1), "parley_commit_batch_size_count");
            r.hubAccepted = BenchSupport.delta(m.get(0), m.get(1), "parley_sends_accepted_total");
            r.commitsPerSecond = BenchSupport.delta(m.get(0), m.get(1), "parley_commit_batch_size_count") / r.windowSeconds;
            r.meanCommitMs = 1000.0 * BenchSupport.delta(m.get(0), m.get(1), "parley_commit_latency_seconds_sum")
                    / BenchSupport.delta(m.get(0), m.get(1), "parley_commit_latency_seconds_count");
            r.foldsPerSecond = BenchSupport.delta(m.get(0), m.get(1), "parley_fold_latency_seconds_count") / r.windowSeconds;
            r.meanFoldMs = 1000.0 * BenchSupport.delta(m.get(0), m.get(1), "parley_fold_latency_seconds_sum")
                    / BenchSupport.delta(m.get(0), m.get(1), "parley_fold_latency_seconds_count");
            r.cpuPercent = cpu[0] < 0 || cpu[1] < 0 ? Double.NaN
                    : 100.0 * (cpu[1] - cpu[0]) / (r.windowSeconds * 1e9) / Runtime.getRuntime().availableProcessors();
            r.machinePercent = BenchSupport.machineBusyPercent(machine[0], machine[1]);
            if (cpu[0] >= 0 && cpu[1] >= 0 && r.accepted > 0) {
                r.cpuMicrosPerSend = threads[0].microsEachUntil(threads[1], cpu[1] - cpu[0], r.accepted);
            }
            print(out, r, wal[0]);
            return r.lost == 0 && r.accepted > 0 ? 0 : 1;
        }
    }

    /** The store's log counted; null, said on {@code err}, when it cannot be. */
    private static WalFrames.Count countWal(Path dataDir, PrintWriter err) {
        try {
            return WalFrames.of(dataDir, WalFrames.ENVELOPES);
        } catch (IOException | SQLException e) {
            BenchSupport.progress(err, "the store's log could not be counted: " + e.getMessage());
            return null;
        }
    }

    /** Frames a send in all and for the six b-trees that took most, and the commits they came in. */
    private static String walFrames(WalFrames.Count wal) {
        if (wal.sends() == 0) {
            return String.format(Locale.ROOT, "n/a (%,d commits in the log since it last started over)", wal.commits());
        }
        String byTree = wal.framesByTree().entrySet().stream().limit(6)
                .map(e -> String.format(Locale.ROOT, "%s %.2f", e.getKey(), (double) e.getValue() / wal.sends()))
                .collect(Collectors.joining(", "));
        return String.format(Locale.ROOT, "%.2f (%s) over %,d commits of %.1f sends", wal.framesEachSend(), byTree,
                wal.commits(), (double) wal.sends() / wal.commits());
    }

    private void print(PrintWriter out, LoadResult r, WalFrames.Count wal) throws IOException {
        double rate = r.accepted / r.windowSeconds;
        out.printf(Locale.ROOT, "parley bench send: %d senders -> %d inboxes, %d-byte text, warm-up %s: took %s; "
                + "window %.2f s%n", load.senders, targets.inboxes, load.size, settle.warmup(window.warmup).describe(),
                r.warmupTaken(), r.windowSeconds);
        out.printf(Locale.ROOT, "  %-34s %s%n", "metric", "value");
        out.printf(Locale.ROOT, "  %-34s %,d%n", "accepted sends (202) in window", r.accepted);
        out.printf(Locale.ROOT, "  %-34s %,.0f%n", "sends/s", rate);
        out.printf(Locale.ROOT, "  %-34s %s ms%n", "end-to-end p50 / p99 / max", BenchSupport.triple(r.e2e));
        out.printf(Locale.ROOT, "  %-34s %s ms%n", "202 latency p50 / p99 / max", BenchSupport.triple(r.ack));
        out.printf(Locale.ROOT, "  %-34s %s%n", "mean commit batch (writes/commit)",
                Double.isNaN(r.meanBatch) ? "n/a (no parley_commit_batch_size in /metrics)"
                        : String.format(Locale.ROOT, "%.1f", r.meanBatch));
        if (!Double.isNaN(r.meanCommitMs)) {
            out.printf(Locale.ROOT, "  %-34s %,.0f/s, %.2f ms each (writer busy %.0f%%)%n", "commits",
                    r.commitsPerSecond, r.meanCommitMs, r.commitsPerSecond * r.meanCommitMs / 10.0);
        }
        if (!Double.isNaN(r.meanFoldMs)) { // the writer's other work: sends queued meanwhile wait for it
            out.printf(Locale.ROOT, "  %-34s %,.1f/s, %.2f ms each (writer busy %.0f%%)%n", "folds",
                    r.foldsPerSecond, r.meanFoldMs, r.foldsPerSecond * r.meanFoldMs / 10.0);
        }
        out.printf(Locale.ROOT, "  %-34s %,d%s%n", "errors", r.errors, r.errorKinds.isEmpty() ? "" : " " + r.errorKinds);
        out.printf(Locale.ROOT, "  %-34s %,d of %,d accepted%n", "lost (accepted, never streamed)", r.lost,
                r.acceptedTotal);
        if (r.duplicates > 0) {
            out.printf(Locale.ROOT, "  %-34s %,d%n", "duplicate frames on streams", r.duplicates);
        }
        if (!Double.isNaN(r.cpuPercent)) {
            out.printf(Locale.ROOT, "  %-34s %.0f%% of %d cores%n", "process CPU (hub + bench) in window",
                    r.cpuPercent, Runtime.getRuntime().availableProcessors());
        }
        if (!Double.isNaN(r.machinePercent)) {
            out.printf(Locale.ROOT, "  %-34s %.0f%% (other processes about %.0f%%)%n", "machine CPU busy in window",
                    r.machinePercent, Math.max(0, r.machinePercent - r.cpuPercent));
        }
        if (!r.cpuMicrosPerSend.isEmpty()) {
            out.printf(Locale.ROOT, "  %-34s %s%n", "process CPU a send, by threads", r.cpuMicrosPerSend.entrySet().stream()
                    .map(e -> String.format(Locale.ROOT, "%s %.0f us", e.getKey().label, e.getValue()))
                    .collect(Collectors.joining(", ")));
        }
        if (wal != null) {
            out.printf(Locale.ROOT, "  %-34s %s%n", "WAL frames a send", walFrames(wal));
        }
        if (output.json) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("senders", load.senders);
            o.put("inboxes", targets.inboxes);
            o.put("size", load.size);
            o.put("warmupSeconds", window.warmup);
            o.put("jitSettle", settle.jitSettle);
            o.put("warmedUpSeconds", BenchSupport.round(r.warmupSeconds));
            if (r.jitQuiet != null) {
                o.put("jitQuiet", r.jitQuiet);
            }
            o.put("windowSeconds", BenchSupport.round(r.windowSeconds));
            o.put("accepted", r.accepted);
            o.put("sendsPerSecond", BenchSupport.round(rate));
            o.put("e2eP50Ms", BenchSupport.round(BenchSupport.pct(r.e2e, 50)));
            o.put("e2eP99Ms", BenchSupport.round(BenchSupport.pct(r.e2e, 99)));
            o.put("e2eMaxMs", BenchSupport.round(BenchSupport.max(r.e2e)));
            o.put("ackP50Ms", BenchSupport.round(BenchSupport.pct(r.ack, 50)));
            o.put("ackP99Ms", BenchSupport.round(BenchSupport.pct(r.ack, 99)));
            o.put("ackMaxMs", BenchSupport.round(BenchSupport.max(r.ack)));
            o.put("meanCommitBatch", BenchSupport.round(r.meanBatch));
            o.put("hubAcceptedInWindow", BenchSupport.round(r.hubAccepted));
            o.put("commitsPerSecond", BenchSupport.round(r.commitsPerSecond));
            o.put("meanCommitMs", BenchSupport.round(r.meanCommitMs));
            o.put("foldsPerSecond", BenchSupport.round(r.foldsPerSecond));
            o.put("meanFoldMs", BenchSupport.round(r.meanFoldMs));
            o.put("errors", r.errors);
            o.put("errorKinds", r.errorKinds);
            o.put("acceptedTotal", r.acceptedTotal);
            o.put("seen", r.seen);
            o.put("lost", r.lost);
            o.put("duplicatesOnStream", r.duplicates);
            o.put("cpuPercent", BenchSupport.round(r.cpuPercent));
            o.put("machineCpuPercent", BenchSupport.round(r.machinePercent));
            Map<String, Object> micros = new LinkedHashMap<>();
            r.cpuMicrosPerSend.forEach((part, us) -> micros.put(part.key, BenchSupport.round(us)));
            o.put("cpuMicrosPerSend", micros);
            o.put("cores", Runtime.getRuntime().availableProcessors());
            if (wal != null) {
                o.put("walCommits", wal.commits());
                o.put("walSends", wal.sends());
                o.put("walFramesEachSend", BenchSupport.round(wal.framesEachSend()));
                Map<String, Object> trees = new LinkedHashMap<>();
                wal.framesByTree().forEach((tree, frames) -> trees.put(tree, frames));
                o.put("walFramesByTree", trees);
            }
            out.println(JSON.writeValueAsString(o));
        }
        out.flush();
    }
}
