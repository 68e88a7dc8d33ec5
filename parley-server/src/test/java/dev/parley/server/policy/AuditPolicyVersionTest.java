package dev.parley.server.policy;

import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.core.AccessPolicy;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With policy rules loaded, every audit entry records the version of the rules in force,
 * not the built-in ACL's: acks, dead-letter redrives and drops, and every other action the
 * hub audits (nodes, tokens, grants, deliveries, limits, topics, schemas, invites, keys, a
 * task for no one).
 */
class AuditPolicyVersionTest {
    @TempDir
    Path dir;

    @Test
    void everyAuditEntryCarriesThePolicyVersionInForce() {
        Path file = dir.resolve("policy.json");
        PolicyFiles.write(file, PolicyFiles.json(List.of(PolicyFiles.allow("ops-reach-all", "sender.id == 'ops'"))));
        try (HubFixture hub = HubFixture.start(dir.resolve("data"), c -> c.withPolicy(Optional.of(file)))) {
            String version = PolicyFiles.version(hub);
            assertNotEquals(AccessPolicy.VERSION, version);
            String admin = hub.admin();

            String leadToken = hub.createNode("lead", null);
            String workerToken = hub.createNode("worker", "lead");
            hub.createNode("other", null);
            ok(() -> hub.post(admin, "/v1/nodes/other/token", null));
            String grant = ok(() -> hub.post(admin, "/v1/grants", obj("from", "lead", "to", "other"))).text("id");
            ok(() -> hub.delete(admin, "/v1/grants/" + grant));

            String message = hub.sendOk(leadToken, "worker", "ack me").text("id");
            ok(() -> hub.post(workerToken, "/v1/messages/" + message + "/ack", obj("status", "processed")));

            hub.createNode("hooked", "lead");
            ok(() -> hub.request("PUT", "/v1/nodes/hooked/delivery", admin, json(obj("webhook", obj("url",
                    "http://127.0.0.1:1/hook", "secret", "a-secret-of-enough-length"), "retry", obj("maxAttempts", 1,
                    "baseMs", 100, "capMs", 100))), Map.of()));
            String lost = hub.sendOk(leadToken, "hooked", "never arrives").text("id");
            awaitDeadLetter(hub, lost);
            ok(() -> hub.post(admin, "/v1/dead-letters/" + lost + "/redrive", obj()));
            awaitDeadLetter(hub, lost);
            ok(() -> hub.delete(admin, "/v1/dead-letters/" + lost));

            ok(() -> hub.request("PUT", "/v1/nodes/worker/limits", admin, json(obj("rate", 50, "burst", 60)),
                    Map.of()));
            ok(() -> hub.delete(admin, "/v1/nodes/worker/limits"));
            ok(() -> hub.post(workerToken, "/v1/topics/builds/subscriptions", null));
            ok(() -> hub.delete(workerToken, "/v1/topics/builds/subscriptions"));
            ok(() -> hub.request("PUT", "/v1/schemas/report", admin, json(obj("type", "object")), Map.of()));
            ok(() -> hub.delete(admin, "/v1/schemas/report"));
            ok(() -> hub.post(admin, "/v1/invites", obj("nodeId", "newcomer")));
            ok(() -> hub.post(admin, "/v1/auth/keys/rotate", obj()));
            assertEquals(404, hub.post(leadToken, "/v1/tasks", obj("to", "nobody", "title", "anyone?")).status());

            List<JsonNode> entries = hub.get(admin, "/v1/audit?limit=1000").items();
            Set<String> actions = new TreeSet<>();
            entries.forEach(e -> actions.add(e.path("action").asText()));
            assertTrue(actions.containsAll(List.of("ack", "dead_letter.redrive", "dead_letter.drop", "node.create",
                    "token.rotate", "grant.create", "grant.delete", "delivery.set", "topic.subscribe",
                    "topic.unsubscribe", "schema.put", "schema.delete", "auth.keys.rotate", "task.create")),
                    actions::toString);
            List<String> stale = entries.stream().filter(e -> !version.equals(e.path("policyVersion").asText()))
                    .map(e -> e.path("action").asText() + " " + e.path("target").asText() + " "
                            + e.path("policyVersion").asText()).toList();
            assertTrue(stale.isEmpty(), () -> "entries without the version in force (" + version + "): " + stale);
        }
    }

    private static void awaitDeadLetter(HubFixture hub, String id) {
        await().atMost(Duration.ofSeconds(20)).until(() -> hub.get(hub.admin(), "/v1/dead-letters/" + id).status()
                == 200);
    }

    private static Resp ok(Supplier<Resp> call) {
        Resp r = call.get();
        assertTrue(r.status() / 100 == 2, r::toString);
        return r;
    }

    private static byte[] json(Object tree) {
        return HubFixture.JSON.valueToTree(tree).toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
}
