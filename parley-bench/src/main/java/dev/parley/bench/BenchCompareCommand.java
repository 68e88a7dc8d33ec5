package dev.parley.bench;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code parley bench compare}: the same closed-loop workload, in the same run, on Parley and
 * on NATS JetStream. Parley: a hub on a temporary directory, N senders each waiting for its
 * 202, 1 KiB texts over M inboxes each followed by an SSE stream ({@link ParleyWorkload}).
 * JetStream: a {@code nats-server -js} started by the bench on a free loopback port with a
 * temporary store, one file-storage stream, N synchronous publishers of the same request
 * bodies, one ordered consumer per subject ({@link JetStreamWorkload}). Latency is send
 * start to arrival at the reader on both sides. With {@code --batch N}, Parley's senders POST
 * N envelopes per request to {@code /v1/messages:batch} (one commit each) and JetStream's
 * publishers publish asynchronously with up to N PubAcks outstanding. With {@code --rounds N} both
 * sides are measured N times, the order alternating, and the headline ratio is the rounds' median.
 */
@Command(name = "compare", mixinStandardHelpOptions = true, resourceBundle = "dev.parley.bench.BenchCompareCommand",
        description = {"Run the same send workload on Parley and on NATS JetStream and compare them.",
                "",
                "Parley: a hub on a temporary directory, N closed-loop senders (each waits for its 202) over M inboxes "
                        + "each followed by an SSE stream. JetStream: nats-server -js started by the bench on a free "
                        + "loopback port and a temporary store (stopped by PID at the end), one file-storage stream "
                        + "over bench.>, N synchronous publishers of the same bodies, one ordered consumer per subject. "
                        + "Prints sends/s and publish-to-reader latency of both and the throughput ratio. "
                        + "Parley fsyncs every accepted message before its 202; JetStream's file store by default "
                        + "does not (it syncs every 2 minutes); see --jetstream-sync. The nats-server binary is "
                        + "$PARLEY_NATS_SERVER when set, else the first on PATH, else /usr/sbin/nats-server."})
public final class BenchCompareCommand implements Callable<Integer> {
    /** The machine's wake-up round trip, measured in this many batches of this many (about half a second). */
    private static final int WAKE_BATCHES = 5;
    private static final int WAKE_ROUND_TRIPS = 4_000;

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

    @ParentCommand
    BenchCommand bench;

    @Mixin
    HubPlacementOption placement = new HubPlacementOption();

    @Option(names = "--jetstream-sync", defaultValue = "default",
            description = "default: nats-server's own fsync policy (sync_interval 2 min); always: a config file with "
                    + "`jetstream { sync_interval: always }` (nats-server >= 2.10; older servers are refused with a "
                    + "message) (default: ${DEFAULT-VALUE}).")
    String jetstreamSync;

    @Option(names = "--jetstream-connections", paramLabel = "N",
            description = "Client connections the JetStream publishers share (default: one per publisher, like "
                    + "Parley's senders).")
    Integer jetstreamConnections;

    @Option(names = "--only", description = "Run one side only: parley or jetstream (no ratio).")
    String only;

    @Option(names = "--batch", paramLabel = "N", defaultValue = "1",
            description = "Producers send in batches of N (1 to 1000): Parley's senders POST N envelopes per request to "
                    + "/v1/messages:batch (one fsynced commit each, every envelope counted); JetStream's publishers use "
                    + "publishAsync with up to N PubAcks outstanding (default: ${DEFAULT-VALUE}, single sends and "
                    + "synchronous publishes).")
    int batch;

    @Option(names = "--floor",
            description = "Also run the floor under Parley's side, in the same run: the hub's HTTP edge (its "
                    + "HttpEdge, routes and connection ledger, the same senders and SSE readers) doing none of the hub's work, "
                    + "once answering at once (side http), once after a group commit that appends and fsyncs the "
                    + "bodies to a file (side http+fsync), and once with that commit's thread writing each frame to "
                    + "its stream itself instead of waking the stream's thread (side http+direct). Not with --batch "
                    + "or --only jetstream.")
    boolean floor;

    @Option(names = "--rounds", paramLabel = "N", defaultValue = "1",
            description = "Measure both sides N times, each time on a fresh hub and nats-server, the order alternating "
                    + "(Parley first in odd rounds, JetStream first in even ones); with more than one round the "
                    + "headline ratio is the median of the rounds' ratios, since one run's ratio moves with what "
                    + "else the machine does. Not with --only or --floor (default: ${DEFAULT-VALUE}).")
    int rounds;

    /** CPU readings at a window edge: this process, a server process, the machine. */
    private record Cpu(long selfNanos, long serverTicks, long[] machine) {
        static Cpu now(long serverPid) {
            return new Cpu(BenchSupport.processCpuNanos(), serverPid > 0 ? BenchSupport.cpuTicks(serverPid) : -1,
                    BenchSupport.machineCpuTicks());
        }
    }

    /** One side's figures and where its CPU went. */
    private record Side(String name, LoadResult r, double selfCpu, double serverCpu, double machineBusy, double loadBefore) {
        Side named(String other) {
            return new Side(other, r, selfCpu, serverCpu, machineBusy, loadBefore);
        }

        boolean ok() {
            return r.accepted > 0 && r.lost == 0;
        }

        /** The server process's CPU in the window, in microseconds a message acknowledged in it. */
        double serverMicrosEach() {
            return microsEach(serverCpu);
        }

        /** This JVM's CPU in the window (the hub's too when it runs here), in microseconds a message. */
        double clientMicrosEach() {
            return microsEach(selfCpu);
        }

        private double microsEach(double percentOfCores) {
            return percentOfCores / 100 * Runtime.getRuntime().availableProcessors() * 1e6 / r.perSecond();
        }
    }

    /** Both sides (or the one asked for) measured once, one after the other. */
    private record Round(Side parley, Side jetstream, boolean parleyFirst) {
        /** Parley's sends/s over JetStream's; null unless both sides ran. */
        Double ratio() {
            return parley != null && jetstream != null ? parley.r.perSecond() / jetstream.r.perSecond() : null;
        }

        List<Side> sides() {
            List<Side> sides = new ArrayList<>(2);
            if (parley != null) {
                sides.add(parley);
            }
            if (jetstream != null) {
                sides.add(jetstream);
            }
            return sides;
        }
    }

    @Override
    public Integer call() throws Exception {
        quick.unlessGiven("--senders", () -> load.senders = 16).unlessGiven("--inboxes", () -> targets.inboxes = 16)
                .unlessGiven("--warmup", () -> window.warmup = 1).unlessGiven("--seconds", () -> window.seconds = 3)
                .unlessGiven("--jit-settle", () -> settle.jitSettle = false);
        validate();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        boolean runParley = only == null || only.equals("parley");
        boolean runJetStream = only == null || only.equals("jetstream");
        if (runJetStream && NatsServerProcess.find().isEmpty()) {
            err.println("parley bench compare: " + NatsServerProcess.missingMessage());
            err.flush();
            return 2;
        }
        if (runJetStream && jetstreamSync.equals("always")) {
            var problem = NatsServerProcess.syncAlwaysProblem(NatsServerProcess.find().orElseThrow());
            if (problem.isPresent()) {
                err.println("parley bench compare: --jetstream-sync always: " + problem.get());
                err.flush();
                return 2;
            }
        }
        String natsVersion = runJetStream ? NatsServerProcess.version(NatsServerProcess.find().orElseThrow()) : null;
        double wakeMicros = Machine.wakeRoundTripMicros(WAKE_BATCHES, WAKE_ROUND_TRIPS); // before any load
        List<Round> all = new ArrayList<>(rounds);
        for (int i = 1; i <= rounds; i++) {
            boolean parleyFirst = i % 2 == 1;
            Side parley = runParley && parleyFirst ? runParley(err) : null;
            Side jetstream = runJetStream ? runJetStream(err) : null;
            if (runParley && !parleyFirst) {
                parley = runParley(err);
            }
            all.add(rounds == 1 ? new Round(parley, jetstream, true)
                    : new Round(parley.named("parley " + i), jetstream.named("jetstream " + i), parleyFirst));
        }
        Map<TransportFloor.Kind, Side> floors = new EnumMap<>(TransportFloor.Kind.class);
        if (floor) {
            for (TransportFloor.Kind kind : TransportFloor.Kind.values()) {
                floors.put(kind, runFloor(kind, err));
            }
        }
        print(out, all, floors, natsVersion, wakeMicros);
        boolean ok = all.stream().allMatch(r -> (r.parley() == null || r.parley().ok())
                && (r.jetstream() == null || r.jetstream().r.accepted > 0)) && floors.values().stream().allMatch(Side::ok);
        return ok ? 0 : 1;
    }

    private Side runParley(PrintWriter err) throws Exception {
        double loadBefore = BenchSupport.loadAverage();
        boolean child = placement.child();
        try (BenchHub hub = placement.launcher(bench).start();
             ParleyWorkload work = new ParleyWorkload(load.senders, targets.inboxes, load.size, err).batch(batch)) {
            BenchSupport.progress(err, "parley: hub " + (child ? "pid " + hub.pid() + " " : "in this JVM ") + "at "
                    + hub.url());
            work.createNodes(hub);
            work.openStreams(hub.host(), hub.port());
            long serverPid = child ? hub.pid() : -1;
            Cpu[] edges = new Cpu[2];
            LoadResult r = work.measure(settle.warmup(window.warmup, hub), window.seconds, drain.seconds,
                    w0 -> edges[0] = Cpu.now(serverPid), w1 -> edges[1] = Cpu.now(serverPid));
            return side("parley", r, edges, loadBefore);
        }
    }

    private Side runJetStream(PrintWriter err) throws Exception {
        double loadBefore = BenchSupport.loadAverage();
        int conns = jetstreamConnections != null ? jetstreamConnections : load.senders;
        try (NatsServerProcess server = NatsServerProcess.start(jetstreamSync.equals("always"), err);
             JetStreamWorkload work = new JetStreamWorkload(server.url(), load.senders, targets.inboxes, load.size, conns,
                     batch, err)) {
            work.setUp();
            Cpu[] edges = new Cpu[2];
            // nats-server compiles nothing: this side's JIT is its client code's, in this JVM
            LoadResult r = work.measure(settle.warmup(window.warmup), window.seconds, drain.seconds,
                    w0 -> edges[0] = Cpu.now(server.pid()),
                    w1 -> edges[1] = Cpu.now(server.pid()));
            return side("jetstream", r, edges, loadBefore);
        }
    }

    private Side runFloor(TransportFloor.Kind kind, PrintWriter err) throws Exception {
        double loadBefore = BenchSupport.loadAverage();
        try (TransportFloor work = new TransportFloor(kind, load.senders, targets.inboxes, load.size, err)) {
            Cpu[] edges = new Cpu[2];
            LoadResult r = work.measure(settle.warmup(window.warmup), window.seconds, drain.seconds, w0 -> edges[0] = Cpu.now(-1),
                    w1 -> edges[1] = Cpu.now(-1));
            return side(kind.side, r, edges, loadBefore);
        }
    }

    private static Side side(String name, LoadResult r, Cpu[] edges, double loadBefore) {
        int cores = Runtime.getRuntime().availableProcessors();
        double windowNanos = r.windowSeconds * 1e9;
        double self = edges[0].selfNanos() < 0 ? Double.NaN
                : 100.0 * (edges[1].selfNanos() - edges[0].selfNanos()) / windowNanos / cores;
        double server = edges[0].serverTicks() < 0 || edges[1].serverTicks() < 0 ? Double.NaN
                : 100.0 * (edges[1].serverTicks() - edges[0].serverTicks()) / 100.0 / r.windowSeconds / cores;
        double machine = BenchSupport.machineBusyPercent(edges[0].machine(), edges[1].machine());
        return new Side(name, r, self, server, machine, loadBefore);
    }

    private void validate() {
        load.validate();
        targets.validate();
        window.validate();
        settle.validate();
        placement.child(); // checks --hub
        if (!jetstreamSync.equals("default") && !jetstreamSync.equals("always")) {
            throw new ParameterException(spec.commandLine(), "--jetstream-sync must be default or always");
        }
        if (jetstreamConnections != null && jetstreamConnections < 1) {
            throw new ParameterException(spec.commandLine(), "--jetstream-connections must be at least 1");
        }
        if (batch < 1 || batch > 1000) {
            throw new ParameterException(spec.commandLine(), "--batch must be between 1 and 1000 (the hub's batch limit)");
        }
        if (only != null && !only.equals("parley") && !only.equals("jetstream")) {
            throw new ParameterException(spec.commandLine(), "--only must be parley or jetstream");
        }
        if (rounds < 1 || rounds > 20) {
            throw new ParameterException(spec.commandLine(), "--rounds must be between 1 and 20");
        }
        if (rounds > 1 && (only != null || floor)) {
            throw new ParameterException(spec.commandLine(), "--rounds compares the two sides round by round: "
                    + "not with --only or --floor");
        }
        if (floor && (batch > 1 || "jetstream".equals(only))) {
            throw new ParameterException(spec.commandLine(), "--floor measures single sends beside Parley's side: "
                    + "not with --batch or --only jetstream");
        }
    }

    private void print(PrintWriter out, List<Round> all, Map<TransportFloor.Kind, Side> floors, String natsVersion,
                       double wakeMicros) {
        Side parley = all.getFirst().parley();
        Side jetstream = all.getFirst().jetstream();
        out.printf(Locale.ROOT, "parley bench compare: %d senders -> %d inboxes/subjects, %d-byte text, warm-up %s, "
                + "window %d s per side%s%s%n", load.senders, targets.inboxes, load.size,
                settle.warmup(window.warmup).describe(),
                window.seconds,
                batch > 1 ? ", batches of " + batch + " (parley: POST /v1/messages:batch; jetstream: publishAsync, "
                        + batch + " acks outstanding)" : "",
                all.size() > 1 ? ", " + all.size() + " rounds (parley first in odd rounds, jetstream in even ones)" : "");
        String fmt = "  %-12s %9s %9s %9s %9s %9s %9s %7s %6s %6s %7s %7s %6s %7s %7s%n";
        out.printf(Locale.ROOT, fmt, "side", "sends/s", "p50 ms", "p99 ms", "max ms", "ack p50", "ack p99", "errors",
                "lost", "load", "server", "client", "machine", "srv us", "cli us");
        List<Side> sides = new ArrayList<>();
        all.forEach(r -> sides.addAll(r.sides()));
        sides.addAll(floors.values());
        for (Side s : sides) {
            LoadResult r = s.r;
            out.printf(Locale.ROOT, fmt, s.name, String.format(Locale.ROOT, "%,.0f", r.perSecond()),
                    BenchSupport.ms(r.p50Ms()), BenchSupport.ms(r.p99Ms()), BenchSupport.ms(BenchSupport.max(r.e2e)),
                    BenchSupport.ms(BenchSupport.pct(r.ack, 50)), BenchSupport.ms(BenchSupport.pct(r.ack, 99)),
                    Long.toString(r.errors), Long.toString(r.lost),
                    String.format(Locale.ROOT, "%.1f", s.loadBefore), pctOrDash(s.serverCpu), pctOrDash(s.selfCpu),
                    pctOrDash(s.machineBusy), microsOrDash(s.serverMicrosEach()), microsOrDash(s.clientMicrosEach()));
        }
        List<Double> ratios = all.stream().map(Round::ratio).filter(Objects::nonNull).toList();
        Double ratio = ratios.isEmpty() ? null : BenchSupport.round(BenchSupport.median(ratios));
        if (ratio != null && all.size() == 1) {
            out.printf(Locale.ROOT, "  ratio (parley sends/s / jetstream sends/s): %.2fx%n", ratio);
        } else if (ratio != null) {
            out.printf(Locale.ROOT, "  ratio each round (parley sends/s / jetstream sends/s): %s%n", ratios.stream()
                    .map(x -> String.format(Locale.ROOT, "%.2fx", x)).collect(Collectors.joining(" ")));
            out.printf(Locale.ROOT, "  ratio, median of %d rounds: %.2fx (lowest %.2fx, highest %.2fx)%n", ratios.size(),
                    ratio, ratios.stream().mapToDouble(Double::doubleValue).min().orElseThrow(),
                    ratios.stream().mapToDouble(Double::doubleValue).max().orElseThrow());
            out.printf(Locale.ROOT, "  p99 ms, median of the rounds: parley %s, jetstream %s%n",
                    BenchSupport.ms(medianOf(all, Round::parley)), BenchSupport.ms(medianOf(all, Round::jetstream)));
        }
        for (Side f : floors.values()) {
            out.printf(Locale.ROOT, "  %s floor: parley reaches %.2f of it%s%n", f.name,
                    parley == null ? Double.NaN : parley.r.perSecond() / f.r.perSecond(),
                    jetstream == null ? "" : String.format(Locale.ROOT, "; it is %.2fx jetstream",
                            f.r.perSecond() / jetstream.r.perSecond()));
        }
        if (!floors.isEmpty()) {
            out.println("  floor: the hub's HTTP transport with none of its work (http: answered at once; http+fsync: "
                    + "after a group commit appending and fsyncing the bodies to a file; http+direct: the same, the "
                    + "commit's thread writing each frame to its stream, no stream thread woken); cpu in its client "
                    + "column");
        }
        if (settle.jitSettle) {
            out.println("  warm-up taken: " + sides.stream().map(s -> s.name + " " + s.r.warmupTaken())
                    .collect(Collectors.joining(", ")) + "; quiet: " + JitQuiet.RULE + " (in the side's JVMs)");
        }
        out.println("  latency: send start -> arrival at the reader (SSE stream / ordered consumer); ack: 202 / PubAck");
        out.println("  cpu: % of all cores in the window; server: the nats-server (or child hub) process; client: this JVM"
                + (!placement.child() && parley != null ? " (hub included on the parley side)" : "")
                + "; srv us, cli us: their CPU in microseconds a message acknowledged in the window");
        out.println("  durability at ack: parley fsyncs every accepted message before its 202 (SQLite WAL, synchronous=FULL);");
        out.println("    jetstream " + (jetstreamSync.equals("always")
                ? "runs with sync_interval: always (fsync before the PubAck)"
                : "uses nats-server's default (fsync every 2 min, PubAck before fsync)")
                + (natsVersion == null ? "" : ", nats-server " + natsVersion));
        out.printf(Locale.ROOT, "  machine: a wake-up round trip between two threads %.1f us (median of %d x %,d, before the"
                + " first side); a send crosses the hub's threads several times, so its CPU a send follows this%n",
                wakeMicros, WAKE_BATCHES, WAKE_ROUND_TRIPS);
        for (Side s : sides) {
            if (!s.r.errorKinds.isEmpty()) {
                out.println("  " + s.name + " errors: " + s.r.errorKinds);
            }
        }
        if (output.json) {
            Map<String, Object> o = new LinkedHashMap<>();
            if (all.size() == 1) {
                if (parley != null) {
                    o.put("parley", sideJson(parley));
                }
                if (jetstream != null) {
                    o.put("jetstream", sideJson(jetstream));
                }
            } else {
                o.put("rounds", all.stream().map(r -> {
                    Map<String, Object> round = new LinkedHashMap<>();
                    round.put("first", r.parleyFirst() ? "parley" : "jetstream");
                    round.put("parley", sideJson(r.parley()));
                    round.put("jetstream", sideJson(r.jetstream()));
                    round.put("ratio", BenchSupport.round(r.ratio()));
                    return round;
                }).toList());
                o.put("parleyP99MsMedian", BenchSupport.round(medianOf(all, Round::parley)));
                o.put("jetstreamP99MsMedian", BenchSupport.round(medianOf(all, Round::jetstream)));
            }
            floors.forEach((kind, f) -> o.put(kind.json, sideJson(f)));
            o.put("ratio", ratio);
            o.put("senders", load.senders);
            o.put("inboxes", targets.inboxes);
            o.put("size", load.size);
            o.put("warmupSeconds", window.warmup);
            o.put("jitSettle", settle.jitSettle);
            if (settle.jitSettle) {
                o.put("maxWarmupSeconds", settle.maxWarmup);
            }
            o.put("seconds", window.seconds);
            o.put("batch", batch);
            o.put("hub", placement.where);
            o.put("jetstreamSync", jetstreamSync);
            o.put("jetstreamConnections", jetstreamConnections != null ? jetstreamConnections : load.senders);
            o.put("natsServer", natsVersion);
            o.put("cores", Runtime.getRuntime().availableProcessors());
            o.put("wakeRoundTripMicros", BenchSupport.round(wakeMicros));
            out.println(Report.toJson(o));
        }
        out.flush();
    }

    /** The median over the rounds of one side's end-to-end p99, in milliseconds. */
    private static double medianOf(List<Round> all, Function<Round, Side> side) {
        return BenchSupport.median(all.stream().map(side).map(s -> s.r.p99Ms()).toList());
    }

    private static Map<String, Object> sideJson(Side s) {
        Map<String, Object> o = s.r.summary();
        o.put("serverCpuPercent", BenchSupport.round(s.serverCpu));
        o.put("clientCpuPercent", BenchSupport.round(s.selfCpu));
        o.put("machineBusyPercent", BenchSupport.round(s.machineBusy));
        o.put("serverCpuMicrosEach", BenchSupport.round(s.serverMicrosEach()));
        o.put("clientCpuMicrosEach", BenchSupport.round(s.clientMicrosEach()));
        o.put("loadBefore", BenchSupport.round(s.loadBefore));
        return o;
    }

    private static String pctOrDash(double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.0f%%", v);
    }

    private static String microsOrDash(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.1f", v) : "-";
    }
}
