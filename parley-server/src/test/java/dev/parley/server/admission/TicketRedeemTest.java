package dev.parley.server.admission;

import static dev.parley.server.admission.Admit.B64U;
import static dev.parley.server.admission.Admit.claims;
import static dev.parley.server.admission.Admit.encodeJson;
import static dev.parley.server.admission.Admit.exchange;
import static dev.parley.server.admission.Admit.header;
import static dev.parley.server.admission.Admit.inviteToken;
import static dev.parley.server.admission.Admit.newKeys;
import static dev.parley.server.admission.Admit.nonce;
import static dev.parley.server.admission.Admit.parts;
import static dev.parley.server.admission.Admit.redeem;
import static dev.parley.server.admission.Admit.signed;
import static dev.parley.server.admission.Admit.ticket;
import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.HubFixture.uid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.time.Instant;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /v1/auth/redeem}: a good ticket creates the node under the invite's terms;
 * forged, truncated, re-signed, expired, {@code none}, {@code HS256}, wrong-audience,
 * wrong-issuer and reused tickets are refused with their codes.
 */
class TicketRedeemTest {
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

    /** A fresh, valid, unredeemed ticket for a fresh node id. */
    private static String freshTicket(String node) {
        return ticket(hub, inviteToken(hub, hub.admin(), "nodeId", node), node, null);
    }

    @Test
    void redeemCreatesTheNodeUnderTheInvitesTermsAndItsTokenWorks() {
        String lead = uid("rd-lead");
        String leadToken = hub.createNode(lead, null);
        String node = uid("rd-child");
        String token = inviteToken(hub, leadToken, "nodeId", node, "kind", "managed");
        Resp created = redeem(hub, ticket(hub, token, node, null));
        assertEquals(201, created.status(), created::toString);
        assertEquals(node, created.text("id"));
        assertEquals("managed", created.text("kind"));
        assertEquals(lead, created.text("parent"), "the parent comes from the invite");
        assertNotNull(created.text("createdAt"));
        String nodeToken = created.text("token");
        assertTrue(nodeToken.startsWith("pn_"), "a node token: " + created);
        // the new node acts with its token: it reaches its parent (same group)
        hub.sendOk(nodeToken, lead, "hello from an admitted child");
        assertEquals(1, hub.inbox(leadToken).size());
        Resp shown = hub.get(hub.admin(), "/v1/nodes/" + node);
        assertEquals(1, shown.num("depth"));
    }

    @Test
    void aReusedTicketIsTicketAlreadyUsed() {
        String node = uid("rd-reuse");
        String ticket = freshTicket(node);
        assertEquals(201, redeem(hub, ticket).status());
        assertError(redeem(hub, ticket), 409, "ticket_already_used");
    }

    @Test
    void anInviteIsUsedOnceEvenThroughTwoTickets() {
        String node = uid("rd-twice");
        String token = inviteToken(hub, hub.admin(), "nodeId", node);
        String first = ticket(hub, token, node, null);
        String second = ticket(hub, token, node, null);
        assertEquals(201, redeem(hub, first).status());
        assertError(redeem(hub, second), 409, "ticket_already_used");
        assertError(exchange(hub, token, node, nonce(), null), 409, "token_already_used");
        // an unbound invite too: another node id through the second ticket does not get in
        String open = inviteToken(hub, hub.admin());
        String a = uid("rd-open-a");
        String b = uid("rd-open-b");
        String ticketA = ticket(hub, open, a, null);
        String ticketB = ticket(hub, open, b, null);
        assertEquals(201, redeem(hub, ticketB).status());
        assertError(redeem(hub, ticketA), 409, "ticket_already_used");
        assertEquals(404, hub.get(hub.admin(), "/v1/nodes/" + a).status(), "the second node must not exist");
    }

    @Test
    void aNodeIdTakenMeanwhileIsNodeExistsAndTheInviteStaysUsable() {
        String node = uid("rd-taken");
        String token = inviteToken(hub, hub.admin());
        String ticket = ticket(hub, token, node, null);
        hub.createNode(node, null);
        assertError(redeem(hub, ticket), 409, "node_exists");
        // nothing was consumed: the same invite admits another id
        String other = uid("rd-taken-other");
        assertEquals(201, redeem(hub, ticket(hub, token, other, null)).status());
    }

    @Test
    void forgedTruncatedAndMalformedTicketsAreInvalidTicket() {
        String node = uid("rd-forged");
        String ticket = freshTicket(node);
        String[] p = parts(ticket);
        // a signature of the right size from nowhere
        assertError(redeem(hub, p[0] + "." + p[1] + "." + B64U.encodeToString(new byte[64])), 401, "invalid_ticket");
        // claims changed after signing
        ObjectNode claims = claims(ticket);
        claims.put("sub", uid("rd-someone-else"));
        assertError(redeem(hub, p[0] + "." + encodeJson(claims) + "." + p[2]), 401, "invalid_ticket");
        // truncated: signature cut short, signature dropped, only two parts, one part
        assertError(redeem(hub, ticket.substring(0, ticket.length() - 5)), 401, "invalid_ticket");
        assertError(redeem(hub, p[0] + "." + p[1] + "."), 401, "invalid_ticket");
        assertError(redeem(hub, p[0] + "." + p[1]), 401, "invalid_ticket");
        assertError(redeem(hub, p[0]), 401, "invalid_ticket");
        // four parts, padding, garbage, empty, huge
        assertError(redeem(hub, ticket + ".x"), 401, "invalid_ticket");
        assertError(redeem(hub, p[0] + "=." + p[1] + "." + p[2]), 401, "invalid_ticket");
        assertError(redeem(hub, "garbage"), 401, "invalid_ticket");
        assertError(redeem(hub, ""), 401, "invalid_ticket");
        assertError(redeem(hub, "a".repeat(10_000)), 401, "invalid_ticket");
        // header that is not JSON
        assertError(redeem(hub, B64U.encodeToString("{nope".getBytes(StandardCharsets.UTF_8)) + "." + p[1] + "." + p[2]),
                401, "invalid_ticket");
        // shape errors of the body itself
        assertError(hub.post(null, "/v1/auth/redeem", obj()), 400, "invalid_request");
        assertError(hub.post(null, "/v1/auth/redeem", obj("ticket", 5)), 400, "invalid_request");
        // the genuine ticket still works after all that
        assertEquals(201, redeem(hub, ticket).status());
    }

    @Test
    void aTicketReSignedWithAnotherEd25519KeyIsInvalidTicket() {
        String node = uid("rd-resigned");
        String ticket = freshTicket(node);
        PrivateKey stranger = newKeys().pair().getPrivate();
        assertError(redeem(hub, signed(header(ticket), claims(ticket), stranger)), 401, "invalid_ticket");
        // same with an unknown kid
        ObjectNode header = header(ticket);
        header.put("kid", "unknown-kid");
        assertError(redeem(hub, signed(header, claims(ticket), stranger)), 401, "invalid_ticket");
        header.remove("kid");
        assertError(redeem(hub, signed(header, claims(ticket), stranger)), 401, "invalid_ticket");
    }

    @Test
    void algNoneAndHs256AreInvalidTicket() throws Exception {
        String node = uid("rd-alg");
        String ticket = freshTicket(node);
        String[] p = parts(ticket);
        // alg none, with and without a signature part
        ObjectNode none = header(ticket);
        none.put("alg", "none");
        assertError(redeem(hub, encodeJson(none) + "." + p[1] + "."), 401, "invalid_ticket");
        assertError(redeem(hub, encodeJson(none) + "." + p[1] + "." + p[2]), 401, "invalid_ticket");
        ObjectNode noneUpper = header(ticket);
        noneUpper.put("alg", "None");
        assertError(redeem(hub, encodeJson(noneUpper) + "." + p[1] + "."), 401, "invalid_ticket");
        // HS256 keyed with the hub's public key (the classic algorithm confusion)
        Resp keys = hub.get(null, "/v1/auth/keys");
        assertEquals(200, keys.status(), keys::toString);
        String x = keys.get("keys").get(0).path("x").asText();
        for (byte[] secret : new byte[][] {x.getBytes(StandardCharsets.US_ASCII), Admit.B64U_DECODER.decode(x)}) {
            ObjectNode hs = header(ticket);
            hs.put("alg", "HS256");
            String input = encodeJson(hs) + "." + p[1];
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            String forged = input + "." + B64U.encodeToString(mac.doFinal(input.getBytes(StandardCharsets.US_ASCII)));
            assertError(redeem(hub, forged), 401, "invalid_ticket");
        }
        // other algs and an alg of the wrong type, even when validly signed by the hub's own key
        PrivateKey hubKey = Admit.hubSigningKey(dataDir);
        for (Object alg : new Object[] {"ES256", "RS256", "eddsa", "Ed25519", 1}) {
            ObjectNode h = header(ticket);
            if (alg instanceof String s) {
                h.put("alg", s);
            } else {
                h.put("alg", (Integer) alg);
            }
            assertError(redeem(hub, signed(h, claims(ticket), hubKey)), 401, "invalid_ticket");
        }
        ObjectNode crit = header(ticket);
        crit.putArray("crit").add("exp");
        assertError(redeem(hub, signed(crit, claims(ticket), hubKey)), 401, "invalid_ticket");
        assertEquals(201, redeem(hub, ticket).status(), "the genuine ticket still works");
    }

    @Test
    void wrongAudienceIssuerSubjectOrTimesAreRefusedEvenWithTheHubsOwnSignature() {
        PrivateKey hubKey = Admit.hubSigningKey(dataDir);
        String node = uid("rd-claims");
        String ticket = freshTicket(node);
        ObjectNode header = header(ticket);

        ObjectNode audience = claims(ticket);
        audience.put("aud", "someone-else");
        assertError(redeem(hub, signed(header, audience, hubKey)), 401, "invalid_ticket");
        ObjectNode audienceArray = claims(ticket);
        audienceArray.putArray("aud").add("other");
        assertError(redeem(hub, signed(header, audienceArray, hubKey)), 401, "invalid_ticket");
        ObjectNode noAudience = claims(ticket);
        noAudience.remove("aud");
        assertError(redeem(hub, signed(header, noAudience, hubKey)), 401, "invalid_ticket");

        ObjectNode issuer = claims(ticket);
        issuer.put("iss", "hub-elsewhere");
        assertError(redeem(hub, signed(header, issuer, hubKey)), 401, "invalid_ticket");

        ObjectNode subject = claims(ticket);
        subject.put("sub", "Not A Node Id");
        assertError(redeem(hub, signed(header, subject, hubKey)), 401, "invalid_ticket");
        ObjectNode noSubject = claims(ticket);
        noSubject.remove("sub");
        assertError(redeem(hub, signed(header, noSubject, hubKey)), 401, "invalid_ticket");

        long now = Instant.now().getEpochSecond();
        ObjectNode future = claims(ticket);
        future.put("iat", now + 60);
        future.put("exp", now + 120);
        assertError(redeem(hub, signed(header, future, hubKey)), 401, "invalid_ticket");
        ObjectNode textTimes = claims(ticket);
        textTimes.put("exp", String.valueOf(now + 60));
        assertError(redeem(hub, signed(header, textTimes, hubKey)), 401, "invalid_ticket");

        // within the 5 s skew: a ticket issued 3 s "in the future" is fine
        ObjectNode skewed = claims(ticket);
        skewed.put("iat", now + 3);
        skewed.put("exp", now + 60);
        assertEquals(201, redeem(hub, signed(header, skewed, hubKey)).status());
    }

    @Test
    void anExpiredTicketIsExpiredTicket() {
        PrivateKey hubKey = Admit.hubSigningKey(dataDir);
        String node = uid("rd-expired");
        String ticket = freshTicket(node);
        long now = Instant.now().getEpochSecond();
        ObjectNode expired = claims(ticket);
        expired.put("iat", now - 120);
        expired.put("exp", now - 60);
        assertError(redeem(hub, signed(header(ticket), expired, hubKey)), 401, "expired_ticket");
        // past exp but within the 5 s skew: still accepted. The hub checks by its clock somewhere
        // between the redeem's start and its answer; "within" ends 5 s after exp, so only an answer
        // that came later still may say expired.
        ObjectNode justNow = claims(ticket);
        justNow.put("iat", now - 62);
        justNow.put("exp", now - 2);
        Resp late = redeem(hub, signed(header(ticket), justNow, hubKey));
        Instant answered = Instant.now();
        assertTrue(late.status() == 201 || "expired_ticket".equals(late.error())
                && !answered.isBefore(Instant.ofEpochSecond(now - 2 + 5)), () -> "answered at " + answered + ": " + late);
    }

    @Test
    void invitesAreForTheAdminOrANodesOwnChildren() {
        String lead = uid("iv-lead");
        String leadToken = hub.createNode(lead, null);
        String other = uid("iv-other");
        hub.createNode(other, null);
        // a node may invite only children of itself
        assertError(Admit.invite(hub, leadToken, "parent", other), 403, "forbidden");
        Resp own = Admit.invite(hub, leadToken, "nodeId", uid("iv-kid"));
        assertEquals(201, own.status(), own::toString);
        assertEquals(lead, own.text("parent"), "parent defaults to the inviting node");
        assertEquals("external", own.text("kind"));
        assertNotNull(own.text("id"));
        assertNotNull(own.text("expiresAt"));
        // a child may not invite (depth policy: a child may not spawn)
        String kid = uid("iv-kid2");
        String kidToken = hub.createNode(kid, lead);
        assertError(Admit.invite(hub, kidToken), 403, "depth_limit");
        // no bearer, bad bearer
        assertError(Admit.invite(hub, null), 401, "unauthorized");
        assertError(Admit.invite(hub, "pn_nope"), 401, "unauthorized");
        // ttl bounds, bad kind, bad ids, unknown parent, taken id
        assertError(Admit.invite(hub, hub.admin(), "ttlSeconds", 9), 400, "invalid_request");
        assertError(Admit.invite(hub, hub.admin(), "ttlSeconds", 7 * 24 * 3600 + 1), 400, "invalid_request");
        assertError(Admit.invite(hub, hub.admin(), "ttlSeconds", "900"), 400, "invalid_request");
        assertEquals(201, Admit.invite(hub, hub.admin(), "ttlSeconds", 10).status());
        assertEquals(201, Admit.invite(hub, hub.admin(), "ttlSeconds", 7 * 24 * 3600).status());
        assertError(Admit.invite(hub, hub.admin(), "kind", "robot"), 400, "invalid_request");
        assertError(Admit.invite(hub, hub.admin(), "nodeId", "NO"), 400, "invalid_node_id");
        assertError(Admit.invite(hub, hub.admin(), "parent", uid("iv-ghost")), 404, "node_not_found");
        assertError(Admit.invite(hub, hub.admin(), "nodeId", lead), 409, "node_exists");
        assertError(Admit.invite(hub, hub.admin(), "nodeId", "parley"), 409, "node_exists");
        // default ttl: 15 minutes
        Resp def = Admit.invite(hub, hub.admin());
        Instant expires = Instant.parse(def.text("expiresAt"));
        assertTrue(Math.abs(expires.getEpochSecond() - Instant.now().plusSeconds(900).getEpochSecond()) < 30,
                "default TTL is 15 min: " + def);
        // the admin may invite a root node or a child of any node
        Resp root = Admit.invite(hub, hub.admin(), "nodeId", uid("iv-root"));
        assertEquals(201, root.status());
        assertTrue(root.get("parent").isNull(), "admin invite without parent: a root node " + root);
        Resp child = Admit.invite(hub, hub.admin(), "parent", other, "kind", "human");
        assertEquals(other, child.text("parent"));
        assertEquals("human", child.text("kind"));
        // invite tokens are stored only as hashes: the clear token appears in no file of the data dir
        String token = own.text("inviteToken");
        assertTrue(token.startsWith("pi_"), "invite tokens start with pi_: " + token);
        assertTrue(TokenFiles.nowhereIn(dataDir, token), "the clear invite token must not be stored");
    }
}
