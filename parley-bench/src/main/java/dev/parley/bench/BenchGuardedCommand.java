package dev.parley.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.bench.http.HttpConnection;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code parley bench guarded}: what policy rules, a payload schema and per-node rate limits
 * cost the send path. The {@code bench send} workload runs on two kinds of fresh in-process
 * hub, alternating (plain, guarded, guarded, plain, …):
 * <ul>
 *   <li>plain: no policy file, no schema, every node on the hub's default token bucket
 *       (raised so that it never throttles; the limiter itself cannot be switched off and
 *       runs on every request in both variants);</li>
 *   <li>guarded: a 20-rule CEL policy file ({@link #RULES}: deny rules over sender and
 *       target labels, kinds, text size, meta and groups, none of which matches the bench
 *       traffic, so every one is evaluated on every send), a JSON Schema (2020-12) on the
 *       kind every send uses (every send's {@code data} is valid), and a per-node rate limit
 *       ({@code PUT /v1/nodes/{id}/limits}) on every node, high enough not to throttle.</li>
 * </ul>
 * Both variants send identical requests (kind {@code bench.order}, {@code data}, text) from
 * nodes with identical labels. The ratio is guarded sends/s over plain sends/s.
 */
@Command(name = "guarded", mixinStandardHelpOptions = true, resourceBundle = "dev.parley.bench.BenchGuardedCommand",
        description = {"Measure the cost of policy rules, a payload schema and rate limits on durable sends.",
                "",
                "Runs the bench send workload on fresh in-process hubs, alternately plain and guarded (a 20-rule "
                        + "CEL policy, a JSON Schema on the kind sent, a rate limit on every node), and prints "
                        + "sends/s, latency and the ratio guarded/plain. Exits 1 when a send was refused or lost."})
public final class BenchGuardedCommand implements Callable<Integer> {
    static final String KIND = "bench.order";
    private static final Map<String, String> SENDER_LABELS = Map.of("role", "sender", "team", "bench", "tier", "standard",
            "env", "test");
    private static final Map<String, String> INBOX_LABELS = Map.of("role", "inbox", "team", "bench", "tier", "standard",
            "env", "test");

    /** Deny rules a real operator might write; none matches the bench traffic, so all are evaluated. */
    static final List<String[]> RULES = List.of(
            rule("deny-oversized-text", "envelope.textSize > 65536"),
            rule("deny-unlabelled-sender", "!('role' in sender.labels)"),
            rule("deny-quarantined-sender", "'quarantined' in sender.labels && sender.labels['quarantined'] == 'true'"),
            rule("deny-quarantined-target", "'quarantined' in target.labels && target.labels['quarantined'] == 'true'"),
            rule("deny-cross-team", "'team' in sender.labels && 'team' in target.labels"
                    + " && sender.labels['team'] != target.labels['team'] && target.parent != sender.id"),
            rule("deny-inbox-to-inbox", "'role' in sender.labels && sender.labels['role'] == 'inbox'"
                    + " && 'role' in target.labels && target.labels['role'] == 'inbox'"),
            rule("deny-exec-from-non-lead", "envelope.kind == 'exec' && sender.labels['role'] != 'lead'"),
            rule("deny-admin-kinds", "envelope.kind.startsWith('admin.') && sender.kind != 'hub'"),
            rule("deny-large-to-mobile", "envelope.textSize > 16384 && 'tier' in target.labels"
                    + " && target.labels['tier'] == 'mobile'"),
            rule("deny-ops-without-clearance", "target.id.startsWith('ops-') && !('ops' in sender.labels)"),
            rule("deny-internal-meta-from-external", "envelope.meta.exists(k, k.startsWith('x-internal-'))"
                    + " && sender.kind == 'external'"),
            rule("deny-secret-without-clearance", "'classification' in envelope.meta"
                    + " && envelope.meta['classification'] == 'secret' && !('clearance' in target.labels)"),
            rule("deny-strict-sandbox-to-agents", "target.kind == 'agent' && 'sandbox' in sender.labels"
                    + " && sender.labels['sandbox'] == 'strict'"),
            rule("deny-internal-topics-from-roots", "envelope.topic.startsWith('internal.') && sender.parent == ''"),
            rule("deny-huge-groups", "size(sender.group) > 5000"),
            rule("deny-label-floods", "size(sender.labels) > 64 || size(envelope.meta) > 64"),
            rule("deny-debug-in-prod", "envelope.kind.matches('^debug[.].*') && 'env' in target.labels"
                    + " && target.labels['env'] == 'prod'"),
            rule("deny-blocked-pairs", "'blocked-by' in target.labels && target.labels['blocked-by'] == sender.id"),
            rule("deny-free-tier-large", "'tier' in sender.labels && sender.labels['tier'] == 'free'"
                    + " && envelope.textSize > 4096"),
            rule("deny-outside-own-group", "target.parent != '' && !(target.parent in sender.group)"
                    + " && sender.parent != target.id && target.parent != sender.id"));

    private static String[] rule(String name, String when) {
        return new String[] {name, when};
    }

    @Spec
    CommandSpec spec;

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

    @Option(names = "--rounds", defaultValue = "2",
            description = "Pairs of runs; round 1 runs plain then guarded, round 2 guarded then plain, and so on "
                    + "(default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--jfr", paramLabel = "PREFIX",
            description = "Record each run's load (hub and client, this JVM) with JDK Flight Recorder into "
                    + "PREFIX-<n>-plain.jfr / PREFIX-<n>-guarded.jfr (profile settings).")
    String jfr;

    /** One run's figures. */
    record Run(boolean guarded, LoadResult result, Map<String, Object> hubFacts) {
    }

    @Override
    public Integer call() throws Exception {
        quick.unlessGiven("--senders", () -> load.senders = 16).unlessGiven("--inboxes", () -> targets.inboxes = 16)
                .unlessGiven("--warmup", () -> window.warmup = 0).unlessGiven("--seconds", () -> window.seconds = 2)
                .unlessGiven("--rounds", () -> rounds = 1);
        load.validate();
        targets.validate();
        window.validate();
        if (rounds < 1) {
            throw new ParameterException(spec.commandLine(), "--rounds must be at least 1");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        double load0 = BenchSupport.loadAverage();
        Path policyDir = Files.createTempDirectory("parley-bench-policy-");
        List<Run> runs = new ArrayList<>();
        try {
            Path policy = writePolicy(policyDir.resolve("policy.json"));
            for (int r = 0; r < rounds; r++) {
                boolean guardedFirst = r % 2 == 1;
                for (int i = 0; i < 2; i++) {
                    boolean guarded = guardedFirst == (i == 0);
                    runs.add(run(guarded, policy, err, jfr == null ? null
                            : Path.of(jfr + "-" + (runs.size() + 1) + (guarded ? "-guarded" : "-plain") + ".jfr")));
                    Run last = runs.getLast();
                    BenchSupport.progress(err, String.format(Locale.ROOT, "round %d %s: %,.0f sends/s, p99 %.2f ms",
                            r + 1, guarded ? "guarded" : "plain", last.result().perSecond(), last.result().p99Ms()));
                }
            }
        } finally {
            BenchSupport.deleteTree(policyDir);
        }
        double load1 = BenchSupport.loadAverage();

        double plainRate = meanRate(runs, false);
        double guardedRate = meanRate(runs, true);
        double ratio = guardedRate / plainRate;
        Report report = new Report(String.format(Locale.ROOT,
                "parley bench guarded: %d senders -> %d inboxes, %d-byte text + data, kind %s, warm-up %d s, window %d s, "
                        + "%d rounds (plain and guarded alternating)", load.senders, targets.inboxes, load.size, KIND,
                window.warmup, window.seconds, rounds));
        for (int i = 0; i < runs.size(); i++) {
            Run run = runs.get(i);
            LoadResult lr = run.result();
            report.row(String.format(Locale.ROOT, "run %d %s", i + 1, run.guarded() ? "guarded" : "plain"),
                    "%,.0f sends/s, e2e p50 / p99 %.2f / %.2f ms, 202 p99 %.2f ms, errors %d, lost %d, "
                            + "CPU %.0f%% (machine %.0f%%)",
                    lr.perSecond(), lr.p50Ms(), lr.p99Ms(), BenchSupport.pct(lr.ack, 99), lr.errors, lr.lost,
                    lr.cpuPercent, lr.machinePercent);
        }
        report.row("mean sends/s plain / guarded", "%,.0f / %,.0f", plainRate, guardedRate);
        double plainCpu = meanCpuPerSend(runs, false);
        double guardedCpu = meanCpuPerSend(runs, true);
        report.row("mean CPU per send plain / guarded", "%.0f / %.0f us (hub + bench, +%.0f%%)", plainCpu, guardedCpu,
                100 * (guardedCpu / plainCpu - 1));
        report.row("ratio guarded / plain", "%.3f (cost %.1f%%; target: cost < 10%%)", ratio, 100 * (1 - ratio));
        Map<String, Object> facts = runs.stream().filter(Run::guarded).findFirst().map(Run::hubFacts).orElse(Map.of());
        report.row("guarded hub", "%s rules (policy %s), schema on %s, %s nodes with a limit of %s/s",
                facts.get("rules"), facts.get("policyVersion"), KIND, facts.get("limitedNodes"), facts.get("nodeRate"));
        report.row("guarded: probes before the window", "%s", facts.get("probes"));
        report.row("guarded: in window rule denials / schema violations / 429s", "%s / %s / %s",
                facts.get("policyDenials"), facts.get("schemaViolations"), facts.get("rateLimited"));
        report.row("load average before / after", "%.2f / %.2f", load0, load1);

        report.put("senders", load.senders).put("inboxes", targets.inboxes).put("size", load.size).put("kind", KIND)
                .put("warmupSeconds", window.warmup).put("windowSeconds", window.seconds).put("rounds", rounds);
        List<Map<String, Object>> each = new ArrayList<>();
        for (Run run : runs) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("variant", run.guarded() ? "guarded" : "plain");
            o.putAll(run.result().summary());
            o.put("acceptedTotal", run.result().acceptedTotal);
            o.put("cpuPercent", BenchSupport.round(run.result().cpuPercent));
            o.put("machineCpuPercent", BenchSupport.round(run.result().machinePercent));
            o.put("meanCommitMs", run.hubFacts().get("meanCommitMs"));
            o.put("cpuMicrosPerSend", BenchSupport.round(cpuPerSend(run.result())));
            each.add(o);
        }
        report.put("runs", each);
        report.put("plainPerSec", plainRate).put("guardedPerSec", guardedRate).put("ratio", ratio);
        report.put("plainCpuMicrosPerSend", plainCpu).put("guardedCpuMicrosPerSend", guardedCpu);
        report.put("guardedHub", facts);
        report.put("loadBefore", load0).put("loadAfter", load1).put("cores", Runtime.getRuntime().availableProcessors());
        long lost = runs.stream().mapToLong(run -> run.result().lost).sum();
        long errors = runs.stream().mapToLong(run -> run.result().errors).sum();
        report.put("lost", lost).put("errors", errors);
        Map<String, Object> goals = new LinkedHashMap<>();
        goals.put("costUnder10Percent", ratio > 0.9);
        report.json().put("goals", goals);
        report.print(out, output.json);
        boolean accepted = runs.stream().allMatch(run -> run.result().accepted > 0);
        return lost == 0 && errors == 0 && accepted ? 0 : 1;
    }

    private Run run(boolean guarded, Path policy, PrintWriter err, Path jfrFile) throws Exception {
        try (BenchHub hub = guarded ? BenchHub.inProcess(c -> c.withPolicy(Optional.of(policy))) : BenchHub.inProcess();
             ParleyWorkload work = new ParleyWorkload(load.senders, targets.inboxes, load.size, err)) {
            BenchSupport.progress(err, (guarded ? "guarded" : "plain") + ": hub at " + hub.url());
            work.labels(INBOX_LABELS, SENDER_LABELS).payload(KIND, data());
            work.createNodes(hub);
            Map<String, Object> facts = new LinkedHashMap<>();
            if (guarded) {
                hub.callExpect(200, "PUT", "/v1/schemas/" + KIND, schema().toString());
                List<String> all = new ArrayList<>(List.of(ParleyWorkload.LEAD));
                all.addAll(List.of(work.inboxIds));
                all.addAll(List.of(work.senderIds));
                String limit = "{\"rate\": 100000, \"burst\": 200000}";
                hub.forEach(all.size(), 4, (admin, i) -> {
                    HttpConnection.Response res = admin.call("PUT", "/v1/nodes/" + all.get(i) + "/limits",
                            hub.adminToken(), limit);
                    if (res.status() != 200) {
                        throw new IllegalStateException("PUT limits of " + all.get(i) + " answered " + res.status()
                                + ": " + res.body());
                    }
                });
                JsonNode active = BenchSupport.JSON.readTree(hub.callExpect(200, "GET", "/v1/policy", null));
                facts.put("policyVersion", active.path("version").asText());
                facts.put("rules", active.path("rules").size());
                if (active.path("rules").size() != RULES.size()) {
                    throw new IllegalStateException("the hub loaded " + active.path("rules").size() + " rules, not "
                            + RULES.size() + ": " + active);
                }
                JsonNode check = BenchSupport.JSON.readTree(hub.callExpect(200, "POST", "/v1/policy/check",
                        "{\"from\":\"" + work.senderIds[0] + "\",\"to\":\"" + work.inboxIds[0] + "\",\"kind\":\"" + KIND
                                + "\",\"textSize\":" + load.size + "}"));
                if (!"allow".equals(check.path("decision").asText())) {
                    throw new IllegalStateException("the policy would refuse the bench traffic: " + check);
                }
                facts.put("limitedNodes", all.size());
                facts.put("nodeRate", 100000);
                facts.put("probes", probe(hub, work));
            }
            work.openStreams(hub.host(), hub.port());
            Map<String, Double>[] edges = newEdges();
            Machine.CpuSample[] cpu = new Machine.CpuSample[2];
            LoadResult result;
            try (BenchJfr recording = BenchJfr.start(jfrFile, err)) {
                result = work.measure(window.warmup, window.seconds, drain.seconds, w0 -> {
                    edges[0] = hub.metrics();
                    cpu[0] = Machine.CpuSample.now();
                }, w1 -> {
                    cpu[1] = Machine.CpuSample.now();
                    edges[1] = hub.metrics();
                });
            }
            result.cpuPercent = cpu[0].processPercentUntil(cpu[1]);
            result.machinePercent = cpu[0].machinePercentUntil(cpu[1]);
            if (guarded) { // in the measured window
                facts.put("policyDenials", (long) deltaOrZero(edges, "parley_policy_decisions_total"));
                facts.put("schemaViolations", (long) deltaOrZero(edges, "parley_schema_violations_total"));
                facts.put("rateLimited", (long) deltaOrZero(edges, "parley_rate_limited_total"));
                facts.put("policyRuleErrors", (long) deltaOrZero(edges, "parley_policy_rule_errors_total"));
            }
            facts.put("meanCommitMs", BenchSupport.round(1000.0
                    * BenchSupport.delta(edges[0], edges[1], "parley_commit_latency_seconds_sum")
                    / BenchSupport.delta(edges[0], edges[1], "parley_commit_latency_seconds_count")));
            return new Run(guarded, result, facts);
        }
    }

    private static double deltaOrZero(Map<String, Double>[] edges, String name) {
        return edges[1].getOrDefault(name, 0.0) - edges[0].getOrDefault(name, 0.0);
    }

    /**
     * Shows that the guards are in force before measuring: a send whose data breaks the
     * schema must get 400 {@code schema_violation}, and one whose text is over 64 KiB must be
     * refused by the rule {@code deny-oversized-text}. Returns what was seen.
     */
    private String probe(BenchHub hub, ParleyWorkload work) throws IOException {
        HttpConnection conn = new HttpConnection(hub.host(), hub.port(), 30_000);
        try {
            ObjectNode bad = BenchSupport.JSON.createObjectNode();
            bad.put("to", work.inboxIds[0]);
            bad.put("kind", KIND);
            bad.set("data", data().put("priority", 42));
            HttpConnection.Response schema = conn.call("POST", "/v1/messages", work.senderToken(0), bad.toString());
            String schemaCode = BenchSupport.JSON.readTree(schema.body()).path("error").asText();
            if (schema.status() != 400 || !schemaCode.equals("schema_violation")) {
                throw new IllegalStateException("data breaking the schema answered " + schema.status() + ": " + schema.body());
            }
            ObjectNode big = BenchSupport.JSON.createObjectNode();
            big.put("to", work.inboxIds[0]);
            big.put("kind", KIND);
            big.put("text", BenchSupport.text(70_000));
            big.set("data", data());
            HttpConnection.Response rule = conn.call("POST", "/v1/messages", work.senderToken(0), big.toString());
            if (rule.status() != 403 || !rule.body().contains("deny-oversized-text")) {
                throw new IllegalStateException("a 70,000-byte text answered " + rule.status() + ": " + rule.body());
            }
            return "schema_violation (400), deny-oversized-text (403)";
        } finally {
            conn.close();
        }
    }

    /** CPU of this process (hub and bench client) per send accepted in the window, in microseconds. */
    static double cpuPerSend(LoadResult r) {
        return r.cpuPercent / 100.0 * Runtime.getRuntime().availableProcessors() * r.windowSeconds * 1e6 / r.accepted;
    }

    private static double meanCpuPerSend(List<Run> runs, boolean guarded) {
        return runs.stream().filter(r -> r.guarded() == guarded).mapToDouble(r -> cpuPerSend(r.result())).average()
                .orElse(Double.NaN);
    }

    private static double meanRate(List<Run> runs, boolean guarded) {
        return runs.stream().filter(r -> r.guarded() == guarded).mapToDouble(r -> r.result().perSecond()).average()
                .orElse(Double.NaN);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Double>[] newEdges() {
        return new Map[] {Map.of(), Map.of()};
    }

    /** The data every send carries: a small order, valid under {@link #schema()}. */
    static ObjectNode data() {
        ObjectNode d = BenchSupport.JSON.createObjectNode();
        d.put("orderId", "ord-000042");
        d.put("priority", 3);
        d.put("express", false);
        var items = d.putArray("items");
        items.addObject().put("sku", "SKU-1001").put("qty", 2).put("price", 19.5);
        items.addObject().put("sku", "SKU-2002").put("qty", 1).put("price", 5.25);
        d.putObject("customer").put("id", "cust-7").put("country", "DE");
        return d;
    }

    /** A JSON Schema (2020-12) for {@link #data()}: required fields, types, patterns, ranges, no extra fields. */
    static ObjectNode schema() throws IOException {
        return (ObjectNode) BenchSupport.JSON.readTree("""
                {
                  "$schema": "https://json-schema.org/draft/2020-12/schema",
                  "type": "object",
                  "required": ["orderId", "priority", "items", "customer"],
                  "additionalProperties": false,
                  "properties": {
                    "orderId": {"type": "string", "pattern": "^ord-[0-9]{6}$"},
                    "priority": {"type": "integer", "minimum": 0, "maximum": 9},
                    "express": {"type": "boolean"},
                    "items": {
                      "type": "array", "minItems": 1, "maxItems": 100,
                      "items": {
                        "type": "object",
                        "required": ["sku", "qty"],
                        "additionalProperties": false,
                        "properties": {
                          "sku": {"type": "string", "pattern": "^SKU-[0-9]+$"},
                          "qty": {"type": "integer", "minimum": 1, "maximum": 1000},
                          "price": {"type": "number", "minimum": 0}
                        }
                      }
                    },
                    "customer": {
                      "type": "object",
                      "required": ["id"],
                      "properties": {
                        "id": {"type": "string", "minLength": 1, "maxLength": 64},
                        "country": {"type": "string", "enum": ["DE", "FR", "US", "GB", "JP"]}
                      }
                    }
                  }
                }
                """);
    }

    /** Writes {@link #RULES} as a JSON policy file. */
    static Path writePolicy(Path file) throws IOException {
        ObjectNode root = BenchSupport.JSON.createObjectNode();
        var rules = root.putArray("rules");
        for (String[] r : RULES) {
            rules.addObject().put("name", r[0]).put("effect", "deny").put("when", r[1]);
        }
        Files.writeString(file, BenchSupport.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root),
                StandardCharsets.UTF_8);
        return file;
    }

}
