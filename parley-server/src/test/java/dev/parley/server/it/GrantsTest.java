package dev.parley.server.it;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.HubFixture.uid;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture.Resp;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Grants: admin-only management, one-directional effect, expiry. */
class GrantsTest {
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

    static Set<String> grantIds(Resp list) {
        assertStatus(200, list);
        return list.items().stream().map(g -> g.get("id").asText()).collect(Collectors.toSet());
    }

    @Test
    void createListAndDelete() {
        String a = uid("ga");
        String aToken = hub.createNode(a, null);
        String b = uid("gb");
        String bToken = hub.createNode(b, null);
        String c = uid("gc");
        String cToken = hub.createNode(c, null);

        Resp g = hub.post(hub.admin(), "/v1/grants", obj("from", a, "to", b, "expiresAt", null, "note", "pairing"));
        assertStatus(201, g);
        String id = g.text("id");
        assertTrue(id != null && !id.isBlank(), "grant id expected: " + g);
        assertEquals(a, g.text("from"));
        assertEquals(b, g.text("to"));
        assertTrue(g.json().has("expiresAt") && g.get("expiresAt").isNull(), "expiresAt null expected: " + g);
        assertEquals("pairing", g.text("note"));
        Instant.parse(g.text("createdAt"));

        assertTrue(grantIds(hub.get(hub.admin(), "/v1/grants")).contains(id), "admin must list the grant");
        assertTrue(grantIds(hub.get(aToken, "/v1/grants")).contains(id), "grantee (from) must list the grant");
        assertTrue(grantIds(hub.get(bToken, "/v1/grants")).contains(id), "target (to) must list the grant");
        assertFalse(grantIds(hub.get(cToken, "/v1/grants")).contains(id), "unrelated node must not see the grant");

        assertError(hub.post(aToken, "/v1/grants", obj("from", a, "to", c)), 403, "forbidden");
        assertError(hub.post(cToken, "/v1/grants", obj("from", c, "to", a)), 403, "forbidden");
        assertError(hub.delete(aToken, "/v1/grants/" + id), 403, "forbidden");
        assertTrue(grantIds(hub.get(hub.admin(), "/v1/grants")).contains(id), "a refused delete must not delete");

        Resp deleted = hub.delete(hub.admin(), "/v1/grants/" + id);
        assertStatus(204, deleted);
        assertFalse(grantIds(hub.get(hub.admin(), "/v1/grants")).contains(id), "deleted grant still listed");
        assertError(hub.delete(hub.admin(), "/v1/grants/" + id), 404, "grant_not_found");
        assertError(hub.delete(hub.admin(), "/v1/grants/no-such-grant"), 404, "grant_not_found");
        hub.assertStillServes();
    }

    @Test
    void grantRequestsAreValidated() {
        String a = uid("gv");
        hub.createNode(a, null);
        String b = uid("gv");
        hub.createNode(b, null);

        assertError(hub.post(hub.admin(), "/v1/grants", obj("from", uid("ghost"), "to", b)), 404, "node_not_found");
        assertError(hub.post(hub.admin(), "/v1/grants", obj("from", a, "to", uid("ghost"))), 404, "node_not_found");
        assertError(hub.post(hub.admin(), "/v1/grants", obj("from", a, "to", a)), 400, "invalid_request");
        assertError(hub.post(hub.admin(), "/v1/grants", obj("from", a, "to", b, "expiresAt",
                HubFixture.rfc3339(Instant.now().minusSeconds(60)))), 400, "invalid_request");
        assertError(hub.post(hub.admin(), "/v1/grants", obj("from", a, "to", b, "expiresAt", "tomorrow")), 400,
                "invalid_request");
        assertError(hub.post(hub.admin(), "/v1/grants", obj("from", a)), 400, "invalid_request");
        assertError(hub.postRaw(hub.admin(), "/v1/grants", "{\"from\":"), 400, "invalid_request");
        assertError(hub.post(hub.admin(), "/v1/grants", obj("from", "NOT VALID", "to", b)), 400, "invalid_node_id");
        assertTrue(hub.get(hub.admin(), "/v1/grants").items().stream()
                .noneMatch(g -> g.get("from").asText().equals(a)), "a refused grant was stored");
        hub.assertStillServes();
    }

    @Test
    void aGrantWorksInOneDirectionOnly() {
        String a = uid("oa");
        hub.createNode(a, null);
        String a1 = uid("oa1");
        String a1Token = hub.createNode(a1, a);
        String b = uid("ob");
        hub.createNode(b, null);
        String b1 = uid("ob1");
        String b1Token = hub.createNode(b1, b);

        Resp before = assertError(hub.send(a1Token, b1, "no grant yet"), 403, "acl_denied");
        assertTrue(before.text("reason") != null && !before.text("reason").isBlank(), "reason expected: " + before);

        String grant = assertStatus(201, hub.post(hub.admin(), "/v1/grants", obj("from", a1, "to", b1))).text("id");
        Resp sent = hub.sendOk(a1Token, b1, "granted");
        List<JsonNode> inbox = hub.inbox(b1Token);
        assertEquals(1, inbox.size());
        JsonNode env = inbox.get(0);
        assertEquals(sent.text("id"), env.get("id").asText());
        assertEquals("grant", env.path("trace").path("route").asText(), "route must name the grant: " + env);
        assertEquals("grant", hub.status(a1Token, sent.text("id")).json().path("envelope").path("trace")
                .path("route").asText());

        Resp back = assertError(hub.send(b1Token, a1, "the other way"), 403, "acl_denied");
        assertTrue(back.text("reason") != null && !back.text("reason").isBlank());
        assertTrue(hub.inbox(a1Token).isEmpty(), "a denied send must not reach the inbox");

        assertStatus(204, hub.delete(hub.admin(), "/v1/grants/" + grant));
        assertError(hub.send(a1Token, b1, "grant revoked"), 403, "acl_denied");
        assertEquals(1, hub.inbox(b1Token).size(), "nothing may arrive once the grant is gone");
    }

    @Test
    void anExpiredGrantDoesNotCount() {
        String a = uid("ea");
        String aToken = hub.createNode(a, null);
        String b = uid("eb");
        String bToken = hub.createNode(b, null);

        Instant expires = Instant.now().plusMillis(1500);
        Resp g = assertStatus(201, hub.post(hub.admin(), "/v1/grants",
                obj("from", a, "to", b, "expiresAt", HubFixture.rfc3339(expires), "note", "short")));
        assertEquals(expires.toEpochMilli(), Instant.parse(g.text("expiresAt")).toEpochMilli());

        // While the grant lasts a send goes through. The hub decides by its clock somewhere
        // between the send's start and its answer, so the answer must agree with that span: a
        // send that left before the expiry may be refused only if it was answered after it.
        Instant leaving = Instant.now();
        Resp lasting = hub.send(aToken, b, "while the grant lasts");
        Instant answered = Instant.now();
        assertTrue(lasting.status() == 202 ? leaving.isBefore(expires)
                        : lasting.status() == 403 && !answered.isBefore(expires),
                () -> "sent at " + leaving + ", answered at " + answered + ", grant until " + expires + ": " + lasting);
        await().atMost(Duration.ofSeconds(6)).pollInterval(Duration.ofMillis(100))
                .until(() -> hub.send(aToken, b, "probe").status() == 403);
        assertTrue(Instant.now().isAfter(expires.minusMillis(50)), "send refused before the grant expired");
        Resp denied = assertError(hub.send(aToken, b, "after expiry"), 403, "acl_denied");
        assertTrue(denied.text("reason") != null && !denied.text("reason").isBlank());
        long delivered = hub.inbox(bToken).size();
        assertError(hub.send(aToken, b, "still expired"), 403, "acl_denied");
        assertEquals(delivered, hub.inbox(bToken).size(), "denied sends must not reach the inbox");
    }
}
