package dev.parley.bench;

import dev.parley.bench.http.HttpConnection;
import dev.parley.server.HubConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code parley bench growth}: the Parley side of {@code bench compare} (N closed-loop senders,
 * M inboxes each followed by an SSE stream, an in-process hub) on stores that already hold
 * 10^4 … 10^7 envelopes. Each size gets its own data directory: a hub creates the nodes and
 * takes one real send (the template), {@link EnvelopePrefill} (bench-only) writes the other
 * envelopes straight into the store, then a hub is started on it and measured. Prints
 * sends/s per size and the ratio of the largest size's figure to the smallest's.
 */
@Command(name = "growth", mixinStandardHelpOptions = true, resourceBundle = "dev.parley.bench.BenchGrowthCommand",
        description = {"Send throughput on stores that already hold many envelopes.",
                "",
                "For each size, fills a temporary store with that many delivered envelopes (bench-only bulk "
                        + "insert of rows copied from one real send, with their audit rows), starts a hub on it and "
                        + "runs the `bench compare` Parley workload. Prints sends/s and latency per size and the ratio "
                        + "of the largest size's sends/s to the smallest's."})
public final class BenchGrowthCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    SenderOptions load = new SenderOptions();

    @Mixin
    InboxOptions targets = new InboxOptions();

    @Mixin
    WindowOptions window = new WindowOptions();

    @Mixin
    OutputOptions output = new OutputOptions();

    @Mixin
    QuickOption quick = new QuickOption();

    @Option(names = "--sizes", split = ",", paramLabel = "N[,N...]", defaultValue = "10000,100000,1000000,10000000",
            description = "Stored envelopes before each measurement (default: ${DEFAULT-VALUE}).")
    List<Long> sizes;

    @Option(names = "--rounds", defaultValue = "1",
            description = "Measure every size this many times, alternating ascending and descending order; the "
                    + "median is reported (default: ${DEFAULT-VALUE}).")
    int rounds;

    /** One size's store, kept across rounds. */
    private final class Store {
        final long target;
        Path dir;
        ParleyWorkload work;
        long stored;       // envelopes in the store now
        double prefillSeconds;
        double prefillRate;
        final List<LoadResult> runs = new ArrayList<>();
        final List<Double> loads = new ArrayList<>();
        final List<Double> machine = new ArrayList<>();

        Store(long target) {
            this.target = target;
        }
    }

    @Override
    public Integer call() throws Exception {
        quick.unlessGiven("--sizes", () -> sizes = List.of(1000L, 20_000L)).unlessGiven("--senders", () -> load.senders = 16)
                .unlessGiven("--inboxes", () -> targets.inboxes = 16).unlessGiven("--warmup", () -> window.warmup = 1)
                .unlessGiven("--seconds", () -> window.seconds = 3);
        validate();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        List<Long> ordered = sizes.stream().distinct().sorted().toList();
        Map<Long, Store> stores = new TreeMap<>();
        long t0 = System.nanoTime();
        try {
            for (long n : ordered) {
                Store s = new Store(n);
                stores.put(n, s);
                prepare(s, err);
            }
            for (int round = 0; round < rounds; round++) {
                List<Long> order = new ArrayList<>(ordered);
                if (round % 2 == 1) {
                    java.util.Collections.reverse(order);
                }
                for (long n : order) {
                    Store s = stores.get(n);
                    if (s.stored - s.target > s.target / 20) {
                        // earlier rounds added more than 5 %: start this size again from its target
                        BenchSupport.deleteTree(s.dir);
                        prepare(s, err);
                    }
                    measure(s, round, err);
                }
            }
            print(out, stores, (System.nanoTime() - t0) / 1e9);
            boolean ok = stores.values().stream().allMatch(s -> s.runs.stream().allMatch(r -> r.accepted > 0 && r.lost == 0));
            return ok ? 0 : 1;
        } finally {
            for (Store s : stores.values()) {
                if (s.work != null) {
                    s.work.close();
                }
                BenchSupport.deleteTree(s.dir);
            }
        }
    }

    static HubConfig onDir(HubConfig c, Path dir) {
        return new HubConfig(dir, c.host(), c.port(), c.maxDepth(), c.adminToken(), c.heartbeat(), c.slowReaderTimeout(),
                c.maxBodyBytes(), c.pushTimeout(), c.gate(), c.policy(), c.transport(), c.gateway(), c.sweepInterval(), c.export());
    }

    /** A fresh store with the nodes, one real send (the template) and target - 1 prefilled envelopes. */
    private void prepare(Store s, PrintWriter err) throws Exception {
        s.dir = Files.createTempDirectory("parley-bench-growth-");
        s.work = new ParleyWorkload(load.senders, targets.inboxes, load.size, err);
        BenchSupport.progress(err, String.format(Locale.ROOT, "growth: preparing a store of %,d envelopes in %s", s.target, s.dir));
        seed(s.dir, s.work, load.size);
        long t = System.nanoTime();
        s.prefillRate = s.target > 1 ? EnvelopePrefill.fill(s.dir, s.work.inboxIds, s.work.senderIds, s.target - 1,
                BenchSupport.text(load.size), err) : 0;
        s.prefillSeconds = (System.nanoTime() - t) / 1e9;
        s.stored = s.target;
        BenchSupport.progress(err, String.format(Locale.ROOT, "growth: %,d envelopes stored in %.1f s, %s on disk",
                s.target, s.prefillSeconds, Machine.mib(diskBytes(s.dir))));
    }

    /**
     * On a hub over {@code dir}: creates the workload's nodes, takes one real send of
     * {@code size} bytes of text to the first inbox (the template {@link EnvelopePrefill}
     * copies) and has that inbox read it, so that, like the prefilled envelopes, it counts
     * as delivered: a run's cursor-less streams then carry only the run's own sends.
     */
    static void seed(Path dir, ParleyWorkload work, int size) throws Exception {
        try (BenchHub hub = BenchHub.inProcess(c -> onDir(c, dir))) {
            work.createNodes(hub);
            byte[] body = ParleyWorkload.bodies(new String[] {work.inboxIds[0]}, size)[0];
            HttpConnection conn = new HttpConnection(hub.host(), hub.port(), 30_000);
            try {
                int status = conn.exchange(HttpConnection.head("POST", "/v1/messages", conn.hostHeader(),
                        work.senderToken(0), "application/json", body.length), body);
                if (status != 202) {
                    throw new IllegalStateException("the template send answered " + status + ": " + conn.bodyText());
                }
                HttpConnection.Response read = conn.call("GET", "/v1/inbox?limit=1000", work.inboxToken(0), null);
                if (read.status() != 200) {
                    throw new IllegalStateException("reading the template answered " + read.status() + ": " + read.body());
                }
            } finally {
                conn.close();
            }
        }
    }

    private void measure(Store s, int round, PrintWriter err) throws Exception {
        double loadBefore = BenchSupport.loadAverage();
        long[][] machine = new long[2][];
        try (BenchHub hub = BenchHub.inProcess(c -> onDir(c, s.dir))) {
            try {
                s.work.openStreams(hub.host(), hub.port());
                BenchSupport.progress(err, String.format(Locale.ROOT, "growth: round %d, %,d stored (load %.2f)",
                        round + 1, s.stored, loadBefore));
                LoadResult r = s.work.measure(Warmup.fixed(window.warmup), window.seconds, 15,
                        w0 -> machine[0] = BenchSupport.machineCpuTicks(), w1 -> machine[1] = BenchSupport.machineCpuTicks());
                s.runs.add(r);
                s.loads.add(loadBefore);
                s.machine.add(BenchSupport.machineBusyPercent(machine[0], machine[1]));
                s.stored += r.acceptedTotal;
                BenchSupport.progress(err, String.format(Locale.ROOT, "growth: %,d stored: %,.0f sends/s, p50 %.2f ms, "
                        + "p99 %.2f ms", s.target, r.perSecond(), r.p50Ms(), r.p99Ms()));
            } finally {
                s.work.close();
            }
        }
    }

    private static long diskBytes(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    return 0;
                }
            }).sum();
        } catch (IOException e) {
            return -1;
        }
    }

    private void validate() {
        if (sizes == null || sizes.isEmpty() || sizes.stream().anyMatch(n -> n < 1 || n > 1_000_000_000L)) {
            throw new ParameterException(spec.commandLine(), "--sizes must be 1..1000000000 each");
        }
        if (rounds < 1) {
            throw new ParameterException(spec.commandLine(), "--rounds must be at least 1");
        }
        load.validate();
        targets.validate();
        window.validate();
    }

    private void print(PrintWriter out, Map<Long, Store> stores, double totalSeconds) {
        out.printf(Locale.ROOT, "parley bench growth: %d senders -> %d inboxes, %d-byte text, warm-up %d s, window %d s, "
                + "%d round(s), %.0f s in all%n", load.senders, targets.inboxes, load.size, window.warmup, window.seconds,
                rounds, totalSeconds);
        String fmt = "  %14s %10s %10s %10s %9s %9s %9s %11s %6s %8s%n";
        out.printf(Locale.ROOT, fmt, "stored", "prefill s", "disk (end)", "sends/s", "p50 ms", "p99 ms", "max ms",
                "vs smallest", "load", "machine");
        Store smallest = stores.values().iterator().next();
        Store largest = null;
        double base = BenchSupport.median(smallest.runs.stream().map(LoadResult::perSecond).toList());
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Store s : stores.values()) {
            largest = s;
            double rate = BenchSupport.median(s.runs.stream().map(LoadResult::perSecond).toList());
            double p50 = BenchSupport.median(s.runs.stream().map(LoadResult::p50Ms).toList());
            double p99 = BenchSupport.median(s.runs.stream().map(LoadResult::p99Ms).toList());
            double max = s.runs.stream().mapToDouble(r -> BenchSupport.max(r.e2e)).max().orElse(Double.NaN);
            long disk = diskBytes(s.dir);
            out.printf(Locale.ROOT, fmt, String.format(Locale.ROOT, "%,d", s.target),
                    String.format(Locale.ROOT, "%.1f", s.prefillSeconds), Machine.mib(disk).replace(" MiB", "M"),
                    String.format(Locale.ROOT, "%,.0f", rate), String.format(Locale.ROOT, "%.2f", p50),
                    String.format(Locale.ROOT, "%.2f", p99), String.format(Locale.ROOT, "%.2f", max),
                    String.format(Locale.ROOT, "%.2f", rate / base),
                    String.format(Locale.ROOT, "%.1f", BenchSupport.median(s.loads)),
                    String.format(Locale.ROOT, "%.0f%%", BenchSupport.median(s.machine)));
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("stored", s.target);
            row.put("perSec", BenchSupport.round(rate));
            row.put("p50Ms", BenchSupport.round(p50));
            row.put("p99Ms", BenchSupport.round(p99));
            row.put("maxMs", BenchSupport.round(max));
            row.put("runsPerSec", s.runs.stream().map(r -> BenchSupport.round(r.perSecond())).toList());
            row.put("lost", s.runs.stream().mapToLong(r -> r.lost).sum());
            row.put("errors", s.runs.stream().mapToLong(r -> r.errors).sum());
            row.put("prefillSeconds", BenchSupport.round(s.prefillSeconds));
            row.put("prefillPerSec", BenchSupport.round(s.prefillRate));
            row.put("diskBytes", disk);
            row.put("loadBefore", s.loads.stream().map(BenchSupport::round).toList());
            row.put("machineBusyPercent", s.machine.stream().map(BenchSupport::round).toList());
            rows.add(row);
        }
        double ratio = BenchSupport.median(largest.runs.stream().map(LoadResult::perSecond).toList()) / base;
        out.printf(Locale.ROOT, "  ratio (sends/s at %,d stored / at %,d stored): %.2f%n", largest.target, smallest.target,
                ratio);
        out.println("  stored: envelopes in the store when the run starts (each run adds its own sends); disk: the store "
                + "after the last run; load: 1-min load "
                + "average before the run; machine: busy share of all cores in the window");
        if (output.json) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("sizes", rows);
            o.put("ratio", BenchSupport.round(ratio));
            o.put("smallest", smallest.target);
            o.put("largest", largest.target);
            o.put("senders", load.senders);
            o.put("inboxes", targets.inboxes);
            o.put("size", load.size);
            o.put("warmupSeconds", window.warmup);
            o.put("seconds", window.seconds);
            o.put("rounds", rounds);
            o.put("totalSeconds", BenchSupport.round(totalSeconds));
            o.put("cores", Runtime.getRuntime().availableProcessors());
            out.println(Report.toJson(o));
        }
        out.flush();
    }
}
