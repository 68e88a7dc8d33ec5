package dev.parley.server.it;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.HubFixture.uid;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture.Resp;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** JSON inbox polling, audit, health, metrics, unknown paths and methods. */
class InboxAuditOpsTest {
    @TempDir
    static Path dataDir;
    static HubFixture hub;

    @BeforeAll
    static void startHub() {
        hub = HubFixture.start(dataDir);
    }

    @AfterAll
    static void stopHub() {
        if (hub != null) {
            hub.close();
        }
    }

    static List<Long> seqs(Resp page) {
        assertStatus(200, page);
        List<Long> out = new ArrayList<>();
        page.items().forEach(e -> out.add(e.get("seq").asLong()));
        return out;
    }

    // ------------------------------------------------------------------ inbox

    @Test
    void inboxPollingPagesWithAfterLimitAndNext() {
        String a = uid("ia");
        String aToken = hub.createNode(a, null);
        String b = uid("ib");
        String bToken = hub.createNode(b, a);
        List<String> ids = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            ids.add(hub.sendOk(aToken, b, "m" + i).text("id"));
        }

        Resp all = hub.get(bToken, "/v1/inbox");
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), seqs(all));
        assertEquals(5, all.num("next"));
        assertEquals(ids, all.items().stream().map(e -> e.get("id").asText()).toList());
        assertEquals("m1", all.items().get(0).get("text").asText());
        assertEquals(a, all.items().get(0).get("from").asText());

        Resp page = hub.get(bToken, "/v1/inbox?after=2&limit=2");
        assertEquals(List.of(3L, 4L), seqs(page));
        assertEquals(4, page.num("next"));
        Resp rest = hub.get(bToken, "/v1/inbox?after=" + page.num("next") + "&limit=2");
        assertEquals(List.of(5L), seqs(rest));
        assertEquals(5, rest.num("next"));
        Resp none = hub.get(bToken, "/v1/inbox?after=5");
        assertEquals(List.of(), seqs(none));
        assertEquals(5, none.num("next"), "next stays at after when nothing is returned");
        assertEquals(List.of(1L), seqs(hub.get(bToken, "/v1/inbox?limit=1")));
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), seqs(hub.get(bToken, "/v1/inbox?after=0&limit=1000")));

        // the sender's own inbox is separate
        assertEquals(List.of(), seqs(hub.get(aToken, "/v1/inbox")));
        // admin variant
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), seqs(hub.get(hub.admin(), "/v1/nodes/" + b + "/inbox")));
        assertError(hub.get(aToken, "/v1/nodes/" + b + "/inbox"), 403, "forbidden");
        assertError(hub.get(hub.admin(), "/v1/nodes/" + uid("none") + "/inbox"), 404, "node_not_found");

        assertError(hub.get(bToken, "/v1/inbox?after=abc"), 400, "invalid_cursor");
        assertError(hub.get(bToken, "/v1/inbox?after=1.5"), 400, "invalid_cursor");
        assertError(hub.get(bToken, "/v1/inbox?limit=abc"), 400, "invalid_request");
        assertError(hub.get(bToken, "/v1/inbox?limit=-1"), 400, "invalid_request");
        assertEquals(6, hub.sendOk(aToken, b, "m6").num("seq"), "hub still serves after bad cursors");
    }

    // ------------------------------------------------------------------ audit

    @Test
    void auditRecordsAllowAndDenyWithReasonsAndFilters() {
        String a = uid("aa");
        String aToken = hub.createNode(a, null);
        String a1 = uid("aa1");
        hub.createNode(a1, a);
        String x = uid("ax");
        hub.createNode(x, null);

        String allowedId = hub.sendOk(aToken, a1, "allowed").text("id");
        Resp denied = assertError(hub.send(aToken, x, "denied"), 403, "acl_denied");

        Resp audit = assertStatus(200, hub.get(hub.admin(), "/v1/audit?node=" + a));
        List<JsonNode> items = audit.items();
        assertFalse(items.isEmpty());
        for (JsonNode it : items) {
            assertTrue(a.equals(it.path("actor").asText()) || a.equals(it.path("target").asText()),
                    "node filter leaked an unrelated entry: " + it);
        }
        Instant prev = Instant.MAX;
        for (JsonNode it : items) {
            Instant at = Instant.parse(it.get("at").asText());
            assertFalse(at.isAfter(prev), "audit must be newest first: " + items);
            prev = at;
        }

        JsonNode allow = items.stream().filter(it -> "send".equals(it.path("action").asText())
                && "allow".equals(it.path("decision").asText())).findFirst().orElse(null);
        assertNotNull(allow, "allow entry for the send expected: " + items);
        assertEquals(a, allow.get("actor").asText());
        assertEquals(a1, allow.get("target").asText());
        assertEquals(allowedId, allow.get("envelopeId").asText());
        assertFalse(allow.path("reason").asText("").isBlank(), "allow needs a reason: " + allow);

        JsonNode deny = items.stream().filter(it -> "send".equals(it.path("action").asText())
                && "deny".equals(it.path("decision").asText())).findFirst().orElse(null);
        assertNotNull(deny, "deny entry for the refused send expected: " + items);
        assertEquals(a, deny.get("actor").asText());
        assertEquals(x, deny.get("target").asText());
        assertEquals(denied.text("reason"), deny.get("reason").asText(), "audit reason = the 403 reason");
        assertTrue(deny.get("envelopeId") == null || deny.get("envelopeId").isNull(), "no envelope for a deny");

        Resp onlyDeny = assertStatus(200, hub.get(hub.admin(), "/v1/audit?node=" + a + "&decision=deny"));
        assertFalse(onlyDeny.items().isEmpty());
        onlyDeny.items().forEach(it -> assertEquals("deny", it.get("decision").asText()));
        Resp onlyAllow = assertStatus(200, hub.get(hub.admin(), "/v1/audit?node=" + a + "&decision=allow"));
        assertTrue(onlyAllow.items().stream().anyMatch(it -> allowedId.equals(it.path("envelopeId").asText())));
        onlyAllow.items().forEach(it -> assertEquals("allow", it.get("decision").asText()));

        // newest first: the deny came last
        Resp one = assertStatus(200, hub.get(hub.admin(), "/v1/audit?node=" + a + "&limit=1"));
        assertEquals(1, one.items().size());
        assertEquals("deny", one.items().get(0).get("decision").asText());
        assertEquals(x, one.items().get(0).get("target").asText());

        Resp global = assertStatus(200, hub.get(hub.admin(), "/v1/audit?limit=2"));
        assertEquals(2, global.items().size());

        // node.create is audited too
        assertTrue(assertStatus(200, hub.get(hub.admin(), "/v1/audit?node=" + x)).items().stream()
                .anyMatch(it -> "node.create".equals(it.path("action").asText())), "node.create entry expected");

        assertError(hub.get(aToken, "/v1/audit"), 403, "forbidden");
        assertError(hub.get(aToken, "/v1/audit?node=" + a), 403, "forbidden");
        hub.assertStillServes();
    }

    @Test
    void everyDocumentedActionIsAudited() {
        Instant start = Instant.now().minusMillis(5);
        String a = uid("au");
        String aToken = hub.createNode(a, null);
        String b = uid("au-b");
        String bToken = hub.createNode(b, a);
        String x = uid("au-x");
        hub.createNode(x, null);
        String m = hub.sendOk(aToken, b, "audit me").text("id");
        assertStatus(200, hub.post(bToken, "/v1/messages/" + m + "/ack", obj("status", "processed")));
        String reply = assertStatus(202, hub.post(bToken, "/v1/messages/" + m + "/reply", obj("text", "ok"))).text("id");
        assertStatus(200, hub.post(hub.admin(), "/v1/nodes/" + b + "/token", null));
        String grant = assertStatus(201, hub.post(hub.admin(), "/v1/grants", obj("from", a, "to", x))).text("id");
        assertStatus(204, hub.delete(hub.admin(), "/v1/grants/" + grant));
        assertStatus(204, hub.delete(hub.admin(), "/v1/nodes/" + b));

        List<JsonNode> entries = assertStatus(200, hub.get(hub.admin(), "/v1/audit?limit=1000")).items().stream()
                .filter(it -> !Instant.parse(it.get("at").asText()).isBefore(start)).toList();
        java.util.function.BiPredicate<String, java.util.function.Predicate<JsonNode>> has = (action, extra) ->
                entries.stream().anyMatch(it -> action.equals(it.path("action").asText())
                        && "allow".equals(it.path("decision").asText()) && extra.test(it));
        assertTrue(has.test("node.create", it -> b.equals(it.path("target").asText())), "node.create: " + entries);
        assertTrue(has.test("send", it -> m.equals(it.path("envelopeId").asText())
                && a.equals(it.path("actor").asText())), "send: " + entries);
        assertTrue(has.test("ack", it -> b.equals(it.path("actor").asText())
                && (m.equals(it.path("envelopeId").asText()) || m.equals(it.path("target").asText()))),
                "ack: " + entries);
        assertTrue(has.test("reply", it -> reply.equals(it.path("envelopeId").asText())
                && b.equals(it.path("actor").asText()) && a.equals(it.path("target").asText())), "reply: " + entries);
        assertTrue(has.test("token.rotate", it -> b.equals(it.path("target").asText())), "token.rotate: " + entries);
        assertTrue(has.test("grant.create", it -> true), "grant.create: " + entries);
        assertTrue(has.test("grant.delete", it -> true), "grant.delete: " + entries);
        assertTrue(has.test("node.delete", it -> b.equals(it.path("target").asText())), "node.delete: " + entries);
        for (JsonNode it : entries) {
            Instant.parse(it.get("at").asText());
            assertFalse(it.path("actor").asText("").isBlank(), "every entry names its actor: " + it);
        }
    }

    // ------------------------------------------------------------------ health, metrics, routing

    @Test
    void healthzNeedsNoAuth() {
        Resp h = hub.get(null, "/healthz");
        assertStatus(200, h);
        assertEquals("ok", h.text("status"));
    }

    @Test
    void metricsExposeTheDocumentedNamesAndCountersMove() {
        Resp m = hub.get(hub.admin(), "/metrics");
        assertStatus(200, m);
        String type = m.headers().firstValue("Content-Type").orElse("");
        assertTrue(type.startsWith("text/plain"), "Prometheus text expected, got " + type);
        for (String name : List.of("parley_sends_accepted_total", "parley_sends_denied_total",
                "parley_commit_batch_size_sum", "parley_commit_batch_size_count",
                "parley_commit_latency_seconds_bucket", "parley_commit_latency_seconds_sum",
                "parley_commit_latency_seconds_count", "parley_fold_latency_seconds_count", "parley_open_streams",
                "parley_inbox_backlog")) {
            assertTrue(m.body().contains(name), "metric " + name + " missing from:\n" + m.body());
        }
        assertTrue(m.body().contains("le=\"+Inf\""), "the latency histogram needs a +Inf bucket");

        double accepted = hub.metric("parley_sends_accepted_total");
        double deniedBefore = hub.metric("parley_sends_denied_total");
        double commits = hub.metric("parley_commit_latency_seconds_count");
        double folds = hub.metric("parley_fold_latency_seconds_count");
        String a = uid("ma");
        String aToken = hub.createNode(a, null);
        String b = uid("mb");
        hub.createNode(b, null);
        for (int i = 0; i < 3; i++) {
            hub.sendOk(aToken, a, "count me");
        }
        assertError(hub.send(aToken, b, "deny me"), 403, "acl_denied");
        assertTrue(hub.metric("parley_sends_accepted_total") >= accepted + 3, "accepted counter did not move");
        assertTrue(hub.metric("parley_sends_denied_total") >= deniedBefore + 1, "denied counter did not move");
        assertTrue(hub.metric("parley_commit_latency_seconds_count") > commits, "commit histogram did not move");
        // the writer folds after a batch once its interval has passed since the last fold: a send each poll brings one
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            hub.sendOk(aToken, a, "fold me");
            return hub.metric("parley_fold_latency_seconds_count") > folds;
        });

        // loopback callers need no token
        Resp anon = hub.get(null, "/metrics");
        assertStatus(200, anon);
        assertTrue(anon.body().contains("parley_sends_accepted_total"));
    }

    @Test
    void unknownPathIs404AndWrongMethodIs405() {
        assertError(hub.get(hub.admin(), "/v1/nope"), 404, "not_found");
        assertError(hub.get(hub.admin(), "/nothing/here"), 404, "not_found");
        String a = uid("rt");
        String aToken = hub.createNode(a, null);
        assertError(hub.get(aToken, "/v1/messages"), 405, "method_not_allowed");
        assertError(hub.delete(aToken, "/v1/messages"), 405, "method_not_allowed");
        assertError(hub.request("PUT", "/v1/nodes", hub.admin(), "{}".getBytes(), Map.of()), 405,
                "method_not_allowed");
        assertError(hub.post(hub.admin(), "/v1/audit", obj()), 405, "method_not_allowed");
        assertError(hub.post(hub.admin(), "/healthz", obj()), 405, "method_not_allowed");
        assertError(hub.get(hub.admin(), "/v1/grants/some-id"), 405, "method_not_allowed");
        assertError(hub.delete(hub.admin(), "/v1/inbox"), 405, "method_not_allowed");
        hub.sendOk(aToken, a, "still serving");
    }

    /**
     * The server routes the decoded path: without the guard's refusal {@code /v1/nodes%2F<id>}
     * answered the node itself (200) and {@code /v1/inbox%2Fstream} opened the inbox's stream.
     */
    @Test
    void anEscapedSlashInAPathIsRefusedNotRoutedAsASlash() {
        String a = uid("slash");
        String aToken = hub.createNode(a, null);
        assertStatus(200, hub.get(hub.admin(), "/v1/nodes/" + a));
        assertError(hub.get(hub.admin(), "/v1/nodes%2F" + a), 400, "invalid_request");
        assertError(hub.get(hub.admin(), "/v1/nodes%2f" + a), 400, "invalid_request");
        assertError(hub.get(hub.admin(), "/v1/nodes/" + a + "%2Fx"), 400, "invalid_request");
        assertError(hub.get(aToken, "/v1/inbox%2Fstream"), 400, "invalid_request");
        assertError(hub.get(null, "/v1/nodes%2F" + a), 400, "invalid_request");
        hub.sendOk(aToken, a, "still serving");
    }
}
