package dev.parley.bench;

import dev.parley.trace.export.OtlpSettings;
import dev.parley.trace.export.OtlpTraceExport;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Command;

/**
 * {@code parley bench export}: what exporting spans over OTLP/HTTP costs the send path. The
 * {@code bench send} workload runs on fresh hubs (in this JVM, or each in a process of its own with
 * {@code --hub child}), alternating (off, on, on, off, …):
 * <ul>
 *   <li>off: no export endpoint (the hub has no exporter; checked: it renders no export metrics);</li>
 *   <li>on: the hub exports to an {@link OtlpSink} in this JVM — a send and a commit span per
 *       committed envelope and a deliver span per delivery, queued and posted in batches by the
 *       hub's export thread.</li>
 * </ul>
 * The on runs' spans exported, dropped (queue full) and failed batches in the window come from
 * the hub's metrics, the sink's requests and bytes from the sink. The ratio is on sends/s over
 * off sends/s; an on run that exported nothing fails the bench, since it proved nothing. That is
 * judged after the run, not in its window: the hub counts a batch when the sink's answer reaches
 * it, and a short window on a busy machine can end between the sink taking the run's first batch
 * and the hub hearing back (seen: sink 1 request, hub 0 spans, in a 2 s window).
 */
@Command(name = "export", mixinStandardHelpOptions = true, resourceBundle = "dev.parley.bench.BenchExportCommand",
        description = {"Measure the cost of exporting spans over OTLP/HTTP on durable sends.",
                "",
                "Runs the bench send workload on fresh hubs, alternately without export and exporting "
                        + "to an OTLP/HTTP receiver in this process, and prints sends/s, latency, CPU per send, the "
                        + "spans exported and the ratio on/off. Exits 1 when a send was refused or lost, or when a "
                        + "run with export on exported nothing."})
public final class BenchExportCommand extends AlternatingBenchCommand {
    private static final String EXPORTED = "parley_trace_spans_exported_total";
    private static final String DROPPED = "parley_trace_spans_dropped_total";
    private static final String FAILURES = "parley_trace_export_failures_total";
    private static final String SINK_REQUESTS = "bench_otlp_sink_requests";
    private static final String SINK_BYTES = "bench_otlp_sink_bytes";
    /** How often {@code settled} reads the hub's export counts while it waits for the first answer. */
    private static final long SETTLE_POLL_MILLIS = 50;
    /** Per on run: what it had exported once it settled (its proof), after the window's figures in its JSON. */
    private static final List<String> RUN_FIGURES = List.of("spansExportedByEnd", "sinkRequestsByEnd");
    /** Per on run: the figures of its window, in the order of the run's JSON. */
    private static final List<String> WINDOW_FIGURES = List.of("spansExported", "spansDropped", "exportFailures",
            "sinkRequests", "sinkBytes");

    @picocli.CommandLine.Option(names = "--sample-ratio", paramLabel = "R", defaultValue = "1",
            description = "The share of traces the hub exports in the on runs, as OTEL_TRACES_SAMPLER=traceidratio "
                    + "with OTEL_TRACES_SAMPLER_ARG=R would set it (default: ${DEFAULT-VALUE}, every trace).")
    double sampleRatio;

    @Override
    Variants variants() throws IOException {
        if (!(sampleRatio > 0 && sampleRatio <= 1)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--sample-ratio is above 0, at most 1");
        }
        OtlpSink sink = OtlpSink.start();
        Variant off = new Variant() {
            @Override
            public String name() {
                return "off";
            }

            @Override
            public BenchHub startHub(HubPlacementOption.HubLauncher launcher) throws IOException {
                return launcher.start();
            }

            @Override
            public void prepare(BenchHub hub, ParleyWorkload work, Map<String, Object> facts) throws IOException {
                if (hub.metrics().containsKey(EXPORTED)) {
                    throw new IllegalStateException("the hub without an endpoint exports (it renders " + EXPORTED + ")");
                }
            }
        };
        Variant on = new Variant() {
            @Override
            public String name() {
                return "on";
            }

            @Override
            public BenchHub startHub(HubPlacementOption.HubLauncher launcher) throws IOException {
                Map<String, String> otel = Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", sink.base(),
                        "OTEL_TRACES_SAMPLER", "traceidratio", "OTEL_TRACES_SAMPLER_ARG", Double.toString(sampleRatio));
                return launcher.start(c -> c.withExport(OtlpSettings.fromEnvironment(otel)), List.of(), otel);
            }

            @Override
            public void prepare(BenchHub hub, ParleyWorkload work, Map<String, Object> facts) throws IOException {
                if (!hub.metrics().containsKey(EXPORTED)) {
                    throw new IllegalStateException("the hub given " + sink.base() + " does not export (no " + EXPORTED
                            + " in its metrics)");
                }
            }

            @Override
            public Map<String, Double> counters() {
                return Map.of(SINK_REQUESTS, (double) sink.requests(), SINK_BYTES, (double) sink.bytes());
            }

            /**
             * Waits until the hub heard back from an export (its spans counted, or a batch failed),
             * at most as long as the exporter itself may take with one: a batch's delay and the
             * export timeout. What the run exported by then is its proof.
             */
            @Override
            public void settled(BenchHub hub, Map<String, Object> facts) throws Exception {
                long deadline = System.nanoTime() + OtlpTraceExport.BATCH_DELAY.plus(OtlpSettings.DEFAULT_TIMEOUT)
                        .plusSeconds(1).toNanos();
                Map<String, Double> now = hub.metrics();
                while (now.getOrDefault(EXPORTED, 0.0) == 0 && now.getOrDefault(FAILURES, 0.0) == 0
                        && System.nanoTime() < deadline) {
                    Thread.sleep(SETTLE_POLL_MILLIS);
                    now = hub.metrics();
                }
                facts.put("spansExportedByEnd", now.getOrDefault(EXPORTED, 0.0).longValue());
                facts.put("sinkRequestsByEnd", sink.requests());
            }

            @Override
            public void measured(Window edges, Map<String, Object> facts) {
                facts.put("spansExported", (long) edges.delta(EXPORTED));
                facts.put("spansDropped", (long) edges.delta(DROPPED));
                facts.put("exportFailures", (long) edges.delta(FAILURES));
                facts.put("sinkRequests", (long) edges.delta(SINK_REQUESTS));
                facts.put("sinkBytes", (long) edges.delta(SINK_BYTES));
            }
        };
        return new Variants() {
            @Override
            public Variant base() {
                return off;
            }

            @Override
            public Variant candidate() {
                return on;
            }

            @Override
            public void close() {
                sink.close();
            }
        };
    }

    @Override
    Goal goal() {
        return new Goal("costAtMost5Percent", "goal: cost <= 5%", ratio -> ratio >= 0.95);
    }

    @Override
    void runRows(Report report, int n, Run run) {
        super.runRows(report, n, run);
        String cpu = String.format(Locale.ROOT, "%.0f us (%s)", run.cpuPerSend(), ownCpu());
        if (!run.facts().containsKey("spansExported")) {
            report.row(String.format(Locale.ROOT, "run %d %s: CPU per send", n, run.variant()), cpu);
            return;
        }
        report.row(String.format(Locale.ROOT, "run %d %s: CPU per send; export", n, run.variant()),
                "%s; spans exported / dropped %,d / %,d, failed batches %d; sink %,d requests, %,.1f MB",
                cpu, figure(run, "spansExported"), figure(run, "spansDropped"), figure(run, "exportFailures"),
                figure(run, "sinkRequests"), figure(run, "sinkBytes") / 1e6);
    }

    @Override
    void runJson(Run run, Map<String, Object> json) {
        WINDOW_FIGURES.stream().filter(run.facts()::containsKey).forEach(key -> json.put(key, run.facts().get(key)));
        RUN_FIGURES.stream().filter(run.facts()::containsKey).forEach(key -> json.put(key, run.facts().get(key)));
    }

    @Override
    void describe(Report report, List<Run> runs) {
        List<Run> on = runs.stream().filter(r -> r.facts().containsKey("spansExported")).toList();
        Map<String, Object> totals = new LinkedHashMap<>();
        WINDOW_FIGURES.forEach(key -> totals.put(key, on.stream().mapToLong(r -> figure(r, key)).sum()));
        long accepted = on.stream().mapToLong(r -> r.result().accepted).sum();
        double perSend = (long) totals.get("spansExported") / (double) accepted;
        report.row("on: spans exported per send accepted", "%.2f (send, commit, deliver: 3; exports lag the "
                + "window by up to a batch)", perSend);
        report.row("on: spans dropped / failed batches", "%,d / %,d", totals.get("spansDropped"),
                totals.get("exportFailures"));
        totals.put("spansPerSend", BenchSupport.round(perSend));
        report.put("export", totals);
    }

    @Override
    boolean proven(Run run) {
        return figure(run, "spansExportedByEnd") > 0 && figure(run, "sinkRequestsByEnd") > 0;
    }

    private static long figure(Run run, String key) {
        return run.facts().get(key) instanceof Long value ? value : 0;
    }
}
