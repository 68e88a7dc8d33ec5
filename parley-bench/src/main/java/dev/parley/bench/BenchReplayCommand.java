package dev.parley.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.bench.http.HttpConnection;
import dev.parley.bench.http.SseStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code parley bench replay}: one inbox holding N envelopes, replayed over SSE from a
 * cursor. The inbox is filled by many concurrent closed-loop senders (durable sends, each
 * answered 202 after its commit); nothing reads it meanwhile. Then, for each round, one
 * stream resumes with {@code Last-Event-ID: 0} (everything) and one with
 * {@code Last-Event-ID: N/2} (the second half); each is timed from the request to the
 * frame of the last seq, and its seqs must arrive in order without gaps.
 */
@Command(name = "replay", mixinStandardHelpOptions = true, resourceBundle = "dev.parley.bench.BenchReplayCommand",
        description = {"Fill one inbox with N envelopes, then time SSE replays from cursor 0 and from the middle.",
                "",
                "Starts a hub in this process on a temporary directory (removed afterwards), fills one inbox with "
                        + "concurrent senders, then opens streams with Last-Event-ID: 0 and Last-Event-ID: N/2 and "
                        + "reports envelopes/s from the request to the last frame. Exits 1 when a replay missed, "
                        + "repeated or reordered a seq."})
public final class BenchReplayCommand implements Callable<Integer> {
    private static final String LEAD = "bench-lead";
    private static final String INBOX = "bench-replay-in";

    @Spec
    CommandSpec spec;

    @Mixin
    SenderOptions load = new SenderOptions(256, 1, 200_000);

    @Mixin
    OutputOptions output = new OutputOptions();

    @Mixin
    QuickOption quick = new QuickOption();

    @Mixin
    JitSettleOptions settle = new JitSettleOptions();

    @ParentCommand
    BenchCommand bench;

    @Option(names = "--envelopes", defaultValue = "200000",
            description = "Envelopes in the inbox (default: ${DEFAULT-VALUE}; the fill may overshoot by a few).")
    int envelopes;

    @Option(names = "--rounds", defaultValue = "3",
            description = "Replays from each cursor; the table shows each, the JSON the best and the median (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Mixin
    HubPlacementOption placement = new HubPlacementOption();

    @Option(names = "--replay-timeout", defaultValue = "300",
            description = "Seconds one replay may take before it counts as failed (default: ${DEFAULT-VALUE}).")
    int replayTimeout;

    @Option(names = "--jfr", paramLabel = "FILE",
            description = "Record the replays (not the fill) with JDK Flight Recorder into FILE (profile settings).")
    java.nio.file.Path jfr;

    @Override
    public Integer call() throws Exception {
        quick.unlessGiven("--envelopes", () -> envelopes = 2000).unlessGiven("--senders", () -> load.senders = 16)
                .unlessGiven("--rounds", () -> rounds = 1).unlessGiven("--jit-settle", () -> settle.jitSettle = false);
        load.validate();
        settle.validate();
        if (envelopes < 2 || rounds < 1 || replayTimeout < 1) {
            throw new ParameterException(spec.commandLine(),
                    "--envelopes must be at least 2, --rounds and --replay-timeout positive");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        double load0 = BenchSupport.loadAverage();
        try (BenchHub hub = placement.launcher(bench).start()) {
            BenchSupport.progress(err, "hub at " + hub.url() + (hub.isChild() ? " (child process " + hub.pid() + ")" : " (in process)"));
            hub.createNode(LEAD, null);
            String inboxToken = hub.createNode(INBOX, LEAD);
            List<BenchHub.NodeSpec> tx = new ArrayList<>();
            for (int i = 0; i < load.senders; i++) {
                tx.add(new BenchHub.NodeSpec(ParleyWorkload.senderId(i), LEAD));
            }
            String[] senderTokens = hub.createNodes(tx, 8);

            // fill
            long f0 = System.nanoTime();
            long head = fill(hub, senderTokens, err);
            double fillSeconds = (System.nanoTime() - f0) / 1e9;
            BenchSupport.progress(err, String.format(Locale.ROOT, "filled %s with %,d envelopes in %.1f s (%,.0f sends/s)",
                    INBOX, head, fillSeconds, head / fillSeconds));
            Thread.sleep(500); // let the writer settle
            // the fill compiled the send path; the replays' own code compiles in the first replays
            Warmup warmup = settle.warmup(0, hub);
            WarmupReplays warmedUp = warmup.untilJitQuiet() ? warmUp(hub, inboxToken, head, warmup, err) : null;

            long middle = head / 2;
            List<Replay> fromStart = new ArrayList<>();
            List<Replay> fromMiddle = new ArrayList<>();
            try (BenchJfr recording = BenchJfr.start(jfr, err)) {
                for (int r = 0; r < rounds; r++) {
                    fromStart.add(replay(hub, inboxToken, 0, head));
                    BenchSupport.progress(err, "round " + (r + 1) + " from cursor 0: " + fromStart.getLast());
                    fromMiddle.add(replay(hub, inboxToken, middle, head));
                    BenchSupport.progress(err, "round " + (r + 1) + " from cursor " + middle + ": " + fromMiddle.getLast());
                }
            }
            double load1 = BenchSupport.loadAverage();

            Report report = new Report(String.format(Locale.ROOT,
                    "parley bench replay: one inbox of %,d envelopes (%d-byte text), SSE replay with Last-Event-ID, hub %s",
                    head, load.size, hub.isChild() ? "in a child process" : "in this process"));
            report.row("fill (" + load.senders + " concurrent senders)", "%,d envelopes in %.1f s (%,.0f sends/s)", head,
                    fillSeconds, head / fillSeconds);
            for (int r = 0; r < rounds; r++) {
                report.row("round " + (r + 1) + ": from cursor 0", fromStart.get(r).toString());
                report.row("round " + (r + 1) + ": from cursor " + middle, fromMiddle.get(r).toString());
            }
            report.row("best from cursor 0 / from the middle", "%,.0f / %,.0f envelopes/s", best(fromStart), best(fromMiddle));
            report.row("median from cursor 0 / from the middle", "%,.0f / %,.0f envelopes/s", median(fromStart),
                    median(fromMiddle));
            report.row("load average before / after", "%.2f / %.2f", load0, load1);
            if (warmedUp != null) {
                report.row("warm-up: replays from cursor 0", "%d in %.1f s, %s", warmedUp.replays(), warmedUp.seconds(),
                        warmedUp.jitQuiet() ? "until the JIT was quiet (" + JitQuiet.RULE + ")"
                                : "the JIT not quiet after " + warmup.mostSeconds() + " s");
                report.put("warmupReplays", warmedUp.replays()).put("warmedUpSeconds", warmedUp.seconds())
                        .put("jitQuiet", warmedUp.jitQuiet());
            }

            boolean ok = fromStart.stream().allMatch(Replay::complete) && fromMiddle.stream().allMatch(Replay::complete);
            report.put("envelopes", head).put("size", load.size).put("senders", load.senders).put("rounds", rounds);
            report.put("hubInChildProcess", hub.isChild());
            report.put("fillSeconds", fillSeconds).put("fillPerSec", head / fillSeconds);
            report.put("fromStart", summary(fromStart, head)).put("fromMiddle", summary(fromMiddle, head - middle));
            report.put("middleCursor", middle);
            report.put("complete", ok);
            report.put("loadBefore", load0).put("loadAfter", load1).put("cores", Runtime.getRuntime().availableProcessors());
            Map<String, Object> goals = new LinkedHashMap<>();
            goals.put("atLeast200kPerSec", Math.min(median(fromStart), median(fromMiddle)) >= 200_000);
            report.json().put("goals", goals);
            report.print(out, output.json);
            return ok ? 0 : 1;
        }
    }

    /** The unmeasured replays before the rounds: how many, how long, whether the JIT went quiet meanwhile. */
    record WarmupReplays(int replays, double seconds, boolean jitQuiet) {
    }

    /** Replays from cursor 0, one after another, until the JIT is quiet or the warm-up's most, and the last one ends. */
    private WarmupReplays warmUp(BenchHub hub, String token, long head, Warmup warmup, PrintWriter err) throws Exception {
        BenchSupport.progress(err, "warming up: replays from cursor 0 until the JIT is quiet (" + warmup.mostSeconds()
                + " s at most)");
        long t0 = System.nanoTime();
        AtomicBoolean enough = new AtomicBoolean();
        AtomicInteger replays = new AtomicInteger();
        AtomicReference<Exception> failed = new AtomicReference<>();
        Thread replaying = Thread.ofPlatform().daemon().name("bench-replay-warmup").start(() -> {
            try {
                while (!enough.get()) {
                    if (!replay(hub, token, 0, head).complete()) {
                        throw new IllegalStateException("a warm-up replay from cursor 0 ended incomplete");
                    }
                    replays.incrementAndGet();
                }
            } catch (Exception e) {
                failed.set(e);
            }
        });
        boolean quiet = JitQuiet.await(warmup.jitOf(), t0 + TimeUnit.SECONDS.toNanos(warmup.mostSeconds()));
        enough.set(true);
        replaying.join();
        if (failed.get() != null) {
            throw failed.get();
        }
        return new WarmupReplays(replays.get(), (System.nanoTime() - t0) / 1e9, quiet);
    }

    /** Sends until the inbox holds at least {@code envelopes}; returns the inbox's last seq. */
    private long fill(BenchHub hub, String[] tokens, PrintWriter err) throws Exception {
        ObjectNode body = BenchSupport.JSON.createObjectNode();
        body.put("to", INBOX);
        body.put("text", BenchSupport.text(load.size));
        byte[][] bodies = {BenchSupport.JSON.writeValueAsBytes(body)};
        ClosedLoopSender[] workers = new ClosedLoopSender[load.senders];
        Thread[] threads = new Thread[load.senders];
        for (int i = 0; i < load.senders; i++) {
            HttpConnection conn = new HttpConnection(hub.host(), hub.port(), 30_000);
            byte[] head = HttpConnection.head("POST", "/v1/messages", conn.hostHeader(), tokens[i], "application/json",
                    bodies[0].length);
            workers[i] = new ClosedLoopSender(i, conn, head, bodies);
            threads[i] = Thread.ofPlatform().daemon().name("bench-fill-" + i).start(workers[i]);
        }
        long lastReport = System.nanoTime();
        while (true) {
            long sent = 0;
            for (ClosedLoopSender w : workers) {
                sent += w.log().n; // racy read: only to decide when to stop
            }
            if (sent >= envelopes - load.senders) {
                break;
            }
            if (System.nanoTime() - lastReport > TimeUnit.SECONDS.toNanos(10)) {
                BenchSupport.progress(err, String.format(Locale.ROOT, "filling: %,d of %,d", sent, envelopes));
                lastReport = System.nanoTime();
            }
            Thread.sleep(5);
        }
        for (ClosedLoopSender w : workers) {
            w.stop();
        }
        for (Thread t : threads) {
            t.join(60_000);
        }
        long head = 0;
        long accepted = 0;
        long errors = 0;
        for (ClosedLoopSender w : workers) {
            accepted += w.log().n;
            errors += w.log().errors;
            for (int k = 0; k < w.log().n; k++) {
                head = Math.max(head, w.log().key[k]);
            }
        }
        if (head != accepted) {
            throw new IllegalStateException("the inbox's last seq is " + head + " but " + accepted + " sends were accepted ("
                    + errors + " errors)");
        }
        return head;
    }

    /**
     * One timed replay. {@code jitPercent} and {@code gcPercent}: the compiler's and the
     * collector's threads' share of this process's CPU in it (the hub's too when it runs in this
     * process): how much of a round a JIT still warming up took.
     */
    record Replay(long cursor, long expected, long received, long outOfOrder, double firstFrameMs, double seconds,
                  double cpuPercent, double machinePercent, double jitPercent, double gcPercent) {
        double perSecond() {
            return seconds > 0 ? received / seconds : 0;
        }

        boolean complete() {
            return received == expected && outOfOrder == 0;
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%,d envelopes in %.3f s = %,.0f envelopes/s (first frame %.1f ms; "
                            + "CPU %.0f%%, machine %.0f%%; of the CPU JIT %.0f%%, GC %.0f%%)%s",
                    received, seconds, perSecond(), firstFrameMs, cpuPercent, machinePercent, jitPercent, gcPercent,
                    complete() ? "" : String.format(Locale.ROOT, " INCOMPLETE: expected %,d, %,d out of order", expected,
                            outOfOrder));
        }
    }

    /** Reads the inbox from {@code cursor} until the frame of {@code head}; checks every seq in between, in order. */
    private Replay replay(BenchHub hub, String token, long cursor, long head) throws IOException, InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        long[] state = {cursor, 0, 0, 0}; // next expected - 1, received, out of order, first frame nanos
        SseStream.Listener listener = new SseStream.Listener() {
            @Override
            public void onEvent(long id, String event, byte[] data, int dataLength) {
                if (state[1] == 0) {
                    state[3] = System.nanoTime();
                }
                state[1]++;
                if (id != state[0] + 1) {
                    state[2]++;
                }
                state[0] = Math.max(state[0], id);
                if (id >= head) {
                    done.countDown();
                }
            }
        };
        Machine.ThreadTicks ticks0 = Machine.ThreadTicks.now();
        Machine.CpuSample c0 = Machine.CpuSample.now();
        long t0 = System.nanoTime();
        SseStream stream = new HttpConnection(hub.host(), hub.port(), 10_000).openStream("/v1/inbox/stream", token,
                "Last-Event-ID: " + cursor + "\r\n", listener, false);
        Thread reader = Thread.ofPlatform().daemon().name("bench-replay").start(stream);
        boolean finished = done.await(replayTimeout, TimeUnit.SECONDS);
        long t1 = System.nanoTime();
        Machine.CpuSample c1 = Machine.CpuSample.now();
        Map<Machine.ThreadPart, Double> shares = ticks0.sharesUntil(Machine.ThreadTicks.now());
        stream.close();
        reader.join(10_000);
        // the reader thread has stopped: its writes to state are visible after join
        long received = state[1];
        return new Replay(cursor, head - cursor, received, state[2] + (finished ? 0 : 1),
                received == 0 ? Double.NaN : (state[3] - t0) / 1e6, (t1 - t0) / 1e9, c0.processPercentUntil(c1),
                c0.machinePercentUntil(c1), 100 * shares.getOrDefault(Machine.ThreadPart.JIT, Double.NaN),
                100 * shares.getOrDefault(Machine.ThreadPart.GC, Double.NaN));
    }

    private static double best(List<Replay> rs) {
        return rs.stream().mapToDouble(Replay::perSecond).max().orElse(Double.NaN);
    }

    private static double median(List<Replay> rs) {
        return BenchSupport.median(rs.stream().map(Replay::perSecond).toList());
    }

    private static Map<String, Object> summary(List<Replay> rs, long expected) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("envelopes", expected);
        o.put("bestPerSec", BenchSupport.round(best(rs)));
        o.put("medianPerSec", BenchSupport.round(median(rs)));
        o.put("secondsEach", rs.stream().map(r -> BenchSupport.round(r.seconds())).toList());
        o.put("perSecEach", rs.stream().map(r -> BenchSupport.round(r.perSecond())).toList());
        o.put("firstFrameMsEach", rs.stream().map(r -> BenchSupport.round(r.firstFrameMs())).toList());
        o.put("cpuPercentEach", rs.stream().map(r -> BenchSupport.round(r.cpuPercent())).toList());
        o.put("machineCpuPercentEach", rs.stream().map(r -> BenchSupport.round(r.machinePercent())).toList());
        o.put("jitPercentEach", rs.stream().map(r -> BenchSupport.round(r.jitPercent())).toList());
        o.put("gcPercentEach", rs.stream().map(r -> BenchSupport.round(r.gcPercent())).toList());
        o.put("complete", rs.stream().allMatch(Replay::complete));
        return o;
    }
}
