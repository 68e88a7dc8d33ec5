package dev.parley.server.admission;

import static dev.parley.server.admission.Admit.exchange;
import static dev.parley.server.admission.Admit.inviteToken;
import static dev.parley.server.admission.Admit.newKeys;
import static dev.parley.server.admission.Admit.nonce;
import static dev.parley.server.admission.Admit.redeem;
import static dev.parley.server.admission.Admit.ticket;
import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.HubFixture.uid;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.server.admission.Admit.NodeKeys;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /v1/auth/exchange}: every code of the check table, in the documented order —
 * a request that fails two checks gets the first one's code — and the ticket it mints.
 */
class ExchangeChecksTest {
    @TempDir
    static Path dataDir;
    static HubFixture hub;

    @BeforeAll
    static void startHub() {
        hub = HubFixture.start(dataDir, c -> c.withExchangesPerMinute(100_000));
    }

    @AfterAll
    static void stopHub() {
        if (hub != null) {
            hub.close();
        }
    }

    @Test
    void aGoodExchangeMintsAnEdDsaTicketForTheNode() {
        String node = uid("ex-ok");
        String token = inviteToken(hub, hub.admin(), "nodeId", node);
        Instant before = Instant.now();
        Resp r = exchange(hub, token, node, nonce(), null);
        assertEquals(200, r.status(), () -> "exchange refused: " + r);
        assertNotNull(r.text("sessionId"), "no sessionId: " + r);
        Instant expiresAt = Instant.parse(r.text("expiresAt"));
        assertTrue(expiresAt.isAfter(before.plusSeconds(50)) && expiresAt.isBefore(before.plusSeconds(62)),
                "tickets live about 60 s: " + r);

        String ticket = r.text("ticket");
        assertEquals(3, Admit.parts(ticket).length, "a compact JWT has three parts: " + ticket);
        ObjectNode header = Admit.header(ticket);
        assertEquals("EdDSA", header.path("alg").asText());
        assertEquals("JWT", header.path("typ").asText());
        assertFalse(header.path("kid").asText().isEmpty(), "kid expected: " + header);
        ObjectNode claims = Admit.claims(ticket);
        assertEquals(node, claims.path("sub").asText());
        assertEquals("parley", claims.path("aud").asText());
        assertTrue(claims.path("iss").asText().startsWith("hub-"), "iss is the hub id: " + claims);
        assertFalse(claims.path("jti").asText().isEmpty(), "jti expected: " + claims);
        assertFalse(claims.path("inviteId").asText().isEmpty(), "inviteId expected: " + claims);
        assertEquals(60, claims.path("exp").asLong() - claims.path("iat").asLong(), "exp is iat + 60 s: " + claims);
        assertEquals(expiresAt.getEpochSecond(), claims.path("exp").asLong());
    }

    @Test
    void anUnknownInviteTokenIsInvalidToken() {
        assertError(exchange(hub, "pi_" + "A".repeat(43), uid("ex-unknown"), nonce(), null), 401, "invalid_token");
        assertError(exchange(hub, "not-even-a-token", uid("ex-unknown"), nonce(), null), 401, "invalid_token");
        assertError(exchange(hub, "x".repeat(5000), uid("ex-unknown"), nonce(), null), 401, "invalid_token");
        // invalid_token comes before the proof check: a bad proof does not change the answer
        NodeKeys keys = newKeys();
        Resp r = hub.post(null, "/v1/auth/exchange", obj("inviteToken", "pi_nope", "nodeId", uid("ex-unknown"),
                "nonce", nonce(), "publicKey", keys.publicKey(), "proof", "AAAA"));
        assertError(r, 401, "invalid_token");
    }

    @Test
    void aRedeemedInviteIsTokenAlreadyUsedBeforeAnyLaterCheck() {
        String node = uid("ex-used");
        String token = inviteToken(hub, hub.admin(), "nodeId", node);
        String nonce = nonce();
        Resp first = exchange(hub, token, node, nonce, null);
        assertEquals(200, first.status(), first::toString);
        assertEquals(201, redeem(hub, first.text("ticket")).status());

        assertError(exchange(hub, token, node, nonce(), null), 409, "token_already_used");
        // used AND wrong node id AND replayed nonce AND a broken proof: still the first check's code
        NodeKeys keys = newKeys();
        Resp r = hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", uid("other"),
                "nonce", nonce, "publicKey", keys.publicKey(), "proof", keys.sign("something else")));
        assertError(r, 409, "token_already_used");
    }

    @Test
    void anExpiredInviteIsExpiredTokenEvenWhenLaterChecksFailToo() {
        String node = uid("ex-exp");
        String token = inviteToken(hub, hub.admin(), "nodeId", node, "ttlSeconds", 10);
        String usedNonce = nonce();
        assertEquals(200, exchange(hub, token, node, usedNonce, null).status(), "fresh invite must exchange");

        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).until(() ->
                exchange(hub, token, node, nonce(), null).status() == 401);
        assertError(exchange(hub, token, node, nonce(), null), 401, "expired_token");
        // expired AND wrong node id → expired_token (the expiry check comes first)
        assertError(exchange(hub, token, uid("someone-else"), nonce(), null), 401, "expired_token");
        // expired AND replayed nonce → expired_token
        assertError(exchange(hub, token, node, usedNonce, null), 401, "expired_token");
        // expired AND a bad proof → expired_token
        NodeKeys keys = newKeys();
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", node, "nonce", nonce(),
                "publicKey", keys.publicKey(), "proof", keys.sign("wrong"))), 401, "expired_token");
    }

    @Test
    void aBoundInviteRefusesAnotherNodeIdWithNodeMismatch() {
        String node = uid("ex-bound");
        String token = inviteToken(hub, hub.admin(), "nodeId", node);
        String nonce = nonce();
        assertEquals(200, exchange(hub, token, node, nonce, null).status());
        assertError(exchange(hub, token, uid("intruder"), nonce(), null), 403, "node_mismatch");
        // mismatch AND replayed nonce → node_mismatch
        assertError(exchange(hub, token, uid("intruder"), nonce, null), 403, "node_mismatch");
        // mismatch AND a bad proof → node_mismatch
        NodeKeys keys = newKeys();
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", uid("intruder"),
                "nonce", nonce(), "publicKey", keys.publicKey(), "proof", keys.sign("x"))), 403, "node_mismatch");
    }

    @Test
    void anUnboundInviteTakesTheNodeIdTheExchangeNames() {
        String token = inviteToken(hub, hub.admin());
        String node = uid("ex-free");
        Resp r = exchange(hub, token, node, nonce(), null);
        assertEquals(200, r.status(), r::toString);
        Resp created = redeem(hub, r.text("ticket"));
        assertEquals(201, created.status(), created::toString);
        assertEquals(node, created.text("id"));
    }

    @Test
    void aNonceUsedTwiceWithOneInviteIsReplayDetected() {
        String node = uid("ex-replay");
        String token = inviteToken(hub, hub.admin(), "nodeId", node);
        String nonce = nonce();
        assertEquals(200, exchange(hub, token, node, nonce, null).status());
        assertError(exchange(hub, token, node, nonce, null), 409, "replay_detected");
        // replay AND a bad proof → replay_detected
        NodeKeys keys = newKeys();
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", node, "nonce", nonce,
                "publicKey", keys.publicKey(), "proof", keys.sign("x"))), 409, "replay_detected");
        // the same nonce with another invite is fine: the guard is per invite
        String other = uid("ex-replay2");
        assertEquals(200, exchange(hub, inviteToken(hub, hub.admin(), "nodeId", other), other, nonce, null).status());
        // a fresh nonce with the first invite still works
        assertEquals(200, exchange(hub, token, node, nonce(), null).status());
    }

    @Test
    void aPresentProofIsAlwaysVerified() {
        String node = uid("ex-proof");
        String token = inviteToken(hub, hub.admin(), "nodeId", node);
        NodeKeys keys = newKeys();
        NodeKeys other = newKeys();
        String nonce = nonce();
        // signed by another key
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", node, "nonce", nonce,
                "publicKey", keys.publicKey(), "proof", other.exchangeProof(token, node, nonce))), 401, "node_proof_invalid");
        // signed over another nonce
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", node, "nonce", nonce,
                "publicKey", keys.publicKey(), "proof", keys.exchangeProof(token, node, "other"))), 401, "node_proof_invalid");
        // garbage proof and key
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", node, "nonce", nonce,
                "publicKey", keys.publicKey(), "proof", "!!not base64!!")), 401, "node_proof_invalid");
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", node, "nonce", nonce,
                "publicKey", "AAAA", "proof", keys.exchangeProof(token, node, nonce))), 401, "node_proof_invalid");
        // a key without a proof, a proof without a key
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", node, "nonce", nonce,
                "publicKey", keys.publicKey())), 401, "node_proof_invalid");
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", node, "nonce", nonce,
                "proof", keys.exchangeProof(token, node, nonce))), 401, "node_proof_invalid");
        // refused attempts do not burn the nonce: the right proof with it succeeds
        Resp ok = exchange(hub, token, node, nonce, keys);
        assertEquals(200, ok.status(), ok::toString);
        assertEquals(keys.publicKey(), Admit.claims(ok.text("ticket")).path("pk").asText(),
                "the ticket carries the proven key");
    }

    @Test
    void missingOrIllTypedFieldsAreInvalidRequestAndBadIdsInvalidNodeId() {
        String node = uid("ex-shape");
        String token = inviteToken(hub, hub.admin(), "nodeId", node);
        assertError(hub.post(null, "/v1/auth/exchange", obj("nodeId", node, "nonce", nonce())), 400, "invalid_request");
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nonce", nonce())), 400,
                "invalid_request");
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", node)), 400,
                "invalid_request");
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", 42, "nodeId", node, "nonce", nonce())), 400,
                "invalid_request");
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", List.of(node),
                "nonce", nonce())), 400, "invalid_request");
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", node, "nonce", nonce(),
                "publicKey", 7)), 400, "invalid_request");
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", node,
                "nonce", "has spaces")), 400, "invalid_request");
        assertError(hub.postRaw(null, "/v1/auth/exchange", "{not json"), 400, "invalid_request");
        assertError(hub.postRaw(null, "/v1/auth/exchange", "[1,2]"), 400, "invalid_request");
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", "Bad Id!",
                "nonce", nonce())), 400, "invalid_node_id");
        // none of these touched the invite
        assertEquals(200, exchange(hub, token, node, nonce(), null).status());
    }

    @Test
    void everyDecisionIsAudited() {
        String node = uid("ex-audit");
        String token = inviteToken(hub, hub.admin(), "nodeId", node);
        assertError(exchange(hub, token, uid("ex-wrong"), nonce(), null), 403, "node_mismatch");
        String ticket = ticket(hub, token, node, null);
        assertEquals(201, redeem(hub, ticket).status());
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            Resp audit = hub.get(hub.admin(), "/v1/audit?limit=1000");
            assertEquals(200, audit.status(), audit::toString);
            List<JsonNode> items = audit.items();
            assertTrue(has(items, "invite.create", "allow", node), "invite.create not audited: " + audit);
            assertTrue(items.stream().anyMatch(i -> i.path("action").asText().equals("auth.exchange")
                    && i.path("decision").asText().equals("deny")
                    && i.path("reason").asText().startsWith("node_mismatch")), "denied exchange not audited");
            assertTrue(has(items, "auth.exchange", "allow", node), "exchange not audited: " + audit);
            assertTrue(has(items, "auth.redeem", "allow", node), "redeem not audited: " + audit);
            assertTrue(has(items, "node.create", "allow", node), "node creation not audited: " + audit);
        });
    }

    private static boolean has(List<JsonNode> items, String action, String decision, String target) {
        return items.stream().anyMatch(i -> i.path("action").asText().equals(action)
                && i.path("decision").asText().equals(decision) && i.path("target").asText().equals(target));
    }
}
