package dev.parley.bench;

import dev.parley.bench.http.HttpConnection;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code parley bench streams}: N idle SSE streams held by one hub, what they cost it, and
 * one broadcast to all of them.
 *
 * <p>The hub runs as a child process ({@code parley serve} with this JVM's java and class
 * path, under {@code ulimit -n}) so that its memory is measured alone; {@code --hub in-process}
 * runs it in this JVM instead (then RSS includes the client). N nodes labelled
 * {@code bench=streams} are created as children of {@code ceil(N / per-lead)} root leads (the
 * default depth policy allows roots and their children; small groups keep each node's
 * group list short). The client holds the streams on a few NIO selector threads, so a
 * stream costs it a socket and a few hundred bytes. Then one admin broadcast with the label
 * filter reaches every stream; its latency is broadcast start to the frame read on each.
 */
@Command(name = "streams", mixinStandardHelpOptions = true, resourceBundle = "dev.parley.bench.BenchStreamsCommand",
        description = {"Hold N idle SSE streams, report connect time and the hub's memory, then time one broadcast "
                + "to all of them.",
                "",
                "Starts a hub as a child process on a temporary directory (removed afterwards), creates N nodes "
                        + "(children of a few root leads), opens one stream per node from a few selector threads, "
                        + "reads the hub's RSS from /proc/<pid>/status, then sends one admin broadcast "
                        + "(POST /v1/broadcasts, label filter bench=streams) and measures when it reaches each "
                        + "stream. Exits 1 when a stream failed to open or missed the broadcast."})
public final class BenchStreamsCommand implements Callable<Integer> {
    private static final String LABEL = "bench";
    private static final String LABEL_VALUE = "streams";

    @Spec
    CommandSpec spec;

    @Mixin
    OutputOptions output = new OutputOptions();

    @Mixin
    QuickOption quick = new QuickOption();

    @ParentCommand
    BenchCommand bench;

    @Option(names = "--count", defaultValue = "10000", description = "Streams to hold (default: ${DEFAULT-VALUE}).")
    int count;

    @Option(names = "--per-lead", defaultValue = "250",
            description = "Stream nodes per root lead (default: ${DEFAULT-VALUE}).")
    int perLead;

    @Option(names = "--selectors", defaultValue = "2",
            description = "Client selector threads reading the streams (default: ${DEFAULT-VALUE}).")
    int selectors;

    @Option(names = "--connecting", defaultValue = "128",
            description = "Streams connecting at once (default: ${DEFAULT-VALUE}).")
    int connecting;

    @Option(names = "--settle", defaultValue = "5",
            description = "Seconds to leave the streams idle before measuring memory (default: ${DEFAULT-VALUE}).")
    int settle;

    @Option(names = "--open-files", defaultValue = "65536",
            description = "ulimit -n for the hub's process (it gets its hard limit when this is higher; "
                    + "default: ${DEFAULT-VALUE}).")
    int openFiles;

    @Option(names = "--hub-java-opt", paramLabel = "OPT",
            description = "A JVM option for the hub's process (repeatable), e.g. --hub-java-opt=-Xmx512m.")
    List<String> hubJavaOpts = new ArrayList<>();

    @Mixin
    HubPlacementOption placement = new HubPlacementOption(HubPlacementOption.CHILD);

    @Option(names = "--broadcast-timeout", defaultValue = "60",
            description = "Seconds to wait for the broadcast to reach every stream (default: ${DEFAULT-VALUE}).")
    int broadcastTimeout;

    @Option(names = "--histogram", paramLabel = "N",
            description = "Print the top N classes of the hub's live heap (jcmd GC.class_histogram, a full GC) to "
                    + "stderr when idle and after the broadcast (default: off).")
    int histogram;

    @Option(names = "--repeat", defaultValue = "0",
            description = "Further broadcasts after the first, each timed alone once the one before has reached "
                    + "every stream (at most " + (HeldStreams.TRACKED_EVENTS - 1) + "; default: ${DEFAULT-VALUE}).")
    int repeat;

    @Option(names = "--hub-jfr", paramLabel = "FILE",
            description = "Record the hub's JVM with JDK Flight Recorder (profile settings, through jcmd) from just "
                    + "before the broadcast until every stream has it, into FILE.")
    java.nio.file.Path hubJfr;

    @Override
    public Integer call() throws Exception {
        quick.unlessGiven("--count", () -> count = 200).unlessGiven("--per-lead", () -> perLead = 50)
                .unlessGiven("--settle", () -> settle = 0);
        if (count < 1 || count > 1_000_000) {
            throw new ParameterException(spec.commandLine(), "--count must be 1..1000000");
        }
        if (repeat < 0 || repeat > HeldStreams.TRACKED_EVENTS - 1) {
            throw new ParameterException(spec.commandLine(), "--repeat must be 0.." + (HeldStreams.TRACKED_EVENTS - 1));
        }
        if (perLead < 1 || selectors < 1 || connecting < 1 || settle < 0 || broadcastTimeout < 1) {
            throw new ParameterException(spec.commandLine(),
                    "--per-lead, --selectors, --connecting and --broadcast-timeout must be positive, --settle not negative");
        }
        boolean ownProcessOptions = !hubJavaOpts.isEmpty()
                || spec.commandLine().getParseResult().hasMatchedOption("--open-files");
        if (ownProcessOptions && !placement.child()) {
            throw new ParameterException(spec.commandLine(),
                    "--hub-java-opt and --open-files set up a hub's own process: they need --hub child");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        double load0 = BenchSupport.loadAverage();
        try (BenchHub hub = placement.launcher(bench).start(c -> c, List.of(), Map.of(), hubJavaOpts, openFiles)) {
            long pid = hub.pid();
            BenchSupport.progress(err, "hub at " + hub.url() + (hub.isChild() ? " (child process " + pid + ")" : " (in process)")
                    + ", open-files limit " + hub.openFilesLimit().orElse(-1));
            OptionalLong rssStart = Machine.rssBytes(pid);

            // nodes: roots bench-lead-NNN, each leading up to perLead stream nodes
            int leads = (count + perLead - 1) / perLead;
            List<BenchHub.NodeSpec> leadSpecs = new ArrayList<>();
            for (int l = 0; l < leads; l++) {
                leadSpecs.add(new BenchHub.NodeSpec(String.format(Locale.ROOT, "bench-lead-%03d", l), null));
            }
            List<BenchHub.NodeSpec> nodes = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                nodes.add(new BenchHub.NodeSpec(String.format(Locale.ROOT, "bench-st-%06d", i),
                        leadSpecs.get(i / perLead).id(), Map.of(LABEL, LABEL_VALUE)));
            }
            long c0 = System.nanoTime();
            hub.createNodes(leadSpecs, 8);
            String[] tokens = hub.createNodes(nodes, 16);
            double createSeconds = (System.nanoTime() - c0) / 1e9;
            BenchSupport.progress(err, String.format(Locale.ROOT, "created %d nodes in %.1f s", leads + count, createSeconds));
            OptionalLong rssNodes = Machine.rssBytes(pid);

            // streams
            try (HeldStreams fleet = new HeldStreams(hub.host(), hub.port(), selectors)) {
                long o0 = System.nanoTime();
                long deadline = o0 + TimeUnit.SECONDS.toNanos(60 + count / 50);
                for (int i = 0; i < count; i++) {
                    while (fleet.pending() >= connecting && System.nanoTime() < deadline) {
                        Thread.onSpinWait();
                        Thread.sleep(0, 100_000);
                    }
                    fleet.open("/v1/inbox/stream", tokens[i]);
                }
                while (fleet.readyCount() + fleet.failedCount() < count && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
                long o1 = System.nanoTime();
                int opened = fleet.readyCount();
                long[] connect = new long[opened];
                int k = 0;
                long lastReady = o0;
                for (int i = 0; i < count; i++) {
                    HeldStreams.Held s = fleet.stream(i);
                    if (s.readyAt != 0 && k < opened) {
                        connect[k++] = s.readyAt - s.connectStart;
                        lastReady = Math.max(lastReady, s.readyAt);
                    }
                }
                connect = Arrays.copyOf(connect, k);
                Arrays.sort(connect);
                double openSeconds = (lastReady - o0) / 1e9;
                BenchSupport.progress(err, String.format(Locale.ROOT, "%d of %d streams ready in %.2f s (%d failed)%s",
                        opened, count, (o1 - o0) / 1e9, fleet.failedCount(), firstError(fleet)));

                Thread.sleep(settle * 1000L);
                OptionalLong rssIdle = Machine.rssBytes(pid);
                OptionalLong threads = Machine.statusValue(pid, "Threads");
                OptionalLong fds = Machine.openFiles(pid);
                long[] heapIdle = hub.heap();
                if (histogram > 0) {
                    BenchSupport.progress(err, "live heap of the hub with " + count + " idle streams:\n"
                            + hub.classHistogram(histogram));
                }
                Map<String, Double> metrics = hub.metrics();
                double hubStreams = metrics.getOrDefault("parley_open_streams", Double.NaN);

                // one broadcast to every stream
                HttpConnection caster = new HttpConnection(hub.host(), hub.port(), 120_000);
                String body = "{\"filter\":{\"labels\":{\"" + LABEL + "\":\"" + LABEL_VALUE + "\"}},"
                        + "\"text\":\"bench broadcast to every stream\"}";
                if (hubJfr != null && !hub.startFlightRecording(hubJfr)) {
                    BenchSupport.progress(err, "could not start a flight recording in the hub (jcmd failed)");
                }
                Machine.CpuSample bc0 = Machine.CpuSample.now();
                long b0 = System.nanoTime();
                HttpConnection.Response res = caster.call("POST", "/v1/broadcasts", hub.adminToken(), body);
                long b1 = System.nanoTime();
                caster.close();
                if (res.status() != 202) {
                    throw new IllegalStateException("POST /v1/broadcasts answered " + res.status() + ": " + res.body());
                }
                long delivered = BenchSupport.JSON.readTree(res.body()).path("delivered").asLong(-1);
                long bDeadline = b1 + TimeUnit.SECONDS.toNanos(broadcastTimeout);
                while (fleet.withEventCount() < opened && System.nanoTime() < bDeadline) {
                    Thread.sleep(2);
                }
                Machine.CpuSample bc1 = Machine.CpuSample.now();
                if (hubJfr != null && hub.stopFlightRecording()) {
                    BenchSupport.progress(err, "hub flight recording of the broadcast written to " + hubJfr.toAbsolutePath());
                }
                double machineDuringBroadcast = bc0.machinePercentUntil(bc1);
                long[] lat = new long[count];
                int got = 0;
                int wrongKind = 0;
                for (int i = 0; i < count; i++) {
                    HeldStreams.Held s = fleet.stream(i);
                    if (s.firstEventAt != 0) {
                        lat[got++] = s.firstEventAt - b0;
                        if (!"broadcast".equals(s.firstEvent)) {
                            wrongKind++;
                        }
                    }
                }
                lat = Arrays.copyOf(lat, got);
                Arrays.sort(lat);
                OptionalLong rssAfter = Machine.rssBytes(pid);
                List<Map<String, Object>> later = new ArrayList<>();
                for (int b = 2; b <= 1 + repeat; b++) {
                    HttpConnection again = new HttpConnection(hub.host(), hub.port(), 120_000);
                    long t0 = System.nanoTime();
                    HttpConnection.Response r2 = again.call("POST", "/v1/broadcasts", hub.adminToken(), body);
                    long t1 = System.nanoTime();
                    again.close();
                    if (r2.status() != 202) {
                        throw new IllegalStateException("POST /v1/broadcasts answered " + r2.status() + ": " + r2.body());
                    }
                    long deadline2 = t1 + TimeUnit.SECONDS.toNanos(broadcastTimeout);
                    while (fleet.withEventsCount(b) < opened && System.nanoTime() < deadline2) {
                        Thread.sleep(2);
                    }
                    long[] l = new long[count];
                    int n = 0;
                    for (int i = 0; i < count; i++) {
                        HeldStreams.Held s = fleet.stream(i);
                        if (s.events >= b) {
                            l[n++] = s.eventAt[b - 1] - t0;
                        }
                    }
                    l = Arrays.copyOf(l, n);
                    Arrays.sort(l);
                    Map<String, Object> o = new LinkedHashMap<>();
                    o.put("ackMs", BenchSupport.round((t1 - t0) / 1e6));
                    o.put("seen", n);
                    o.put("p50Ms", BenchSupport.round(BenchSupport.pct(l, 50)));
                    o.put("p99Ms", BenchSupport.round(BenchSupport.pct(l, 99)));
                    o.put("maxMs", BenchSupport.round(BenchSupport.max(l)));
                    later.add(o);
                }
                OptionalLong rssPeak = Machine.statusBytes(pid, "VmHWM");
                int closedEarly = 0;
                for (int i = 0; i < count; i++) {
                    HeldStreams.Held s = fleet.stream(i);
                    if (s.readyAt != 0 && s.ended) {
                        closedEarly++;
                    }
                }
                if (histogram > 0) {
                    BenchSupport.progress(err, "live heap of the hub after the broadcast:\n" + hub.classHistogram(histogram));
                }
                hub.gc();
                long[] heapLive = hub.heap();
                OptionalLong rssAfterGc = Machine.rssBytes(pid);
                double load1 = BenchSupport.loadAverage();

                long missed = count - got;
                Report report = new Report(String.format(Locale.ROOT,
                        "parley bench streams: %,d idle SSE streams, hub %s, %d client selector threads", count,
                        hub.isChild() ? "in a child process (RSS is the hub's alone)" : "in this process (RSS includes the client)",
                        selectors));
                report.row("nodes created", "%,d (%d leads of up to %d) in %.1f s", leads + count, leads, perLead, createSeconds);
                report.row("streams ready", "%,d of %,d (%d failed, %d closed by the hub)", opened, count,
                        fleet.failedCount(), closedEarly);
                report.row("connect all (first start to last ready)", "%.2f s (%,.0f streams/s)", openSeconds,
                        opened / Math.max(1e-9, openSeconds));
                report.row("connect per stream p50 / p99 / max", "%s ms (at most %d connecting at once)",
                        BenchSupport.triple(connect), connecting);
                report.row("hub RSS: start / nodes / " + count + " streams", "%s / %s / %s", Machine.mib(rssStart),
                        Machine.mib(rssNodes), Machine.mib(rssIdle));
                report.row("hub RSS per stream", "%s", perStream(rssNodes, rssIdle, count));
                report.row("hub heap used / committed (idle)", "%s", heap(heapIdle));
                report.row("hub threads / open files / fd limit", "%s / %s / %s", threads.orElse(-1), fds.orElse(-1),
                        hub.openFilesLimit().orElse(-1));
                report.row("hub open streams (metric)", "%.0f", hubStreams);
                report.row("broadcast 202 (commit of all envelopes)", "%.2f ms, delivered %,d", (b1 - b0) / 1e6, delivered);
                report.row("broadcast seen by streams", "%,d of %,d%s", got, count,
                        wrongKind > 0 ? " (" + wrongKind + " saw another event first)" : "");
                report.row("broadcast latency p50 / p99 / max", "%s ms", BenchSupport.triple(lat));
                report.row("machine busy during the broadcast", "%.0f%%", machineDuringBroadcast);
                for (int b = 0; b < later.size(); b++) {
                    Map<String, Object> o = later.get(b);
                    report.row("broadcast " + (b + 2) + ": 202 / seen / p50 / p99 / max",
                            "%s ms / %,d / %s / %s / %s ms", o.get("ackMs"), o.get("seen"), o.get("p50Ms"),
                            o.get("p99Ms"), o.get("maxMs"));
                }
                report.row("hub RSS after broadcast / peak (VmHWM)", "%s / %s", Machine.mib(rssAfter), Machine.mib(rssPeak));
                report.row("hub heap live after full GC / RSS then", "%s / %s", heap(heapLive), Machine.mib(rssAfterGc));
                report.row("load average before / after", "%.2f / %.2f", load0, load1);
                report.row("hub JVM options", "%s", String.join(" ", hub.javaOptions()));

                Map<String, Object> o = report.json();
                report.put("hubJavaOptions", hub.javaOptions());
                report.put("count", count).put("leads", leads).put("perLead", perLead).put("hubInChildProcess", hub.isChild());
                report.put("openFilesLimit", hub.openFilesLimit().isPresent() ? hub.openFilesLimit().getAsLong() : null);
                report.put("nodesCreateSeconds", createSeconds);
                report.put("ready", opened).put("failed", fleet.failedCount()).put("closedByHub", closedEarly);
                report.put("connectSeconds", openSeconds);
                report.put("connectP50Ms", BenchSupport.pct(connect, 50)).put("connectP99Ms", BenchSupport.pct(connect, 99))
                        .put("connectMaxMs", BenchSupport.max(connect));
                report.put("rssStartMiB", Machine.mibValue(rssStart)).put("rssNodesMiB", Machine.mibValue(rssNodes))
                        .put("rssMiB", Machine.mibValue(rssIdle)).put("rssAfterBroadcastMiB", Machine.mibValue(rssAfter))
                        .put("rssPeakMiB", Machine.mibValue(rssPeak)).put("rssAfterGcMiB", Machine.mibValue(rssAfterGc));
                report.put("heapUsedMiB", heapIdle == null ? null : heapIdle[0] / 1048576.0)
                        .put("heapCommittedMiB", heapIdle == null ? null : heapIdle[1] / 1048576.0)
                        .put("heapLiveMiB", heapLive == null ? null : heapLive[0] / 1048576.0);
                report.put("hubThreads", threads.isPresent() ? threads.getAsLong() : null)
                        .put("hubOpenFiles", fds.isPresent() ? fds.getAsLong() : null);
                report.put("broadcastAckMs", (b1 - b0) / 1e6).put("broadcastDelivered", delivered);
                report.put("broadcastSeen", got).put("broadcastMissed", missed);
                report.put("broadcastP50Ms", BenchSupport.pct(lat, 50)).put("broadcastP99Ms", BenchSupport.pct(lat, 99))
                        .put("broadcastMaxMs", BenchSupport.max(lat));
                report.put("machineCpuPercentDuringBroadcast", machineDuringBroadcast);
                report.put("laterBroadcasts", later);
                report.put("loadBefore", load0).put("loadAfter", load1).put("cores", Runtime.getRuntime().availableProcessors());
                Map<String, Object> goals = new LinkedHashMap<>();
                goals.put("rssUnder1GiB", rssIdle.isPresent() ? rssIdle.getAsLong() < (1L << 30) : null);
                goals.put("broadcastP99Under1s", got == count && BenchSupport.pct(lat, 99) <= 1000);
                o.put("goals", goals);
                report.print(out, output.json);
                return opened == count && missed == 0 && wrongKind == 0 ? 0 : 1;
            }
        }
    }

    private static String firstError(HeldStreams fleet) {
        for (int i = 0; i < fleet.size(); i++) {
            String e = fleet.stream(i).error;
            if (e != null) {
                return "; first error: " + e;
            }
        }
        return "";
    }

    private static String perStream(OptionalLong before, OptionalLong after, int n) {
        if (before.isEmpty() || after.isEmpty()) {
            return "n/a";
        }
        return String.format(Locale.ROOT, "%.1f KiB ((RSS with streams - RSS before) / %d)",
                (after.getAsLong() - before.getAsLong()) / 1024.0 / n, n);
    }

    private static String heap(long[] h) {
        return h == null ? "n/a" : Machine.mib(h[0]) + " / " + Machine.mib(h[1]);
    }
}
