package dev.parley.bench;

import dev.parley.nats.GatewayConfig;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code parley bench federation}: cross-gateway sends/s and end-to-end latency, against the
 * single-hub figure of the same load measured in the same run.
 *
 * <p>Starts one nats-server (free port, temporary store, development mode: no credentials) and
 * three gateway hubs a, b, c in this process, each on its own temporary directory and port. The
 * {@link ParleyWorkload} spreads its senders and inboxes over the gateways; every send goes to
 * an inbox another gateway owns and is seen on that inbox's stream on its owner. Then the same
 * workload runs on one plain hub ({@code bench send}). Issue 11's goal: cross-gateway sends/s at
 * least half the single hub's, cross-gateway p99 at most 50 ms.
 */
@Command(name = "federation", mixinStandardHelpOptions = true, resourceBundle = "dev.parley.bench.BenchFederationCommand",
        description = {"Measure cross-gateway sends/s and end-to-end latency against a single hub.",
                "",
                "Starts a nats-server and three gateway hubs (a, b, c) in this process on temporary directories "
                        + "(removed afterwards), spreads N senders and M inboxes over them and runs closed-loop senders "
                        + "that only send to inboxes other gateways own, each inbox read by one SSE stream on its "
                        + "owner. Then runs the same load on one plain hub. Prints both, the ratio and whether the "
                        + "goal (ratio >= 0.5, cross-gateway p99 <= 50 ms) is met. Needs nats-server (exit 2 without); "
                        + "exits 1 when an accepted envelope never reached its stream."})
public final class BenchFederationCommand implements Callable<Integer> {
    static final List<String> GATEWAYS = List.of("a", "b", "c");
    private static final double RATIO_GOAL = 0.5;
    private static final double P99_GOAL_MS = 50;

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

    @Override
    public Integer call() throws Exception {
        quick.unlessGiven("--senders", () -> load.senders = 12).unlessGiven("--inboxes", () -> targets.inboxes = 12)
                .unlessGiven("--warmup", () -> window.warmup = 1).unlessGiven("--seconds", () -> window.seconds = 3);
        load.validate();
        targets.validate();
        window.validate();
        if (targets.inboxes < 2) {
            throw new ParameterException(spec.commandLine(), "--inboxes must be at least 2: every send goes to an inbox "
                    + "another gateway owns");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (NatsServerProcess.find().isEmpty()) {
            err.println("parley bench federation: " + NatsServerProcess.missingMessage());
            err.flush();
            return 2;
        }
        double loadBefore = BenchSupport.loadAverage();
        String natsVersion = NatsServerProcess.version(NatsServerProcess.find().orElseThrow());
        LoadResult federated = runFederated(err);
        LoadResult single = runSingleHub(err);
        print(out, federated, single, natsVersion, loadBefore);
        boolean ok = federated.accepted > 0 && federated.lost == 0 && single.accepted > 0 && single.lost == 0;
        return ok ? 0 : 1;
    }

    private LoadResult runFederated(PrintWriter err) throws Exception {
        try (NatsServerProcess nats = NatsServerProcess.start(false, err)) {
            List<BenchHub> hubs = new ArrayList<>();
            try {
                for (String id : GATEWAYS) {
                    GatewayConfig gateway = new GatewayConfig(id, nats.url(), Optional.empty());
                    BenchHub hub = BenchHub.inProcess(c -> c.withGateway(Optional.of(gateway)));
                    hubs.add(hub);
                    BenchSupport.progress(err, "gateway " + id + " listening at " + hub.url() + " (data in " + hub.dir() + ")");
                }
                try (ParleyWorkload work = new ParleyWorkload(load.senders, targets.inboxes, load.size, err)) {
                    work.createNodes(hubs);
                    work.openStreams(hubs);
                    return work.measure(Warmup.fixed(window.warmup), window.seconds, drain.seconds, null, null);
                }
            } finally {
                for (BenchHub hub : hubs.reversed()) {
                    hub.close();
                }
            }
        }
    }

    private LoadResult runSingleHub(PrintWriter err) throws Exception {
        try (BenchHub hub = BenchHub.inProcess();
             ParleyWorkload work = new ParleyWorkload(load.senders, targets.inboxes, load.size, err)) {
            BenchSupport.progress(err, "single hub listening at " + hub.url() + " (data in " + hub.dir() + ")");
            work.createNodes(hub);
            work.openStreams(hub.host(), hub.port());
            return work.measure(Warmup.fixed(window.warmup), window.seconds, drain.seconds, null, null);
        }
    }

    private void print(PrintWriter out, LoadResult federated, LoadResult single, String natsVersion, double loadBefore) {
        out.printf(Locale.ROOT, "parley bench federation: %d senders -> %d inboxes over %d gateways (%s), every send to "
                        + "another gateway; %d-byte text, warm-up %d s, window %d s per run; load average %.1f before%n",
                load.senders, targets.inboxes, GATEWAYS.size(), String.join(", ", GATEWAYS), load.size, window.warmup,
                window.seconds, loadBefore);
        String fmt = "  %-14s %9s %11s %9s %9s %9s %9s %9s %7s %6s %6s%n";
        out.printf(Locale.ROOT, fmt, "run", "sends/s", "delivered/s", "p50 ms", "p99 ms", "max ms", "202 p50", "202 p99", "errors", "lost",
                "dups");
        row(out, fmt, "cross-gateway", federated);
        row(out, fmt, "single hub", single);
        double ratio = federated.perSecond() / single.perSecond();
        boolean met = ratio >= RATIO_GOAL && federated.p99Ms() <= P99_GOAL_MS;
        out.printf(Locale.ROOT, "  ratio (cross-gateway sends/s / single-hub sends/s): %.2f%n", ratio);
        out.printf(Locale.ROOT, "  goal (ratio >= %.1f, cross-gateway p99 <= %.0f ms): %s%n", RATIO_GOAL, P99_GOAL_MS,
                met ? "met" : "not met");
        out.println("  sends/s: 202s in the window; delivered/s: arrivals on the streams in the window");
        out.println("  latency: send start -> arrival on the target's SSE stream (on its owner gateway); 202: the "
                + "sender's gateway's answer");
        out.println("  federation: nats-server " + natsVersion + ", development mode (no credentials); the gateways and "
                + "the bench share this JVM");
        for (LoadResult r : new LoadResult[] {federated, single}) {
            if (!r.errorKinds.isEmpty()) {
                out.println("  " + (r == federated ? "cross-gateway" : "single hub") + " errors: " + r.errorKinds);
            }
        }
        if (output.json) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("federation", summary(federated));
            o.put("singleHub", summary(single));
            o.put("ratio", BenchSupport.round(ratio));
            o.put("ratioGoal", RATIO_GOAL);
            o.put("p99GoalMs", P99_GOAL_MS);
            o.put("goalMet", met);
            o.put("gateways", GATEWAYS);
            o.put("senders", load.senders);
            o.put("inboxes", targets.inboxes);
            o.put("size", load.size);
            o.put("warmupSeconds", window.warmup);
            o.put("seconds", window.seconds);
            o.put("natsServer", natsVersion);
            o.put("loadBefore", BenchSupport.round(loadBefore));
            o.put("cores", Runtime.getRuntime().availableProcessors());
            out.println(Report.toJson(o));
        }
        out.flush();
    }

    private static Map<String, Object> summary(LoadResult r) {
        Map<String, Object> o = r.summary();
        o.put("deliveredPerSec", BenchSupport.round(r.deliveredInWindow / r.windowSeconds));
        return o;
    }

    private static void row(PrintWriter out, String fmt, String name, LoadResult r) {
        out.printf(Locale.ROOT, fmt, name, String.format(Locale.ROOT, "%,.0f", r.perSecond()),
                String.format(Locale.ROOT, "%,.0f", r.deliveredInWindow / r.windowSeconds),
                BenchSupport.ms(r.p50Ms()), BenchSupport.ms(r.p99Ms()), BenchSupport.ms(BenchSupport.max(r.e2e)),
                BenchSupport.ms(BenchSupport.pct(r.ack, 50)), BenchSupport.ms(BenchSupport.pct(r.ack, 99)),
                Long.toString(r.errors), Long.toString(r.lost), Long.toString(r.duplicates));
    }
}
