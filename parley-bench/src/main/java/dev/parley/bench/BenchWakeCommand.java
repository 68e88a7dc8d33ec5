package dev.parley.bench;

import dev.parley.bench.http.HttpConnection;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code parley bench wake}: how long a message to a stopped {@code wake: on-message} agent
 * takes to be answered, and many agents woken at once.
 *
 * <p>The hub runs in this JVM. Agents run the reference runner with {@code command: [cat]},
 * children of one lead; each is sent exactly one message ({@code POST /v1/messages?wait=} with
 * {@code requiresReply}), so every measurement is a wake from no process: the hub's commit,
 * the agent's worker starting, the command's process starting, reading its stdin and writing
 * the reply, the reply's commit. First one agent at a time (the wake latency), then a burst of
 * one message to each of the others at once.
 */
@Command(name = "wake", mixinStandardHelpOptions = true, resourceBundle = "dev.parley.bench.BenchWakeCommand",
        description = {"Time a message to a stopped on-message agent until its reply, one agent at a time, then "
                + "wake many agents at once; and until the first claim of a process agent.",
                "",
                "Starts a hub in this process on a temporary directory (removed afterwards), starts --sequential + "
                        + "--burst agents (runner: command, command: [cat]), sends one message to each of the first "
                        + "--sequential agents in turn and times it to its reply, then one to each of the others at "
                        + "once; then starts --claimers process agents (parley agent run -- cat, this JVM's classpath)"
                        + " and times a message to each until it is claimed. Exits 1 when a message was not answered"
                        + " (or, for a process agent, not claimed)."})
public final class BenchWakeCommand implements Callable<Integer> {
    private static final String LEAD = "bench-lead";
    private static final int WAIT_MS = 60_000;

    @Spec
    CommandSpec spec;

    @Mixin
    OutputOptions output = new OutputOptions();

    @Mixin
    QuickOption quick = new QuickOption();

    @Option(names = "--sequential", defaultValue = "50",
            description = "Agents woken one at a time, for the wake latency (default: ${DEFAULT-VALUE}).")
    int sequential;

    @Option(names = "--claimers", defaultValue = "20",
            description = "Agents (runner: process, the Java reference runner parley agent run) woken one at a time"
                    + " for the time from a send to their first claim; 0: none (default: ${DEFAULT-VALUE}).")
    int claimers;

    @Option(names = "--burst", defaultValue = "200",
            description = "Agents woken at once, one message each (default: ${DEFAULT-VALUE}).")
    int burst;

    @Override
    public Integer call() throws Exception {
        quick.unlessGiven("--sequential", () -> sequential = 5).unlessGiven("--burst", () -> burst = 20)
                .unlessGiven("--claimers", () -> claimers = 2);
        if (sequential < 1 || burst < 1 || claimers < 0 || sequential + burst + claimers > 10_000) {
            throw new ParameterException(spec.commandLine(), "--sequential and --burst must be positive, --claimers"
                    + " zero or more, 10000 at most together");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        double load0 = BenchSupport.loadAverage();
        try (BenchHub hub = BenchHub.inProcess()) {
            String lead = hub.createNode(LEAD, null);
            int agents = sequential + burst;
            hub.forEach(agents, 8, (conn, i) -> {
                HttpConnection.Response r = conn.call("POST", "/v1/agents", hub.adminToken(), BenchSupport.JSON
                        .createObjectNode().put("spec", "id: " + agent(i) + "\nparent: " + LEAD
                                + "\ncommand: [cat]\nwake: on-message\nidleTimeout: 10m\n").toString());
                if (r.status() != 201) {
                    throw new IllegalStateException("starting agent " + agent(i) + " answered " + r.status() + ": "
                            + r.body());
                }
            });
            long rss0 = Machine.rssBytes(ProcessHandle.current().pid()).orElse(-1);
            BenchSupport.progress(err, agents + " agents started, none running");

            AtomicInteger answered = new AtomicInteger();
            long[] wake = new long[sequential];
            HttpConnection sender = new HttpConnection(hub.host(), hub.port(), WAIT_MS + 10_000);
            for (int i = 0; i < sequential; i++) {
                long t0 = System.nanoTime();
                if (ask(sender, lead, agent(i))) {
                    answered.incrementAndGet();
                }
                wake[i] = System.nanoTime() - t0;
            }
            sender.close();
            Arrays.sort(wake);
            BenchSupport.progress(err, "one at a time: " + BenchSupport.triple(wake) + " ms");

            AtomicLongArray burstNanos = new AtomicLongArray(burst);
            long b0 = System.nanoTime();
            hub.forEach(burst, burst, (conn, i) -> {
                long t0 = System.nanoTime();
                HttpConnection asking = new HttpConnection(hub.host(), hub.port(), WAIT_MS + 10_000);
                try {
                    if (ask(asking, lead, agent(sequential + i))) {
                        answered.incrementAndGet();
                    }
                } finally {
                    asking.close();
                }
                burstNanos.set(i, System.nanoTime() - t0);
            });
            double burstSeconds = (System.nanoTime() - b0) / 1e9;
            int burstAnswered = answered.get() - sequential;
            long rss1 = Machine.rssBytes(ProcessHandle.current().pid()).orElse(-1);
            long[] burstSorted = new long[burst];
            for (int i = 0; i < burst; i++) {
                burstSorted[i] = burstNanos.get(i);
            }
            Arrays.sort(burstSorted);
            double load1 = BenchSupport.loadAverage();
            Optional<long[]> firstClaim = firstClaims(hub, lead, err);
            if (firstClaim.isPresent()) {
                answered.addAndGet(claimers);
            }

            Report report = new Report(String.format(Locale.ROOT, "parley bench wake: %d agents (runner: command,"
                    + " command: [cat], wake: on-message), one message each, hub in this process; %d process agents"
                    + " (parley agent run -- cat)", agents, firstClaim.isPresent() ? claimers : 0));
            report.row("wake, one at a time (" + sequential + " agents)", "send -> reply p50 / p99 / max "
                    + BenchSupport.triple(wake) + " ms");
            report.row("wake, " + burst + " agents at once", "%d of %d answered in %.2f s; each p50 / p99 / max %s ms",
                    burstAnswered, burst, burstSeconds, BenchSupport.triple(burstSorted));
            firstClaim.ifPresentOrElse(claim -> report.row("first claim, one at a time (" + claimers + " process agents)",
                    "send -> claimed p50 / p99 / max " + BenchSupport.triple(claim) + " ms (a JVM starting included)"),
                    () -> report.row("first claim", "not measured: " + (claimers == 0 ? "--claimers 0"
                            : "parley agent run is not in this build (run the bench from parley.jar)")));
            report.row("RSS of this process (hub and client)", "%,d KiB before the wakes, %,d KiB after", rss0 / 1024,
                    rss1 / 1024);
            report.row("load average before / after", "%.2f / %.2f", load0, load1);
            boolean ok = answered.get() == agents + (firstClaim.isPresent() ? claimers : 0);
            report.put("agents", agents).put("sequential", sequential).put("burst", burst);
            report.put("answered", answered.get()).put("allAnswered", ok);
            report.put("wakeP50Ms", BenchSupport.round(BenchSupport.pct(wake, 50)))
                    .put("wakeP99Ms", BenchSupport.round(BenchSupport.pct(wake, 99)))
                    .put("wakeMaxMs", BenchSupport.round(BenchSupport.max(wake)));
            report.put("burstSeconds", BenchSupport.round(burstSeconds))
                    .put("burstP50Ms", BenchSupport.round(BenchSupport.pct(burstSorted, 50)))
                    .put("burstP99Ms", BenchSupport.round(BenchSupport.pct(burstSorted, 99)));
            firstClaim.ifPresent(claim -> report.put("firstClaimP50Ms", BenchSupport.round(BenchSupport.pct(claim, 50)))
                    .put("firstClaimP99Ms", BenchSupport.round(BenchSupport.pct(claim, 99))));
            report.put("rssBeforeKiB", rss0 / 1024).put("rssAfterKiB", rss1 / 1024);
            report.put("loadBefore", load0).put("loadAfter", load1).put("cores", Runtime.getRuntime().availableProcessors());
            report.print(out, output.json);
            return ok ? 0 : 1;
        }
    }

    /**
     * Process agents running {@code parley agent run -- cat} (this JVM's java and classpath),
     * each sent one message while it has no process: the time from the send to its claim, as
     * the envelope's timeline has them (milliseconds); empty when the runner is not on the
     * classpath (the bench module's own tests).
     */
    private Optional<long[]> firstClaims(BenchHub hub, String lead, PrintWriter err) throws Exception {
        if (claimers == 0 || !onClasspath("dev.parley.cli.Main")) {
            return Optional.empty();
        }
        String javaBin = ProcessHandle.current().info().command().orElseThrow();
        String classpath = System.getProperty("java.class.path");
        long[] claimed = new long[claimers];
        try (HttpConnection conn = new HttpConnection(hub.host(), hub.port(), WAIT_MS + 10_000)) {
            for (int i = 0; i < claimers; i++) {
                String id = String.format(Locale.ROOT, "bench-claimer-%05d", i);
                String spec = "id: " + id + "\nparent: " + LEAD + "\nrunner: process\ncommand: ["
                        + BenchSupport.JSON.writeValueAsString(javaBin) + ", -cp, " + BenchSupport.JSON.writeValueAsString(classpath)
                        + ", dev.parley.cli.Main, agent, run, --, cat]\nwake: on-message\nidleTimeout: 10m\n";
                HttpConnection.Response started = conn.call("POST", "/v1/agents", hub.adminToken(),
                        BenchSupport.JSON.createObjectNode().put("spec", spec).toString());
                if (started.status() != 201) {
                    throw new IllegalStateException("starting agent " + id + " answered " + started.status());
                }
                HttpConnection.Response asked = conn.call("POST", "/v1/messages?wait=" + WAIT_MS, lead, BenchSupport.JSON
                        .createObjectNode().put("to", id).put("text", "claim " + id).put("requiresReply", true)
                        .toString());
                if (asked.status() != 200) {
                    throw new IllegalStateException("agent " + id + " did not answer: " + asked.status());
                }
                String request = BenchSupport.JSON.readTree(asked.body()).at("/request/id").asText();
                var message = BenchSupport.JSON.readTree(conn.call("GET", "/v1/messages/" + request, lead, null).body());
                java.time.Instant sent = java.time.Instant.parse(message.path("createdAt").asText());
                java.time.Instant claim = null;
                for (var step : message.path("timeline")) {
                    if (step.path("state").asText().equals("processing")) {
                        claim = java.time.Instant.parse(step.path("at").asText());
                        break;
                    }
                }
                if (claim == null) {
                    throw new IllegalStateException("agent " + id + " answered without claiming");
                }
                claimed[i] = java.time.Duration.between(sent, claim).toNanos();
            }
        }
        Arrays.sort(claimed);
        BenchSupport.progress(err, "first claim: " + BenchSupport.triple(claimed) + " ms");
        return Optional.of(claimed);
    }

    private static boolean onClasspath(String type) {
        try {
            Class.forName(type, false, BenchWakeCommand.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    private static String agent(int i) {
        return String.format(Locale.ROOT, "bench-agent-%05d", i);
    }

    /** One message that asks for a reply, held until it comes; whether it came, with the text back. */
    private static boolean ask(HttpConnection conn, String token, String agent) throws IOException {
        String text = "wake " + agent;
        HttpConnection.Response r = conn.call("POST", "/v1/messages?wait=" + WAIT_MS, token, BenchSupport.JSON
                .createObjectNode().put("to", agent).put("text", text).put("requiresReply", true).toString());
        return r.status() == 200 && r.body().contains(text);
    }
}
