package dev.parley.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.bench.http.HttpConnection;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Command;

/**
 * {@code parley bench guarded}: what policy rules, a payload schema and per-node rate limits
 * cost the send path. The {@code bench send} workload runs on two kinds of fresh hub (in this
 * JVM, or each in a process of its own with {@code --hub child}), alternating (plain, guarded,
 * guarded, plain, …):
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
                "Runs the bench send workload on fresh hubs, alternately plain and guarded (a 20-rule "
                        + "CEL policy, a JSON Schema on the kind sent, a rate limit on every node), and prints "
                        + "sends/s, latency and the ratio guarded/plain. Exits 1 when a send was refused or lost."})
public final class BenchGuardedCommand extends AlternatingBenchCommand {
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

    @Override
    Variants variants() throws IOException {
        Path policyDir = Files.createTempDirectory("parley-bench-policy-");
        try {
            Path policy = writePolicy(policyDir.resolve("policy.json"));
            Variant plain = new Variant() {
                @Override
                public String name() {
                    return "plain";
                }

                @Override
                public BenchHub startHub(HubPlacementOption.HubLauncher launcher) throws IOException {
                    return launcher.start();
                }
            };
            Variant guarded = new Variant() {
                @Override
                public String name() {
                    return "guarded";
                }

                @Override
                public BenchHub startHub(HubPlacementOption.HubLauncher launcher) throws IOException {
                    return launcher.start(c -> c.withPolicy(Optional.of(policy)), List.of("--policy", policy.toString()),
                            Map.of());
                }

                @Override
                public void prepare(BenchHub hub, ParleyWorkload work, Map<String, Object> facts) throws Exception {
                    guard(hub, work, facts);
                }

                @Override
                public void measured(Window edges, Map<String, Object> facts) {
                    facts.put("policyDenials", (long) edges.delta("parley_policy_decisions_total"));
                    facts.put("schemaViolations", (long) edges.delta("parley_schema_violations_total"));
                    facts.put("rateLimited", (long) edges.delta("parley_rate_limited_total"));
                    facts.put("policyRuleErrors", (long) edges.delta("parley_policy_rule_errors_total"));
                }
            };
            return new Variants() {
                @Override
                public Variant base() {
                    return plain;
                }

                @Override
                public Variant candidate() {
                    return guarded;
                }

                @Override
                public void close() {
                    BenchSupport.deleteTree(policyDir);
                }
            };
        } catch (IOException | RuntimeException e) {
            BenchSupport.deleteTree(policyDir);
            throw e;
        }
    }

    @Override
    Goal goal() {
        return new Goal("costUnder10Percent", "target: cost < 10%", ratio -> ratio > 0.9);
    }

    @Override
    String payload() {
        return load.size + "-byte text + data, kind " + KIND;
    }

    @Override
    Optional<String> kind() {
        return Optional.of(KIND);
    }

    @Override
    void shape(ParleyWorkload work) {
        work.labels(INBOX_LABELS, SENDER_LABELS).payload(KIND, data());
    }

    @Override
    void describe(Report report, List<Run> runs) {
        Map<String, Object> facts = runs.stream().filter(r -> r.variant().equals("guarded")).findFirst()
                .map(Run::facts).orElse(Map.of());
        report.row("guarded hub", "%s rules (policy %s), schema on %s, %s nodes with a limit of %s/s",
                facts.get("rules"), facts.get("policyVersion"), KIND, facts.get("limitedNodes"), facts.get("nodeRate"));
        report.row("guarded: probes before the window", "%s", facts.get("probes"));
        report.row("guarded: in window rule denials / schema violations / 429s", "%s / %s / %s",
                facts.get("policyDenials"), facts.get("schemaViolations"), facts.get("rateLimited"));
        report.put("guardedHub", facts);
    }

    /**
     * Puts the schema and a rate limit on every node in force, checks that the hub loaded every
     * rule and that the policy allows the bench traffic, and probes the guards.
     */
    private void guard(BenchHub hub, ParleyWorkload work, Map<String, Object> facts) throws Exception {
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
