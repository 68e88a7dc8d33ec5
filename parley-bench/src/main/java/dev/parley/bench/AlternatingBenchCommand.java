package dev.parley.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.DoublePredicate;
import java.util.function.ToDoubleFunction;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * A bench that measures what a hub feature costs the send path: the {@code bench send} workload
 * runs on fresh hubs of two variants (in this JVM, or each in a process of its own with
 * {@code --hub child}), a base and a candidate, alternating (base,
 * candidate, candidate, base, …, so that neither always runs on a warmer JIT or a quieter
 * machine), and the report gives each run's figures, the mean sends/s and CPU per send of each
 * variant, and the ratio candidate / base against the bench's cost goal. Exits 1 when a send was
 * refused or lost, a run accepted nothing, or {@link #proven} says a candidate run did not show
 * the feature at work. A scenario supplies its variants and what it adds to the report.
 */
abstract sealed class AlternatingBenchCommand implements Callable<Integer>
        permits BenchGuardedCommand, BenchExportCommand {

    @Spec
    CommandSpec spec;

    @ParentCommand
    BenchCommand bench;

    @Mixin
    HubPlacementOption placement = new HubPlacementOption();

    @Mixin
    SenderOptions load = new SenderOptions(1024, 1, 60_000);

    @Mixin
    InboxOptions targets = new InboxOptions();

    @Mixin
    WindowOptions window = new WindowOptions(5);

    @Mixin
    DrainOption drain = new DrainOption();

    @Mixin
    OutputOptions output = new OutputOptions();

    @Mixin
    QuickOption quick = new QuickOption();

    @Mixin
    JitSettleOptions settle = new JitSettleOptions();

    @Option(names = "--rounds", defaultValue = "2", descriptionKey = "rounds",
            description = "Pairs of runs, the two variants alternating (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--jfr", paramLabel = "PREFIX", descriptionKey = "jfr",
            description = "Record this JVM's load in each run (the client, and an in-process hub) with JDK Flight "
                    + "Recorder into PREFIX-<n>-<variant>.jfr (profile settings).")
    String jfr;

    /** One side of the comparison: how its hub starts, what is set up before the window, what is read at it. */
    interface Variant {
        String name();

        /** A fresh hub of this variant, started by {@code launcher} where {@code --hub} says. */
        BenchHub startHub(HubPlacementOption.HubLauncher launcher) throws IOException;

        /** After the nodes exist and before the streams open: setup and checks, with what they found in facts. */
        default void prepare(BenchHub hub, ParleyWorkload work, Map<String, Object> facts) throws Exception {
        }

        /** Counters of this variant's own, read with the hub's metrics at both edges of the window. */
        default Map<String, Double> counters() {
            return Map.of();
        }

        /** What the window's edges say about this variant, into facts. */
        default void measured(Window edges, Map<String, Object> facts) {
        }

        /** After the window and the drain, before the hub stops: what the run left behind, into facts. */
        default void settled(BenchHub hub, Map<String, Object> facts) throws Exception {
        }
    }

    /** The two variants, and what they hold for the whole comparison (released at {@link #close()}). */
    interface Variants extends AutoCloseable {
        Variant base();

        Variant candidate();

        @Override
        default void close() throws IOException {
        }
    }

    /** The hub's metrics and the variant's counters at the start and the end of the measured window. */
    record Window(Map<String, Double> before, Map<String, Double> after) {
        /** How much {@code name} grew in the window; 0 when it is not there. */
        double delta(String name) {
            return after.getOrDefault(name, 0.0) - before.getOrDefault(name, 0.0);
        }
    }

    /** One run's figures; {@code hubCpuSeconds} is a child hub's CPU in the window (NaN in process). */
    record Run(String variant, LoadResult result, Map<String, Object> facts, double hubCpuSeconds) {
        /** CPU of this process (an in-process hub's too) per send accepted in the window, in microseconds. */
        double cpuPerSend() {
            return result.cpuPercent / 100.0 * Runtime.getRuntime().availableProcessors() * result.windowSeconds * 1e6
                    / result.accepted;
        }

        /** A child hub's CPU per send accepted in the window, in microseconds; NaN in process. */
        double hubCpuPerSend() {
            return hubCpuSeconds * 1e6 / result.accepted;
        }
    }

    /** The cost the candidate may have: {@code key} in the JSON goals, {@code text} in the ratio row. */
    record Goal(String key, String text, DoublePredicate metByRatio) {
    }

    /** Opens the two variants of this bench (called once, after the options are checked). */
    abstract Variants variants() throws IOException;

    abstract Goal goal();

    /** What every send carries, for the title: by default its text. */
    String payload() {
        return load.size + "-byte text";
    }

    /** The kind every send carries, when it is not the hub's default. */
    Optional<String> kind() {
        return Optional.empty();
    }

    /** Shapes the workload of every run (labels, payload): by default the plain {@code bench send} one. */
    void shape(ParleyWorkload work) {
    }

    /** The rows of run {@code n} (from 1). */
    void runRows(Report report, int n, Run run) {
        LoadResult lr = run.result();
        report.row(String.format(Locale.ROOT, "run %d %s", n, run.variant()),
                "%,.0f sends/s, e2e p50 / p99 %.2f / %.2f ms, 202 p99 %.2f ms, errors %d, lost %d, "
                        + "CPU %.0f%% (machine %.0f%%)%s, warm-up %s",
                lr.perSecond(), lr.p50Ms(), lr.p99Ms(), BenchSupport.pct(lr.ack, 99), lr.errors, lr.lost,
                lr.cpuPercent, lr.machinePercent, Double.isNaN(run.hubCpuSeconds()) ? ""
                        : String.format(Locale.ROOT, ", hub %.1f us a send", run.hubCpuPerSend()), lr.warmupTaken());
    }

    /** Whose CPU {@link Run#cpuPerSend()} is: this JVM's, which holds the hub too when it runs in process. */
    String ownCpu() {
        return placement.child() ? "bench client" : "hub + bench";
    }

    /** Fields of a run's JSON object besides the shared ones. */
    void runJson(Run run, Map<String, Object> json) {
    }

    /** Rows of this bench after the ratio, and its JSON fields after the rates. */
    void describe(Report report, List<Run> runs) {
    }

    /** Whether a candidate run shows the feature at work (a proof that did not run proves nothing). */
    boolean proven(Run run) {
        return true;
    }

    @Override
    public final Integer call() throws Exception {
        quick.unlessGiven("--senders", () -> load.senders = 16).unlessGiven("--inboxes", () -> targets.inboxes = 16)
                .unlessGiven("--warmup", () -> window.warmup = 0).unlessGiven("--seconds", () -> window.seconds = 2)
                .unlessGiven("--rounds", () -> rounds = 1).unlessGiven("--jit-settle", () -> settle.jitSettle = false);
        load.validate();
        targets.validate();
        window.validate();
        settle.validate();
        if (rounds < 1) {
            throw new ParameterException(spec.commandLine(), "--rounds must be at least 1");
        }
        HubPlacementOption.HubLauncher launcher = placement.launcher(bench);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        double load0 = BenchSupport.loadAverage();
        List<Run> runs = new ArrayList<>();
        Variant base;
        Variant candidate;
        try (Variants both = variants()) {
            base = both.base();
            candidate = both.candidate();
            for (int r = 0; r < rounds; r++) {
                boolean candidateFirst = r % 2 == 1;
                for (int i = 0; i < 2; i++) {
                    Variant variant = candidateFirst == (i == 0) ? candidate : base;
                    runs.add(run(variant, launcher, err, jfr == null ? null
                            : Path.of(jfr + "-" + (runs.size() + 1) + "-" + variant.name() + ".jfr")));
                    Run last = runs.getLast();
                    BenchSupport.progress(err, String.format(Locale.ROOT, "round %d %s: %,.0f sends/s, p99 %.2f ms",
                            r + 1, variant.name(), last.result().perSecond(), last.result().p99Ms()));
                }
            }
        }
        double load1 = BenchSupport.loadAverage();

        String a = base.name();
        String b = candidate.name();
        double baseRate = mean(runs, a, r -> r.result().perSecond());
        double candidateRate = mean(runs, b, r -> r.result().perSecond());
        double ratio = candidateRate / baseRate;
        Report report = new Report(String.format(Locale.ROOT,
                "parley bench %s: %d senders -> %d inboxes, %s, warm-up %s, window %d s, %d rounds (%s and %s "
                        + "alternating), hubs %s", spec.name(), load.senders, targets.inboxes,
                payload(), settle.warmup(window.warmup).describe(), window.seconds, rounds, a, b,
                placement.child() ? "in child processes" : "in this JVM"));
        for (int i = 0; i < runs.size(); i++) {
            runRows(report, i + 1, runs.get(i));
        }
        report.row("mean sends/s " + a + " / " + b, "%,.0f / %,.0f", baseRate, candidateRate);
        double baseCpu = mean(runs, a, Run::cpuPerSend);
        double candidateCpu = mean(runs, b, Run::cpuPerSend);
        report.row("mean CPU per send " + a + " / " + b, "%.0f / %.0f us (%s, %+.0f%%)", baseCpu,
                candidateCpu, ownCpu(), 100 * (candidateCpu / baseCpu - 1));
        double baseHubCpu = mean(runs, a, Run::hubCpuPerSend);
        double candidateHubCpu = mean(runs, b, Run::hubCpuPerSend);
        if (placement.child()) {
            report.row("mean hub CPU per send " + a + " / " + b, "%.1f / %.1f us (%+.0f%%)", baseHubCpu,
                    candidateHubCpu, 100 * (candidateHubCpu / baseHubCpu - 1));
        }
        Goal goal = goal();
        report.row("ratio " + b + " / " + a, String.format(Locale.ROOT, "%.3f (cost %.1f%%; ", ratio, 100 * (1 - ratio))
                + goal.text() + ")");
        report.put("senders", load.senders).put("inboxes", targets.inboxes).put("size", load.size);
        kind().ifPresent(k -> report.put("kind", k));
        report.put("hub", placement.where).put("warmupSeconds", window.warmup).put("jitSettle", settle.jitSettle)
                .put("windowSeconds", window.seconds).put("rounds", rounds);
        List<Map<String, Object>> each = new ArrayList<>();
        for (Run run : runs) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("variant", run.variant());
            o.putAll(run.result().summary());
            o.put("acceptedTotal", run.result().acceptedTotal);
            o.put("cpuPercent", BenchSupport.round(run.result().cpuPercent));
            o.put("machineCpuPercent", BenchSupport.round(run.result().machinePercent));
            o.put("meanCommitMs", run.facts().get("meanCommitMs"));
            o.put("cpuMicrosPerSend", BenchSupport.round(run.cpuPerSend()));
            if (placement.child()) {
                o.put("hubCpuMicrosPerSend", BenchSupport.round(run.hubCpuPerSend()));
            }
            runJson(run, o);
            each.add(o);
        }
        report.put("runs", each);
        report.put(a + "PerSec", baseRate).put(b + "PerSec", candidateRate).put("ratio", ratio);
        report.put(a + "CpuMicrosPerSend", baseCpu).put(b + "CpuMicrosPerSend", candidateCpu);
        if (placement.child()) {
            report.put(a + "HubCpuMicrosPerSend", baseHubCpu).put(b + "HubCpuMicrosPerSend", candidateHubCpu);
        }
        describe(report, runs);
        report.row("load average before / after", "%.2f / %.2f", load0, load1);
        report.put("loadBefore", load0).put("loadAfter", load1).put("cores", Runtime.getRuntime().availableProcessors());
        long lost = runs.stream().mapToLong(run -> run.result().lost).sum();
        long errors = runs.stream().mapToLong(run -> run.result().errors).sum();
        report.put("lost", lost).put("errors", errors);
        Map<String, Object> goals = new LinkedHashMap<>();
        goals.put(goal.key(), goal.metByRatio().test(ratio));
        report.json().put("goals", goals);
        report.print(out, output.json);
        boolean accepted = runs.stream().allMatch(run -> run.result().accepted > 0);
        boolean proven = runs.stream().filter(run -> run.variant().equals(b)).allMatch(this::proven);
        return lost == 0 && errors == 0 && accepted && proven ? 0 : 1;
    }

    private Run run(Variant variant, HubPlacementOption.HubLauncher launcher, PrintWriter err, Path jfrFile)
            throws Exception {
        try (BenchHub hub = variant.startHub(launcher);
             ParleyWorkload work = new ParleyWorkload(load.senders, targets.inboxes, load.size, err)) {
            BenchSupport.progress(err, variant.name() + ": hub at " + hub.url());
            shape(work);
            work.createNodes(hub);
            Map<String, Object> facts = new LinkedHashMap<>();
            variant.prepare(hub, work, facts);
            work.openStreams(hub.host(), hub.port());
            List<Map<String, Double>> edges = new ArrayList<>(List.of(Map.of(), Map.of()));
            Machine.CpuSample[] cpu = new Machine.CpuSample[2];
            long[] hubTicks = {-1, -1};
            LoadResult result;
            try (BenchJfr recording = BenchJfr.start(jfrFile, err)) {
                result = work.measure(settle.warmup(window.warmup, hub), window.seconds, drain.seconds, w0 -> {
                    edges.set(0, sample(hub, variant));
                    cpu[0] = Machine.CpuSample.now();
                    hubTicks[0] = hub.isChild() ? BenchSupport.cpuTicks(hub.pid()) : -1;
                }, w1 -> {
                    hubTicks[1] = hub.isChild() ? BenchSupport.cpuTicks(hub.pid()) : -1;
                    cpu[1] = Machine.CpuSample.now();
                    edges.set(1, sample(hub, variant));
                });
            }
            result.cpuPercent = cpu[0].processPercentUntil(cpu[1]);
            result.machinePercent = cpu[0].machinePercentUntil(cpu[1]);
            Window measured = new Window(edges.get(0), edges.get(1));
            variant.measured(measured, facts);
            variant.settled(hub, facts);
            facts.put("meanCommitMs", BenchSupport.round(1000.0
                    * BenchSupport.delta(measured.before(), measured.after(), "parley_commit_latency_seconds_sum")
                    / BenchSupport.delta(measured.before(), measured.after(), "parley_commit_latency_seconds_count")));
            // /proc's clock ticks, 100 a second
            double hubCpuSeconds = hubTicks[0] < 0 || hubTicks[1] < 0 ? Double.NaN : (hubTicks[1] - hubTicks[0]) / 100.0;
            return new Run(variant.name(), result, facts, hubCpuSeconds);
        }
    }

    private static Map<String, Double> sample(BenchHub hub, Variant variant) throws IOException {
        Map<String, Double> values = new HashMap<>(hub.metrics());
        values.putAll(variant.counters());
        return values;
    }

    private static double mean(List<Run> runs, String variant, ToDoubleFunction<Run> figure) {
        return runs.stream().filter(r -> r.variant().equals(variant)).mapToDouble(figure).average().orElse(Double.NaN);
    }
}
