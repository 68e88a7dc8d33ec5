package dev.parley.bench;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code parley bench webhook}: push delivery to webhook nodes against stream delivery, in
 * the same run. Both halves are the {@code bench send} workload (N closed-loop senders, M
 * target nodes, siblings under {@code bench-lead}), each on a fresh in-process hub:
 * <ol>
 *   <li>streams: one SSE reader per target node (as {@code bench send});</li>
 *   <li>webhooks: every target node has {@code PUT /v1/nodes/{id}/delivery} with a webhook
 *       on a local receiver ({@link WebhookReceiver}: a lean HTTP/1.1 server, virtual threads,
 *       204), which records when each envelope arrives.</li>
 * </ol>
 * Deliveries/s is envelopes that reached their reader or receiver inside the measured
 * window, per second; push latency is send start to the webhook POST received. The ratio
 * is stream deliveries/s over webhook deliveries/s (target: at most 2).
 */
@Command(name = "webhook", mixinStandardHelpOptions = true, resourceBundle = "dev.parley.bench.BenchWebhookCommand",
        description = {"Measure webhook push deliveries/s and latency against stream delivery in the same run.",
                "",
                "Runs the bench send workload twice, each on a fresh in-process hub: first with an SSE reader per "
                        + "target node, then with every target node delivered by webhook to a local receiver. "
                        + "Prints deliveries/s, latency from send start to arrival, and the ratio. Exits 1 when an "
                        + "accepted envelope never arrived."})
public final class BenchWebhookCommand implements Callable<Integer> {
    private static final String SECRET = "bench-webhook-secret-0123456789abcdef";

    @Spec
    CommandSpec spec;

    @Mixin
    SenderOptions load = new SenderOptions();

    @Mixin
    WindowOptions window = new WindowOptions();

    @Mixin
    OutputOptions output = new OutputOptions();

    @Mixin
    QuickOption quick = new QuickOption();

    @Mixin
    JitSettleOptions settle = new JitSettleOptions();

    @Option(names = "--nodes", defaultValue = "16", description = "Target nodes (default: ${DEFAULT-VALUE}).")
    int nodes;

    @Option(names = "--drain-seconds", defaultValue = "60",
            description = "How long to wait for deliveries to catch up after the senders stop (default: ${DEFAULT-VALUE}).")
    int drainSeconds;

    @Option(names = "--jfr", paramLabel = "PREFIX",
            description = "Record each half (hub and client, this JVM) with JDK Flight Recorder into PREFIX-streams.jfr "
                    + "and PREFIX-webhooks.jfr (profile settings).")
    String jfr;

    @Override
    public Integer call() throws Exception {
        quick.unlessGiven("--senders", () -> load.senders = 16).unlessGiven("--nodes", () -> nodes = 4)
                .unlessGiven("--warmup", () -> window.warmup = 0).unlessGiven("--seconds", () -> window.seconds = 2)
                .unlessGiven("--jit-settle", () -> settle.jitSettle = false);
        load.validate();
        window.validate();
        settle.validate();
        if (nodes < 1 || nodes > 9999) {
            throw new ParameterException(spec.commandLine(), "--nodes must be 1..9999");
        }
        if (drainSeconds < 1) {
            throw new ParameterException(spec.commandLine(), "--drain-seconds must be at least 1");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        double load0 = BenchSupport.loadAverage();

        // 1. stream delivery
        LoadResult streams;
        try (BenchHub hub = BenchHub.inProcess();
             ParleyWorkload work = new ParleyWorkload(load.senders, nodes, load.size, err)) {
            BenchSupport.progress(err, "streams: hub at " + hub.url());
            work.createNodes(hub);
            work.openStreams(hub.host(), hub.port());
            Machine.CpuSample[] cpu = new Machine.CpuSample[2];
            try (BenchJfr recording = BenchJfr.start(jfr == null ? null : java.nio.file.Path.of(jfr + "-streams.jfr"), err)) {
                streams = work.measure(settle.warmup(window.warmup), window.seconds, drainSeconds,
                        w0 -> cpu[0] = Machine.CpuSample.now(), w1 -> cpu[1] = Machine.CpuSample.now());
            }
            streams.cpuPercent = cpu[0].processPercentUntil(cpu[1]);
            streams.machinePercent = cpu[0].machinePercentUntil(cpu[1]);
        }
        BenchSupport.progress(err, String.format(Locale.ROOT, "streams: %,.0f deliveries/s, p99 %.2f ms",
                streams.deliveredInWindow / streams.windowSeconds, streams.p99Ms()));

        // 2. webhook delivery
        LoadResult hooks;
        Map<String, Double> m0;
        Map<String, Double> m1;
        long pushes;
        long repeated;
        long unparsed;
        try (BenchHub hub = BenchHub.inProcess();
             ParleyWorkload work = new ParleyWorkload(load.senders, nodes, load.size, err);
             WebhookReceiver receiver = new WebhookReceiver(work.inboxIds)) {
            BenchSupport.progress(err, "webhooks: hub at " + hub.url());
            work.createNodes(hub);
            for (String id : work.inboxIds) {
                hub.callExpect(200, "PUT", "/v1/nodes/" + id + "/delivery", "{\"webhook\":{\"url\":\"" + receiver.url(id)
                        + "\",\"secret\":\"" + SECRET + "\"},\"retry\":{\"maxAttempts\":15,\"baseMs\":100,\"capMs\":2000}}");
            }
            work.useArrivals(hub.host(), hub.port(), receiver.arrivals());
            Map<String, Double>[] edges = newEdges();
            Machine.CpuSample[] cpu = new Machine.CpuSample[2];
            try (BenchJfr recording = BenchJfr.start(jfr == null ? null : java.nio.file.Path.of(jfr + "-webhooks.jfr"), err)) {
                hooks = work.measure(settle.warmup(window.warmup), window.seconds, drainSeconds, w0 -> {
                    edges[0] = hub.metrics();
                    cpu[0] = Machine.CpuSample.now();
                }, w1 -> {
                    cpu[1] = Machine.CpuSample.now();
                    edges[1] = hub.metrics();
                });
            }
            hooks.cpuPercent = cpu[0].processPercentUntil(cpu[1]);
            hooks.machinePercent = cpu[0].machinePercentUntil(cpu[1]);
            m0 = edges[0];
            m1 = edges[1];
            pushes = receiver.pushes();
            repeated = receiver.repeated();
            unparsed = receiver.unparsed();
        }
        double load1 = BenchSupport.loadAverage();

        double streamRate = streams.deliveredInWindow / streams.windowSeconds;
        double hookRate = hooks.deliveredInWindow / hooks.windowSeconds;
        double ratio = streamRate / hookRate;
        double hubPushMs = 1000.0 * BenchSupport.delta(m0, m1, "parley_push_latency_seconds_sum")
                / BenchSupport.delta(m0, m1, "parley_push_latency_seconds_count");
        double retries = BenchSupport.delta(m0, m1, "parley_push_retries_total");

        Report report = new Report(String.format(Locale.ROOT,
                "parley bench webhook: %d senders -> %d nodes, %d-byte text, warm-up %s, window %d s each, "
                        + "streams then webhooks", load.senders, nodes, load.size, settle.warmup(window.warmup).describe(),
                window.seconds));
        report.row("warm-up taken streams / webhooks", "%s / %s", streams.warmupTaken(), hooks.warmupTaken());
        report.row("streams: sends/s (202 in window)", "%,.0f", streams.perSecond());
        report.row("streams: deliveries/s (frames in window)", "%,.0f", streamRate);
        report.row("streams: send -> frame p50 / p99 / max", "%s ms", BenchSupport.triple(streams.e2e));
        report.row("streams: lost", "%,d of %,d accepted", streams.lost, streams.acceptedTotal);
        report.row("webhooks: sends/s (202 in window)", "%,.0f", hooks.perSecond());
        report.row("webhooks: deliveries/s (POSTs in window)", "%,.0f", hookRate);
        report.row("webhooks: send -> POST received p50 / p99 / max", "%s ms", BenchSupport.triple(hooks.e2e));
        report.row("webhooks: 202 latency p50 / p99", "%.2f / %.2f ms", BenchSupport.pct(hooks.ack, 50),
                BenchSupport.pct(hooks.ack, 99));
        report.row("webhooks: hub push call mean (metric)", "%.2f ms", hubPushMs);
        report.row("webhooks: retries in window / repeated POSTs", "%.0f / %,d", retries, repeated);
        report.row("webhooks: lost", "%,d of %,d accepted (%,d POSTs received)", hooks.lost, hooks.acceptedTotal, pushes);
        report.row("ratio stream / webhook deliveries/s", "%.2f (target <= 1.5)", ratio);
        report.row("errors streams / webhooks", "%,d / %,d%s", streams.errors, hooks.errors,
                hooks.errorKinds.isEmpty() ? "" : " " + hooks.errorKinds);
        report.row("CPU streams / webhooks (this process)", "%.0f%% / %.0f%% of %d cores", streams.cpuPercent,
                hooks.cpuPercent, Runtime.getRuntime().availableProcessors());
        double streamCpu = cpuPerDelivery(streams);
        double hookCpu = cpuPerDelivery(hooks);
        report.row("CPU per delivery streams / webhooks", "%.0f / %.0f us (hub, senders and readers or receiver)",
                streamCpu, hookCpu);
        report.row("machine busy streams / webhooks", "%.0f%% / %.0f%% (others about %.0f%% / %.0f%%)",
                streams.machinePercent, hooks.machinePercent, Math.max(0, streams.machinePercent - streams.cpuPercent),
                Math.max(0, hooks.machinePercent - hooks.cpuPercent));
        report.row("load average before / after", "%.2f / %.2f", load0, load1);

        report.put("senders", load.senders).put("nodes", nodes).put("size", load.size).put("warmupSeconds", window.warmup)
                .put("jitSettle", settle.jitSettle).put("windowSeconds", window.seconds);
        Map<String, Object> s = streams.summary();
        s.put("deliveriesPerSec", BenchSupport.round(streamRate));
        s.put("acceptedTotal", streams.acceptedTotal);
        s.put("cpuPercent", BenchSupport.round(streams.cpuPercent));
        s.put("machineCpuPercent", BenchSupport.round(streams.machinePercent));
        report.put("streams", s);
        Map<String, Object> h = hooks.summary();
        h.put("deliveriesPerSec", BenchSupport.round(hookRate));
        h.put("acceptedTotal", hooks.acceptedTotal);
        h.put("cpuPercent", BenchSupport.round(hooks.cpuPercent));
        h.put("machineCpuPercent", BenchSupport.round(hooks.machinePercent));
        h.put("pushesReceived", pushes);
        h.put("repeatedPushes", repeated);
        h.put("unparsedPushes", unparsed);
        h.put("retriesInWindow", BenchSupport.round(retries));
        h.put("hubPushMeanMs", BenchSupport.round(hubPushMs));
        report.put("webhooks", h);
        report.put("ratio", ratio);
        report.put("streamsCpuMicrosPerDelivery", streamCpu).put("webhooksCpuMicrosPerDelivery", hookCpu);
        report.put("loadBefore", load0).put("loadAfter", load1).put("cores", Runtime.getRuntime().availableProcessors());
        Map<String, Object> goals = new LinkedHashMap<>();
        goals.put("within1_5x", ratio <= 1.5); // issue 15: a push may cost at most 1.5 stream deliveries
        report.json().put("goals", goals);
        report.print(out, output.json);
        boolean ok = streams.lost == 0 && hooks.lost == 0 && hooks.accepted > 0 && streams.accepted > 0 && unparsed == 0;
        return ok ? 0 : 1;
    }

    /** CPU of this process per delivery inside the window, in microseconds. */
    private static double cpuPerDelivery(LoadResult r) {
        return r.cpuPercent / 100.0 * Runtime.getRuntime().availableProcessors() * r.windowSeconds * 1e6
                / r.deliveredInWindow;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Double>[] newEdges() {
        return new Map[] {Map.of(), Map.of()};
    }

}
