package dev.parley.server.policy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Senders keep sending while the policy file flips between two rule sets many times. Under
 * A every send to {@code t} is denied by rule {@code block-t}; under B the group's senders
 * reach {@code t} by the ACL and the outsiders by rule {@code widen}. So each outcome names
 * the only version that can have produced it: a refusal must carry A's version and rule, an
 * accepted envelope B's version (and B's rule for an outsider). One decision under a mix of
 * the two would show as a pairing that neither version produces.
 */
class PolicyReloadUnderLoadTest {
    private static final int FLIPS = 20;
    private static final List<String> INSIDERS = List.of("s1a", "s1b");
    private static final List<String> OUTSIDERS = List.of("s2a", "s2b");
    private static final String A = PolicyFiles.json(List.of(PolicyFiles.deny("block-t", "target.id == 't'")));
    private static final String B = PolicyFiles.json(List.of(
            PolicyFiles.allow("widen", "sender.labels.?team.orValue('') == 'ext' && target.id == 't'")));

    /** One answer to one send. */
    private record Outcome(String sender, int status, JsonNode body) {
    }

    @TempDir
    Path dir;
    private HubFixture hub;

    @AfterEach
    void stop() {
        if (hub != null) {
            hub.close();
        }
    }

    @Test
    void everyDecisionIsConsistentWithExactlyOneOfTheVersions() throws Exception {
        Path file = dir.resolve("policy.json");
        PolicyFiles.write(file, A);
        hub = HubFixture.start(dir.resolve("data"), c -> c.withPolicy(Optional.of(file))
                .withPolicyReloadInterval(Duration.ofMillis(20)));
        hub.createNode("g", null);
        String t = hub.createNode("t", "g");
        hub.createNode("h", null);
        Map<String, String> tokens = new java.util.HashMap<>();
        INSIDERS.forEach(id -> tokens.put(id, hub.createNode(id, "g")));
        OUTSIDERS.forEach(id -> tokens.put(id, assertStatus(201, hub.post(hub.admin(), "/v1/nodes", obj("id", id,
                "kind", "external", "parent", "h", "labels", Map.of("team", "ext")))).text("token")));

        String versionA = PolicyFiles.version(hub);
        PolicyFiles.write(file, B);
        String versionB = PolicyFiles.awaitNewVersion(hub, versionA);
        assertNotEquals(versionA, versionB);
        PolicyFiles.write(file, A);
        assertEquals(versionA, PolicyFiles.awaitNewVersion(hub, versionB));

        ConcurrentLinkedQueue<Outcome> outcomes = new ConcurrentLinkedQueue<>();
        AtomicLong decisions = new AtomicLong(); // outcomes a policy version decided: all but the 429s
        AtomicLong limited = new AtomicLong(); // counted, not kept: a fast machine makes millions of them
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService senders = Executors.newFixedThreadPool(tokens.size());
        List<Future<?>> running = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        for (Map.Entry<String, String> sender : tokens.entrySet()) {
            running.add(senders.submit(() -> {
                // Bounded by time, never by a count: the flips below take the time they take, and
                // senders that ran out of sends first would leave the last flips without load.
                for (long i = 0; !stop.get() && System.nanoTime() < deadline; i++) {
                    Resp r = hub.send(sender.getValue(), "t", sender.getKey() + " " + i);
                    if (r.status() == 429) {
                        limited.incrementAndGet();
                    } else {
                        outcomes.add(new Outcome(sender.getKey(), r.status(), r.json()));
                        decisions.incrementAndGet();
                    }
                }
            }));
        }
        try {
            for (int flip = 0; flip < FLIPS; flip++) {
                boolean toB = flip % 2 == 0;
                PolicyFiles.write(file, toB ? B : A);
                assertEquals(toB ? versionB : versionA, PolicyFiles.awaitNewVersion(hub, toB ? versionA : versionB));
                // Every phase runs under load: 20 more decisions (a 429 decides nothing), of which
                // at most one per sender was under way before the flip.
                long seen = decisions.get();
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5))
                        .until(() -> decisions.get() >= seen + 20);
            }
        } finally {
            stop.set(true);
            senders.shutdown();
            assertTrue(senders.awaitTermination(60, TimeUnit.SECONDS));
        }
        for (Future<?> f : running) {
            f.get();
        }

        int denied = 0;
        Set<String> accepted = new java.util.HashSet<>();
        for (Outcome o : outcomes) {
            switch (o.status()) {
                case 202 -> accepted.add(o.body().get("id").asText());
                case 403 -> {
                    assertEquals("acl_denied", o.body().get("error").asText(), o.body()::toString);
                    assertEquals(versionA, o.body().get("policyVersion").asText(), () -> "a refusal under B: " + o);
                    assertEquals("block-t", o.body().get("rule").asText(), o.body()::toString);
                    denied++;
                }
                default -> fail("unexpected answer " + o);
            }
        }
        int decided = accepted.size() + denied;
        assertTrue(denied >= FLIPS / 2 && accepted.size() >= FLIPS / 2,
                "both versions decided under load: " + accepted.size() + " accepted, " + denied + " denied, "
                        + limited + " rate limited");

        // Every accepted envelope was decided under B: the group by the ACL, outsiders by B's rule.
        List<JsonNode> inbox = hub.inbox(t);
        assertEquals(accepted, inbox.stream().map(e -> e.get("id").asText()).collect(Collectors.toSet()));
        for (JsonNode envelope : inbox) {
            assertEquals(versionB, envelope.at("/trace/policyVersion").asText(), envelope::toString);
            if (OUTSIDERS.contains(envelope.get("from").asText())) {
                assertEquals("policy", envelope.at("/trace/route").asText(), envelope::toString);
                assertEquals("widen", envelope.at("/trace/rule").asText(), envelope::toString);
            } else {
                assertEquals("intra_group", envelope.at("/trace/route").asText(), envelope::toString);
                assertTrue(envelope.at("/trace/rule").isMissingNode(), envelope::toString);
            }
        }

        // The audit log tells the same story, one entry per decision.
        List<JsonNode> audit = new ArrayList<>();
        for (String line : hub.get(hub.admin(), "/v1/audit?format=jsonl&action=send&node=t").body().split("\n")) {
            audit.add(HubFixture.JSON.readTree(line));
        }
        assertEquals(decided, audit.size());
        for (JsonNode entry : audit) {
            boolean outsider = OUTSIDERS.contains(entry.get("actor").asText());
            if (entry.get("decision").asText().equals("deny")) {
                assertEquals(versionA, entry.get("policyVersion").asText(), entry::toString);
                assertEquals("block-t", entry.get("rule").asText(), entry::toString);
            } else {
                assertEquals(versionB, entry.get("policyVersion").asText(), entry::toString);
                assertEquals(outsider ? "widen" : null, entry.get("rule").isNull() ? null : entry.get("rule").asText(),
                        entry::toString);
            }
        }
        assertTrue(hub.metric("parley_policy_reloads_total") >= FLIPS + 2);
    }
}
