package dev.parley.server.it;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.HubFixture.uid;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Sending, routes and ACL, idempotency, validation, status, ack and reply. */
class MessagesTest {
    static final String UUID_V7 = "^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$";
    static final Duration WAIT = Duration.ofSeconds(5);

    @TempDir
    static Path dataDir;
    static HubFixture hub;

    /** A fresh family per test: root {@code r} with children {@code c} and {@code c2}; root {@code s} with child {@code d}. */
    String r;
    String rToken;
    String c;
    String cToken;
    String c2;
    String c2Token;
    String s;
    String sToken;
    String d;
    String dToken;

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

    @BeforeEach
    void family() {
        r = uid("r");
        rToken = hub.createNode(r, null);
        c = uid("c");
        cToken = hub.createNode(c, r);
        c2 = uid("c2");
        c2Token = hub.createNode(c2, r);
        s = uid("s");
        sToken = hub.createNode(s, null);
        d = uid("d");
        dToken = hub.createNode(d, s);
    }

    static String routeOf(Resp status) {
        assertStatus(200, status);
        return status.json().path("envelope").path("trace").path("route").asText(null);
    }

    static List<String> timelineStates(Resp status) {
        assertStatus(200, status);
        JsonNode tl = status.get("timeline");
        assertTrue(tl != null && tl.isArray(), "timeline expected: " + status);
        List<String> out = new ArrayList<>();
        Instant prev = Instant.MIN;
        for (JsonNode e : tl) {
            out.add(e.get("state").asText());
            Instant at = Instant.parse(e.get("at").asText());
            assertFalse(at.isBefore(prev), "timeline out of order: " + tl);
            prev = at;
        }
        return out;
    }

    // ------------------------------------------------------------------ send

    @Test
    void acceptedSendAnswersAndStoresTheDocumentedEnvelope() {
        Resp first = hub.post(rToken, "/v1/messages", obj("to", c, "kind", "message", "text", "run the tests",
                "data", Map.of("any", "json"), "corrId", null, "threadId", "t-1", "meta", Map.of("k", "v"),
                "requiresReply", false));
        assertStatus(202, first);
        assertTrue(first.text("id").matches(UUID_V7), "id must be a UUIDv7: " + first);
        assertEquals(1, first.num("seq"));
        assertEquals(c, first.text("to"));
        assertEquals("accepted", first.text("status"));
        assertTrue(first.text("createdAt").matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z"),
                "RFC 3339 UTC with milliseconds: " + first.text("createdAt"));

        Resp second = hub.post(rToken, "/v1/messages", obj("to", c, "data", List.of(1, 2, 3)));
        assertStatus(202, second);
        assertEquals(2, second.num("seq"), "seq grows by one per inbox");
        assertNotEquals(first.text("id"), second.text("id"));
        assertTrue(second.text("id").compareTo(first.text("id")) > 0, "ids are time-ordered: " + first.text("id")
                + " then " + second.text("id"));

        Resp third = hub.post(rToken, "/v1/messages", obj("to", c, "kind", "note.v1", "text", "custom kind"));
        assertStatus(202, third);
        assertEquals(3, third.num("seq"));

        List<JsonNode> inbox = hub.inbox(cToken);
        assertEquals(3, inbox.size(), "inbox: " + inbox);
        JsonNode e = inbox.get(0);
        assertEquals(first.text("id"), e.get("id").asText());
        assertEquals(1, e.get("seq").asLong());
        assertEquals(r, e.get("from").asText());
        assertEquals(c, e.get("to").asText());
        assertEquals("message", e.get("kind").asText());
        assertEquals("run the tests", e.get("text").asText());
        assertEquals("json", e.path("data").path("any").asText());
        assertTrue(e.get("corrId") == null || e.get("corrId").isNull());
        assertEquals("t-1", e.get("threadId").asText());
        assertEquals("v", e.path("meta").path("k").asText());
        assertEquals(Instant.parse(first.text("createdAt")), Instant.parse(e.get("createdAt").asText()));
        assertEquals(1, e.path("trace").path("attempt").asInt());
        assertEquals("intra_group", e.path("trace").path("route").asText());
        assertFalse(e.path("trace").path("policyVersion").asText("").isBlank(), "policyVersion expected: " + e);

        JsonNode e2 = inbox.get(1);
        assertEquals("message", e2.get("kind").asText(), "kind defaults to message");
        assertTrue(e2.get("text") == null || e2.get("text").isNull(), "data-only envelope has no text: " + e2);
        assertEquals(3, e2.get("data").size());
        assertEquals("note.v1", inbox.get(2).get("kind").asText());
    }

    @Test
    void routesSelfIntraGroupAndGrant() {
        Resp self = hub.sendOk(rToken, r, "note to self");
        assertEquals("self", routeOf(hub.status(rToken, self.text("id"))));

        Resp down = hub.sendOk(rToken, c, "parent to child");
        assertEquals("intra_group", routeOf(hub.status(rToken, down.text("id"))));
        Resp up = hub.sendOk(cToken, r, "child to parent");
        assertEquals("intra_group", routeOf(hub.status(cToken, up.text("id"))));
        Resp side = hub.sendOk(cToken, c2, "sibling to sibling");
        assertEquals("intra_group", routeOf(hub.status(cToken, side.text("id"))));
        Resp sideBack = hub.sendOk(c2Token, c, "and back");
        assertEquals("intra_group", routeOf(hub.status(c2Token, sideBack.text("id"))));

        List<JsonNode> rInbox = hub.inbox(rToken);
        assertEquals(List.of("self", "intra_group"),
                rInbox.stream().map(e -> e.path("trace").path("route").asText()).toList());

        for (String[] pair : new String[][] {{cToken, d}, {rToken, s}, {cToken, s}, {dToken, r}, {sToken, c}}) {
            Resp denied = assertError(hub.send(pair[0], pair[1], "across groups"), 403, "acl_denied");
            assertTrue(denied.text("reason") != null && !denied.text("reason").isBlank(), "reason: " + denied);
        }
        assertTrue(hub.inbox(dToken).isEmpty(), "denied sends must not reach an inbox");
        assertTrue(hub.inbox(sToken).isEmpty(), "denied sends must not reach an inbox");
    }

    @Test
    void identityMismatchTargetNotFoundAndAdminCannotSend() {
        assertError(hub.post(cToken, "/v1/messages", obj("from", c2, "to", r, "text", "spoof")), 403,
                "identity_mismatch");
        assertError(hub.post(cToken, "/v1/messages", obj("from", r, "to", c2, "text", "spoof")), 403,
                "identity_mismatch");
        assertStatus(202, hub.post(cToken, "/v1/messages", obj("from", c, "to", r, "text", "honest")));

        assertError(hub.send(cToken, uid("nobody"), "void"), 404, "node_not_found");
        assertError(hub.send(cToken, "NOT VALID", "void"), 400, "invalid_node_id");
        assertError(hub.send(hub.admin(), r, "admin speaking"), 403, "forbidden");

        assertEquals(1, hub.inbox(rToken).size(), "only the honest send arrived");
        assertTrue(hub.inbox(c2Token).isEmpty());
        hub.sendOk(cToken, c2, "still fine");
    }

    @Test
    void sameMessageIdTwiceIsOneEnvelope() {
        String mid = "client-" + uid("mid");
        Resp first = hub.post(cToken, "/v1/messages", obj("to", r, "text", "once", "messageId", mid));
        assertStatus(202, first);
        assertFalse(first.json().path("duplicate").asBoolean(false), "first answer is not a duplicate");

        Resp again = hub.post(cToken, "/v1/messages", obj("to", r, "text", "once", "messageId", mid));
        assertStatus(200, again);
        assertTrue(again.json().path("duplicate").asBoolean(false), "duplicate:true expected: " + again);
        assertEquals(first.text("id"), again.text("id"));
        assertEquals(first.num("seq"), again.num("seq"));
        assertEquals(first.text("to"), again.text("to"));
        assertEquals(first.text("createdAt"), again.text("createdAt"));

        Resp changed = hub.post(cToken, "/v1/messages", obj("to", r, "text", "different text", "messageId", mid));
        assertStatus(200, changed);
        assertEquals(first.text("id"), changed.text("id"));

        List<JsonNode> inbox = hub.inbox(rToken);
        assertEquals(1, inbox.size(), "exactly one envelope expected: " + inbox);
        assertEquals(first.text("id"), inbox.get(0).get("id").asText());
        assertEquals("once", inbox.get(0).get("text").asText());

        // another sender's key is its own
        Resp other = hub.post(c2Token, "/v1/messages", obj("to", r, "text", "same key, other sender",
                "messageId", mid));
        assertStatus(202, other);
        assertNotEquals(first.text("id"), other.text("id"));
        assertEquals(2, other.num("seq"));
        assertEquals(2, hub.inbox(rToken).size());
    }

    @Test
    void invalidRequestsAreRefusedAndNothingIsWritten() {
        List<Object> bodies = List.of(
                "{not json",
                "",
                "[]",
                "null",
                "{\"to\": \"" + c2 + "\", \"text\": \"x\"",
                obj("to", 5, "text", "x"),
                obj("to", c2, "text", 7),
                obj("to", c2, "text", "x", "meta", "str"),
                obj("to", c2, "text", "x", "requiresReply", "yes"),
                obj("to", c2, "text", "x", "kind", 5),
                obj("to", c2, "text", "x", "messageId", Map.of("a", 1)),
                obj("to", c2, "text", "x", "messageId", "two words"),
                obj("to", c2, "text", "x", "messageId", ""),
                obj("to", c2, "text", "x", "messageId", "m".repeat(201)),
                obj("to", c2, "text", "x", "corrId", "caf\u00e9"),
                obj("to", c2, "text", "x", "threadId", "tab\there"),
                obj("text", "no target"),
                obj("to", c2),
                obj("to", c2, "kind", "message"),
                obj("to", c2, "kind", "reply", "text", "forged"),
                obj("to", c2, "kind", "event", "text", "forged"),
                obj("to", c2, "kind", "broadcast", "text", "forged"),
                obj("to", c2, "kind", "dead_letter", "text", "forged"),
                obj("to", c2, "kind", "incident", "text", "forged"),
                obj("to", c2, "kind", "task_update", "text", "forged"),
                obj("to", c2, "kind", "Bad Kind", "text", "x"),
                obj("to", c2, "kind", "", "text", "x"));
        for (Object body : bodies) {
            Resp resp = body instanceof String raw ? hub.postRaw(cToken, "/v1/messages", raw)
                    : hub.post(cToken, "/v1/messages", body);
            assertError(resp, 400, "invalid_request");
            // the hub keeps serving after each bad request
            assertStatus(200, hub.get(cToken, "/v1/nodes/" + c));
        }
        assertTrue(hub.inbox(c2Token).isEmpty(), "a refused send wrote something");
        assertEquals(1, hub.sendOk(cToken, c2, "good send").num("seq"));
        hub.assertStillServes();
    }

    @Test
    void oversizedBodyIs413AndNothingIsWritten() {
        hub.sendOk(cToken, c2, "before");
        String big = "x".repeat(300 * 1024);
        assertError(hub.post(cToken, "/v1/messages", obj("to", c2, "text", big)), 413, "payload_too_large");
        assertError(hub.post(cToken, "/v1/messages", obj("to", c2, "text", big, "messageId", "big-1")), 413,
                "payload_too_large");
        assertEquals(1, hub.inbox(c2Token).size(), "an oversized send was written");

        // the same body without a Content-Length (chunked upload)
        Resp chunked = hub.requestChunked("POST", "/v1/messages", cToken,
                HubFixture.JSON.createObjectNode().put("to", c2).put("text", big).toString());
        assertError(chunked, 413, "payload_too_large");
        assertEquals(1, hub.inbox(c2Token).size(), "an oversized chunked send was written");

        Resp after = hub.sendOk(cToken, c2, "after");
        assertEquals(2, after.num("seq"), "seq must continue right after the refused send");
        // a body under the limit is accepted, and the refused messageId was not remembered
        Resp under = hub.post(cToken, "/v1/messages", obj("to", c2, "text", "y".repeat(200 * 1024),
                "messageId", "big-1"));
        assertStatus(202, under);
        assertEquals(3, under.num("seq"));
        hub.assertStillServes();
    }

    // ------------------------------------------------------------------ status

    @Test
    void statusTimelineGoesFromAcceptedToDeliveredWhenAStreamReadsIt() {
        Resp sent = hub.post(rToken, "/v1/messages", obj("to", c, "text", "track me", "threadId", "th-9"));
        assertStatus(202, sent);
        String id = sent.text("id");

        Resp st = hub.status(rToken, id);
        assertStatus(200, st);
        assertEquals(id, st.text("id"));
        assertEquals(1, st.num("seq"));
        assertEquals(r, st.text("from"));
        assertEquals(c, st.text("to"));
        assertEquals("message", st.text("kind"));
        assertEquals("accepted", st.text("state"));
        assertEquals("th-9", st.text("threadId"));
        assertTrue(st.json().has("corrId"), "corrId field expected: " + st);
        Instant.parse(st.text("createdAt"));
        assertEquals(id, st.json().path("envelope").path("id").asText());
        assertEquals("track me", st.json().path("envelope").path("text").asText());
        assertEquals(List.of("accepted"), timelineStates(st));

        try (SseClient stream = SseClient.open(hub, "/v1/inbox/stream", cToken, null)) {
            stream.expectReady(WAIT);
            assertEquals(id, stream.nextEvent(WAIT).json().get("id").asText());
            await().atMost(WAIT).until(() -> "delivered".equals(hub.status(rToken, id).text("state")));
        }
        assertEquals(List.of("accepted", "delivered"), timelineStates(hub.status(rToken, id)));
        assertEquals("delivered", hub.status(cToken, id).text("state"), "receiver may read the status");
        assertEquals("delivered", hub.status(hub.admin(), id).text("state"), "admin may read the status");

        assertError(hub.status(c2Token, id), 404, "message_not_found"); // not theirs: as if it did not exist
        assertError(hub.status(dToken, id), 404, "message_not_found");
        assertError(hub.status(rToken, "0193f0c4-0000-7000-8000-000000000000"), 404, "message_not_found");
        assertError(hub.status(rToken, "not-a-uuid"), 404, "message_not_found");
        hub.assertStillServes();
    }

    // ------------------------------------------------------------------ ack

    @Test
    void ackMovesTheStateAndOnlyTheReceiverMayAck() {
        String m1 = hub.sendOk(rToken, c, "one").text("id");
        String m2 = hub.sendOk(rToken, c, "two").text("id");

        Resp ok = hub.post(cToken, "/v1/messages/" + m1 + "/ack", obj("status", "processed"));
        assertStatus(200, ok);
        assertEquals(m1, ok.text("id"));
        assertEquals("processed", ok.text("state"));
        Resp st1 = hub.status(rToken, m1);
        assertEquals("processed", st1.text("state"));
        List<String> tl = timelineStates(st1);
        assertEquals("processed", tl.get(tl.size() - 1));
        assertEquals("processed", assertStatus(200,
                hub.post(cToken, "/v1/messages/" + m1 + "/ack", obj("status", "processed"))).text("state"),
                "repeating the same ack is fine");

        String before = hub.status(rToken, m2).text("state");
        assertError(hub.post(cToken, "/v1/messages/" + m2 + "/ack", obj("status", "failed", "reason",
                "x".repeat(2_001))), 400, "invalid_request");
        assertEquals(before, hub.status(rToken, m2).text("state"), "a refused ack changes nothing");
        Resp failed = hub.post(cToken, "/v1/messages/" + m2 + "/ack", obj("status", "failed", "reason", "boom"));
        assertStatus(200, failed);
        assertEquals("failed", failed.text("state"));
        assertError(hub.post(cToken, "/v1/messages/" + m2 + "/ack", obj("status", "processed")), 409,
                "invalid_transition");
        assertEquals("failed", hub.status(rToken, m2).text("state"));
        assertError(hub.post(cToken, "/v1/messages/" + m1 + "/ack", obj("status", "failed")), 409,
                "invalid_transition");
        assertEquals("processed", hub.status(rToken, m1).text("state"));

        String m3 = hub.sendOk(rToken, c, "three").text("id");
        assertError(hub.post(rToken, "/v1/messages/" + m3 + "/ack", obj("status", "processed")), 403, "forbidden");
        assertError(hub.post(c2Token, "/v1/messages/" + m3 + "/ack", obj("status", "processed")), 404,
                "message_not_found");
        assertError(hub.post(hub.admin(), "/v1/messages/" + m3 + "/ack", obj("status", "processed")), 403,
                "forbidden");
        assertError(hub.post(cToken, "/v1/messages/" + m3 + "/ack", obj("status", "done")), 400, "invalid_request");
        assertError(hub.post(cToken, "/v1/messages/" + m3 + "/ack", obj("reason", "no status")), 400,
                "invalid_request");
        assertError(hub.postRaw(cToken, "/v1/messages/" + m3 + "/ack", "{oops"), 400, "invalid_request");
        assertEquals("accepted", hub.status(rToken, m3).text("state"), "refused acks must not move the state");
        assertError(hub.post(cToken, "/v1/messages/0193f0c4-0000-7000-8000-000000000000/ack",
                obj("status", "processed")), 404, "message_not_found");
        assertEquals("processed", assertStatus(200,
                hub.post(cToken, "/v1/messages/" + m3 + "/ack", obj("status", "processed"))).text("state"));
    }

    // ------------------------------------------------------------------ reply

    @Test
    void replyGoesBackToTheSenderWithCorrIdAndMarksTheOriginal() {
        String original = hub.sendOk(rToken, c, "please answer").text("id");

        Resp reply = hub.post(cToken, "/v1/messages/" + original + "/reply", obj("text", "answered"));
        assertStatus(202, reply);
        assertEquals(r, reply.text("to"));
        assertEquals("accepted", reply.text("status"));
        assertTrue(reply.text("id").matches(UUID_V7));

        List<JsonNode> rInbox = hub.inbox(rToken);
        assertEquals(1, rInbox.size());
        JsonNode e = rInbox.get(0);
        assertEquals(reply.text("id"), e.get("id").asText());
        assertEquals("reply", e.get("kind").asText());
        assertEquals(original, e.get("corrId").asText());
        assertEquals(c, e.get("from").asText());
        assertEquals(r, e.get("to").asText());
        assertEquals("answered", e.get("text").asText());
        assertEquals("reply", e.path("trace").path("route").asText());

        Resp st = hub.status(rToken, original);
        assertEquals("replied", st.text("state"));
        assertTrue(timelineStates(st).contains("replied"));
        Resp replyStatus = hub.status(cToken, reply.text("id"));
        assertEquals(original, replyStatus.text("corrId"));
        assertEquals("reply", replyStatus.text("kind"));

        assertError(hub.post(rToken, "/v1/messages/" + original + "/reply", obj("text", "not mine")), 403,
                "forbidden");
        assertError(hub.post(c2Token, "/v1/messages/" + original + "/reply", obj("text", "not mine")), 404,
                "message_not_found");
        assertError(hub.post(hub.admin(), "/v1/messages/" + original + "/reply", obj("text", "admin")), 403,
                "forbidden");
        assertError(hub.post(cToken, "/v1/messages/" + original + "/reply", obj("meta", Map.of())), 400,
                "invalid_request");
        assertError(hub.post(cToken, "/v1/messages/0193f0c4-0000-7000-8000-000000000000/reply",
                obj("text", "ghost")), 404, "message_not_found");
        assertEquals(1, hub.inbox(rToken).size(), "refused replies must not be written");
    }

    @Test
    void replyToADeletedSenderIsNodeNotFound() {
        String original = hub.sendOk(c2Token, c, "about to vanish").text("id");
        assertStatus(204, hub.delete(hub.admin(), "/v1/nodes/" + c2));
        assertError(hub.post(cToken, "/v1/messages/" + original + "/reply", obj("text", "too late")), 404,
                "node_not_found");
        assertEquals(1, hub.inbox(cToken).size());
        hub.sendOk(cToken, r, "still serving");
    }

    @Test
    void replyNeedsNoGrantBackwards() {
        assertStatus(201, hub.post(hub.admin(), "/v1/grants", obj("from", c, "to", d)));
        String original = hub.sendOk(cToken, d, "over the grant").text("id");
        assertError(hub.send(dToken, c, "direct back"), 403, "acl_denied");

        Resp reply = hub.post(dToken, "/v1/messages/" + original + "/reply", obj("data", Map.of("ok", true)));
        assertStatus(202, reply);
        List<JsonNode> cInbox = hub.inbox(cToken);
        assertEquals(1, cInbox.size());
        assertEquals("reply", cInbox.get(0).path("trace").path("route").asText());
        assertEquals(original, cInbox.get(0).get("corrId").asText());
        assertTrue(cInbox.get(0).path("data").path("ok").asBoolean());
    }
}
