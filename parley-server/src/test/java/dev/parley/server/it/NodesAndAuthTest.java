package dev.parley.server.it;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.HubFixture.uid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture.Resp;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Authentication, token rotation, and the node routes of the contract. */
class NodesAndAuthTest {
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

    static Set<String> strings(JsonNode array) {
        assertTrue(array != null && array.isArray(), "expected an array, got " + array);
        Set<String> out = new HashSet<>();
        array.forEach(n -> out.add(n.asText()));
        assertEquals(array.size(), out.size(), "duplicates in " + array);
        return out;
    }

    static Set<String> listedIds(Resp list) {
        assertStatus(200, list);
        Set<String> ids = new HashSet<>();
        list.items().forEach(n -> ids.add(n.get("id").asText()));
        return ids;
    }

    static void assertTimestamp(JsonNode value) {
        assertTrue(value != null && value.isTextual(), "timestamp expected, got " + value);
        assertTrue(value.asText().matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z"),
                "RFC 3339 UTC with milliseconds expected: " + value);
        Instant.parse(value.asText());
    }

    // ------------------------------------------------------------------ authentication

    @Test
    void adminTokenIsCreatedAndStoredWithMode0600() throws Exception {
        assertTrue(hub.admin().startsWith("pa_"), "admin token must start with pa_");
        assertTrue(hub.hub().adminTokenCreated(), "first start must create the admin token");
        Path file = dataDir.resolve("admin.token");
        assertEquals(hub.admin(), Files.readString(file).trim());
        assertEquals(Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE),
                Files.getPosixFilePermissions(file));
        assertStatus(200, hub.get(hub.admin(), "/v1/nodes"));
    }

    @Test
    void missingMalformedOrUnknownTokenIs401() {
        assertError(hub.get(null, "/v1/nodes"), 401, "unauthorized");
        assertError(hub.get("pn_doesnotexist", "/v1/nodes"), 401, "unauthorized");
        assertError(hub.get("pa_doesnotexist", "/v1/nodes"), 401, "unauthorized");
        assertError(hub.request("GET", "/v1/nodes", null, null, Map.of("Authorization", "Basic Zm9vOmJhcg==")),
                401, "unauthorized");
        assertError(hub.request("GET", "/v1/nodes", null, null, Map.of("Authorization", "Bearer")),
                401, "unauthorized");
        assertError(hub.post(null, "/v1/messages", obj("to", "x", "text", "t")), 401, "unauthorized");
        assertError(hub.post(null, "/v1/nodes", obj("id", uid("x"), "kind", "external")), 401, "unauthorized");
        assertError(hub.post(null, "/v1/grants", obj("from", "a", "to", "b")), 401, "unauthorized");
        assertError(hub.get(null, "/v1/inbox"), 401, "unauthorized");
        assertError(hub.get(null, "/v1/audit"), 401, "unauthorized");
        assertError(hub.get(null, "/v1/messages/0193f0c4-0000-7000-8000-000000000000"), 401, "unauthorized");
        hub.assertStillServes();
    }

    @Test
    void deletedNodesTokenIs401() {
        String id = uid("gone");
        String token = hub.createNode(id, null);
        assertStatus(200, hub.get(token, "/v1/nodes/" + id));
        assertStatus(204, hub.delete(hub.admin(), "/v1/nodes/" + id));
        assertError(hub.get(token, "/v1/nodes/" + id), 401, "unauthorized");
        assertError(hub.get(token, "/v1/inbox"), 401, "unauthorized");
        assertError(hub.send(token, id, "anyone?"), 401, "unauthorized");
        hub.assertStillServes();
    }

    @Test
    void rotatedAwayTokenIs401WhileTheNewOneWorks() {
        String id = uid("rot");
        String first = hub.createNode(id, null);

        Resp self = hub.post(first, "/v1/nodes/" + id + "/token", null);
        assertStatus(200, self);
        String second = self.text("token");
        assertTrue(second != null && second.startsWith("pn_"), "new token expected: " + self);
        assertNotEquals(first, second);
        assertError(hub.get(first, "/v1/nodes/" + id), 401, "unauthorized");
        assertError(hub.send(first, id, "old"), 401, "unauthorized");
        assertStatus(200, hub.get(second, "/v1/nodes/" + id));
        hub.sendOk(second, id, "new token sends");

        Resp byAdmin = hub.post(hub.admin(), "/v1/nodes/" + id + "/token", null);
        assertStatus(200, byAdmin);
        String third = byAdmin.text("token");
        assertNotEquals(second, third);
        assertError(hub.get(second, "/v1/nodes/" + id), 401, "unauthorized");
        assertStatus(200, hub.get(third, "/v1/nodes/" + id));

        // another node may not rotate it; the token in force is untouched
        String otherId = uid("rot-other");
        String other = hub.createNode(otherId, null);
        assertError(hub.post(other, "/v1/nodes/" + id + "/token", null), 403, "forbidden");
        assertStatus(200, hub.get(third, "/v1/nodes/" + id));

        assertError(hub.post(hub.admin(), "/v1/nodes/" + uid("nobody") + "/token", null), 404, "node_not_found");
        assertError(hub.post(hub.admin(), "/v1/nodes/NOT_VALID/token", null), 400, "invalid_node_id");
    }

    // ------------------------------------------------------------------ creation

    @Test
    void adminCreatesRootsAndChildrenWithTheDocumentedFields() {
        String root = uid("root");
        Resp r = hub.post(hub.admin(), "/v1/nodes",
                obj("id", root, "kind", "external", "labels", Map.of("role", "lead")));
        assertStatus(201, r);
        assertEquals(root, r.text("id"));
        assertEquals("external", r.text("kind"));
        assertTrue(r.json().has("parent") && r.json().get("parent").isNull(), "root parent must be null: " + r);
        assertEquals(Set.of(root), strings(r.get("group")));
        assertEquals(0, r.num("depth"));
        assertEquals("lead", r.json().path("labels").path("role").asText());
        assertTimestamp(r.get("createdAt"));
        assertTrue(r.text("token").startsWith("pn_"));

        String c1 = uid("child");
        Resp child = hub.post(hub.admin(), "/v1/nodes", obj("id", c1, "kind", "managed", "parent", root));
        assertStatus(201, child);
        assertEquals(root, child.text("parent"));
        assertEquals("managed", child.text("kind"));
        assertEquals(1, child.num("depth"));
        assertEquals(Set.of(root, c1), strings(child.get("group")));

        String c2 = uid("child");
        Resp second = hub.post(hub.admin(), "/v1/nodes", obj("id", c2, "kind", "human", "parent", root));
        assertStatus(201, second);
        assertEquals(Set.of(root, c1, c2), strings(second.get("group")));

        Resp shown = assertStatus(200, hub.get(hub.admin(), "/v1/nodes/" + root));
        assertEquals(root, shown.text("id"));
        assertEquals(Set.of(c1, c2), strings(shown.get("children")));
        assertEquals(Set.of(root, c1, c2), strings(shown.get("group")));
        assertEquals(0, shown.num("depth"));
        assertEquals("lead", shown.json().path("labels").path("role").asText());
        assertTimestamp(shown.get("createdAt"));
        assertFalse(shown.json().has("token"), "show must not reveal a token: " + shown);

        Resp shownChild = assertStatus(200, hub.get(hub.admin(), "/v1/nodes/" + c1));
        assertEquals(root, shownChild.text("parent"));
        assertEquals(Set.of(), strings(shownChild.get("children")));
        assertEquals(Set.of(root, c1, c2), strings(shownChild.get("group")));

        assertError(hub.post(hub.admin(), "/v1/nodes", obj("id", uid("k"), "kind", "robot")), 400, "invalid_request");
    }

    @Test
    void nodeCreatesChildrenOnlyOfItself() {
        String root = uid("lead");
        String rootToken = hub.createNode(root, null);
        String otherRoot = uid("lead");
        hub.createNode(otherRoot, null);

        String defaulted = uid("w");
        Resp r = assertStatus(201, hub.post(rootToken, "/v1/nodes", obj("id", defaulted, "kind", "external")));
        assertEquals(root, r.text("parent"), "parent must default to the caller");
        assertEquals(1, r.num("depth"));
        assertTrue(r.text("token").startsWith("pn_"));

        String explicit = uid("w");
        Resp r2 = assertStatus(201, hub.post(rootToken, "/v1/nodes", obj("id", explicit, "kind", "external",
                "parent", root)));
        assertEquals(root, r2.text("parent"));

        String stolen = uid("w");
        assertError(hub.post(rootToken, "/v1/nodes", obj("id", stolen, "kind", "external", "parent", otherRoot)),
                403, "forbidden");
        assertError(hub.get(hub.admin(), "/v1/nodes/" + stolen), 404, "node_not_found");

        // the new child's token works and the child is in the creator's group
        hub.sendOk(r.text("token"), root, "hello parent");
        hub.assertStillServes();
    }

    @Test
    void invalidNodeIdInBodyAndPath() {
        for (String bad : List.of("Bad ID", "UPPER", "-lead", ".lead", "a/b", "é", "a".repeat(64), "")) {
            assertError(hub.post(hub.admin(), "/v1/nodes", obj("id", bad, "kind", "external")), 400,
                    "invalid_node_id");
        }
        String longest = (uid("long") + "-" + "z".repeat(63)).substring(0, 63);
        assertStatus(201, hub.post(hub.admin(), "/v1/nodes", obj("id", longest, "kind", "external")));
        assertError(hub.post(hub.admin(), "/v1/nodes", obj("id", uid("ok"), "kind", "external", "parent", "NOPE")),
                400, "invalid_node_id");
        assertError(hub.get(hub.admin(), "/v1/nodes/UPPER"), 400, "invalid_node_id");
        assertError(hub.get(hub.admin(), "/v1/nodes/bad%20id"), 400, "invalid_node_id");
        assertError(hub.delete(hub.admin(), "/v1/nodes/UPPER"), 400, "invalid_node_id");
        assertError(hub.get(hub.admin(), "/v1/nodes/UPPER/inbox"), 400, "invalid_node_id");
        hub.assertStillServes();
    }

    @Test
    void nodeExistsAlsoForADeletedId() {
        String id = uid("dup");
        hub.createNode(id, null);
        assertError(hub.post(hub.admin(), "/v1/nodes", obj("id", id, "kind", "external")), 409, "node_exists");
        assertStatus(204, hub.delete(hub.admin(), "/v1/nodes/" + id));
        assertError(hub.post(hub.admin(), "/v1/nodes", obj("id", id, "kind", "external")), 409, "node_exists");
        hub.assertStillServes();
    }

    @Test
    void unknownOrDeletedParentIsNodeNotFound() {
        assertError(hub.post(hub.admin(), "/v1/nodes", obj("id", uid("orphan"), "kind", "external",
                "parent", uid("missing"))), 404, "node_not_found");
        String dead = uid("dead");
        hub.createNode(dead, null);
        assertStatus(204, hub.delete(hub.admin(), "/v1/nodes/" + dead));
        String orphan = uid("orphan");
        assertError(hub.post(hub.admin(), "/v1/nodes", obj("id", orphan, "kind", "external", "parent", dead)),
                404, "node_not_found");
        assertError(hub.get(hub.admin(), "/v1/nodes/" + uid("missing")), 404, "node_not_found");
        hub.assertStillServes();
    }

    @Test
    void depthLimitWithTheDefaultMaxDepthOfOne() {
        String root = uid("d-root");
        hub.createNode(root, null);
        String child = uid("d-child");
        String childToken = hub.createNode(child, root);

        String gc = uid("d-gc");
        assertError(hub.post(childToken, "/v1/nodes", obj("id", gc, "kind", "external")), 403, "depth_limit");
        assertError(hub.post(hub.admin(), "/v1/nodes", obj("id", gc, "kind", "external", "parent", child)),
                403, "depth_limit");
        assertError(hub.get(hub.admin(), "/v1/nodes/" + gc), 404, "node_not_found");
        hub.assertStillServes();
    }

    @Test
    void maxDepthTwoAllowsAGrandchild(@TempDir Path otherDir) {
        try (HubFixture deep = HubFixture.start(otherDir, c -> c.withMaxDepth(2))) {
            String root = uid("root");
            deep.createNode(root, null);
            String child = uid("child");
            String childToken = deep.createNode(child, root);

            String gc = uid("gc");
            Resp r = assertStatus(201, deep.post(childToken, "/v1/nodes", obj("id", gc, "kind", "external")));
            assertEquals(child, r.text("parent"));
            assertEquals(2, r.num("depth"));
            assertEquals(Set.of(child, gc), strings(r.get("group")));
            String gcToken = r.text("token");

            assertError(deep.post(gcToken, "/v1/nodes", obj("id", uid("ggc"), "kind", "external")), 403,
                    "depth_limit");

            // the grandchild reaches its parent, not its grandparent
            Resp up = deep.sendOk(gcToken, child, "to parent");
            assertEquals(1, up.num("seq"));
            Resp denied = assertError(deep.send(gcToken, root, "to grandparent"), 403, "acl_denied");
            assertTrue(denied.text("reason") != null && !denied.text("reason").isBlank());
        }
    }

    // ------------------------------------------------------------------ list, show, delete

    @Test
    void listAndShowFollowVisibility() {
        String a = uid("va");
        String aToken = hub.createNode(a, null);
        String a1 = uid("va1");
        String a1Token = hub.createNode(a1, a);
        String a2 = uid("va2");
        hub.createNode(a2, a);
        String b = uid("vb");
        hub.createNode(b, null);
        String b1 = uid("vb1");
        hub.createNode(b1, b);

        Set<String> all = listedIds(hub.get(hub.admin(), "/v1/nodes"));
        assertTrue(all.containsAll(Set.of(a, a1, a2, b, b1)), "admin must see every node: " + all);

        assertEquals(Set.of(a1, a, a2), listedIds(hub.get(a1Token, "/v1/nodes")), "child sees itself, parent, sibling");
        assertEquals(Set.of(a, a1, a2), listedIds(hub.get(aToken, "/v1/nodes")), "root sees itself and children");

        assertStatus(200, hub.get(a1Token, "/v1/nodes/" + a));
        assertStatus(200, hub.get(a1Token, "/v1/nodes/" + a2));
        assertError(hub.get(a1Token, "/v1/nodes/" + b), 403, "forbidden");
        assertError(hub.get(a1Token, "/v1/nodes/" + b1), 403, "forbidden");

        // a grant makes the peer visible to the grantee
        Resp grant = assertStatus(201, hub.post(hub.admin(), "/v1/grants", obj("from", a1, "to", b1)));
        assertTrue(listedIds(hub.get(a1Token, "/v1/nodes")).contains(b1), "grant peer must be listed");
        assertStatus(200, hub.get(a1Token, "/v1/nodes/" + b1));
        assertFalse(listedIds(hub.get(a1Token, "/v1/nodes")).contains(b), "unrelated node must stay hidden");
        assertStatus(204, hub.delete(hub.admin(), "/v1/grants/" + grant.text("id")));
        assertFalse(listedIds(hub.get(a1Token, "/v1/nodes")).contains(b1), "deleted grant must hide the peer");
    }

    @Test
    void deleteIsAdminOnlyAndKeepsTheInboxReadable() {
        String root = uid("del-root");
        String rootToken = hub.createNode(root, null);
        String victim = uid("victim");
        String victimToken = hub.createNode(victim, root);
        Resp sent = hub.sendOk(rootToken, victim, "before deletion");

        assertError(hub.delete(rootToken, "/v1/nodes/" + victim), 403, "forbidden");
        assertError(hub.delete(victimToken, "/v1/nodes/" + victim), 403, "forbidden");
        assertStatus(200, hub.get(victimToken, "/v1/nodes/" + victim));

        Resp gone = hub.delete(hub.admin(), "/v1/nodes/" + victim);
        assertStatus(204, gone);
        assertTrue(gone.body() == null || gone.body().isEmpty(), "204 has no body: " + gone);
        assertFalse(listedIds(hub.get(hub.admin(), "/v1/nodes")).contains(victim), "deleted node still listed");
        assertFalse(listedIds(hub.get(rootToken, "/v1/nodes")).contains(victim), "deleted node still visible");
        assertError(hub.send(rootToken, victim, "after deletion"), 404, "node_not_found");
        assertError(hub.delete(hub.admin(), "/v1/nodes/" + uid("never")), 404, "node_not_found");

        List<JsonNode> inbox = hub.inboxAll(hub.admin(), "/v1/nodes/" + victim + "/inbox");
        assertEquals(1, inbox.size(), "deleted node's inbox must stay readable by admin: " + inbox);
        assertEquals(sent.text("id"), inbox.get(0).get("id").asText());
        assertError(hub.get(rootToken, "/v1/nodes/" + victim + "/inbox"), 403, "forbidden");
    }
}
