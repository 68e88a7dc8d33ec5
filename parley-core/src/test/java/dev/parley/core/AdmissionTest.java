package dev.parley.core;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static dev.parley.core.MemoryHub.as;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Invites, the exchange for a ticket (its checks in their documented order) and the redeem. */
class AdmissionTest {
    private static final Duration TICKET_TTL = Duration.ofSeconds(60);

    private final MemoryHub hub = new MemoryHub();
    private final MemoryAdmissions store = new MemoryAdmissions();
    private final Admission admission = admission(false);
    private final KeyPair key = keyPair();
    private final KeyPair otherKey = keyPair();

    @BeforeEach
    void lineage() {
        hub.node("lead", null);
    }

    @Test
    void theFirstFailingExchangeCheckNamesTheRefusal() {
        IssuedInvite invite = invite(MemoryHub.ADMIN, "n1");
        String token = invite.token();
        String actor = "invite:" + invite.invite().id();
        exchange(token, "n1", "nonce-1", key);

        assertRefused(ErrorCode.INVALID_TOKEN, () -> exchange("pi_unknown", "n1", "nonce-2", key));
        // Each case breaks every later check too, so only the order can pick the code.
        assertRefused(ErrorCode.NODE_MISMATCH, () -> exchange(token, "n2", "nonce-1", otherKey, key));
        assertRefused(ErrorCode.REPLAY_DETECTED, () -> exchange(token, "n1", "nonce-1", otherKey, key));
        assertRefused(ErrorCode.NODE_PROOF_INVALID, () -> exchange(token, "n1", "nonce-2", otherKey, key));

        List<AuditEntry> refusals = store.audit().stream().filter(e -> e.action().equals("auth.exchange")
                && e.decision() == AuditEntry.Decision.DENY).toList();
        assertEquals(List.of("anonymous", actor, actor, actor), refusals.stream().map(AuditEntry::actor).toList());
        assertEquals(List.of("invalid_token", "node_mismatch", "replay_detected", "node_proof_invalid"),
                refusals.stream().map(e -> e.reason().substring(0, e.reason().indexOf(':'))).toList());
        assertEquals("n2", refusals.get(1).target());
    }

    @Test
    void expiryComesBeforeTheNodeAndTheNonceAndUseBeforeExpiry() {
        IssuedInvite unused = invite(MemoryHub.ADMIN, "n1");
        IssuedInvite used = invite(MemoryHub.ADMIN, "n2");
        exchange(unused.token(), "n1", "nonce-1", key);
        admission.redeem(exchange(used.token(), "n2", "nonce-1", key).compact());
        hub.advance(Duration.ofMinutes(16));

        assertRefused(ErrorCode.EXPIRED_TOKEN, () -> exchange(unused.token(), "n9", "nonce-1", otherKey, key));
        assertRefused(ErrorCode.TOKEN_ALREADY_USED, () -> exchange(used.token(), "n9", "nonce-1", otherKey, key));
    }

    @Test
    void aRedeemCreatesTheInvitedNodeOnceWithItsKeyAndAToken() {
        IssuedInvite invite = admission.invite(as("lead"), new NewInvite(Optional.of(NodeId.of("w1")), NodeKind.MANAGED,
                Optional.empty(), Map.of("role", "worker"), NewInvite.DEFAULT_TTL));
        IssuedTicket first = exchange(invite.token(), "w1", "nonce-1", key);
        IssuedTicket second = exchange(invite.token(), "w1", "nonce-2", key);

        CreatedNode created = admission.redeem(first.compact());

        Node node = created.node();
        assertEquals(new Node(NodeId.of("w1"), NodeKind.MANAGED, Optional.of(NodeId.of("lead")), Map.of("role", "worker"),
                1, MemoryHub.START), node);
        assertEquals(Optional.of(node), hub.graph.node(NodeId.of("w1")));
        assertEquals(Optional.of(MemoryHub.as("w1")), hub.tokens.authenticate(created.token()));
        assertEquals(Optional.of(NodeProof.encode(key.getPublic())), store.publicKey(NodeId.of("w1")));
        AuditEntry redeemed = store.audit().stream().filter(e -> e.action().equals("auth.redeem")).findFirst()
                .orElseThrow();
        assertEquals(AuditEntry.Decision.ALLOW, redeemed.decision());
        assertEquals("invite:" + invite.invite().id(), redeemed.actor());

        assertRefused(ErrorCode.TICKET_ALREADY_USED, () -> admission.redeem(first.compact()));
        assertRefused(ErrorCode.TICKET_ALREADY_USED, () -> admission.redeem(second.compact()));
        assertRefused(ErrorCode.INVALID_TICKET, () -> admission.redeem("ticket.forged"));
        assertEquals("anonymous", store.audit().getLast().actor());
    }

    @Test
    void anExpiredTicketIsRefused() {
        IssuedInvite invite = invite(MemoryHub.ADMIN, "n1");
        IssuedTicket ticket = exchange(invite.token(), "n1", "nonce-1", key);
        hub.advance(TICKET_TTL.plusSeconds(1));
        assertRefused(ErrorCode.EXPIRED_TICKET, () -> admission.redeem(ticket.compact()));
        assertTrue(hub.graph.node(NodeId.of("n1")).isEmpty());
    }

    @Test
    void aNodeInvitesOnlyChildrenOfItselfAndTheRefusalIsAudited() {
        hub.node("other", null);
        assertRefused(ErrorCode.FORBIDDEN, () -> admission.invite(as("lead"), new NewInvite(Optional.empty(),
                NodeKind.EXTERNAL, Optional.of(NodeId.of("other")), Map.of(), NewInvite.DEFAULT_TTL)));
        AuditEntry refusal = store.audit().getLast();
        assertEquals("invite.create", refusal.action());
        assertEquals(AuditEntry.Decision.DENY, refusal.decision());
        assertEquals("*", refusal.target());
    }

    @Test
    void aHubThatRequiresANodeProofRefusesAnExchangeWithout() {
        Admission strict = admission(true);
        IssuedInvite invite = strict.invite(MemoryHub.ADMIN, new NewInvite(Optional.empty(), NodeKind.EXTERNAL,
                Optional.empty(), Map.of(), NewInvite.DEFAULT_TTL));
        assertRefused(ErrorCode.NODE_PROOF_INVALID, () -> strict.exchange(new ExchangeRequest(invite.token(),
                NodeId.of("n1"), "nonce-1", Optional.empty(), Optional.empty())));
        assertEquals("n1", strict.exchange(request(invite.token(), "n1", "nonce-2", key, key)).ticket().subject()
                .value());
    }

    @Test
    void aNodeAdmittedWithAKeySignsItsOwnTokenRotation() {
        IssuedInvite invite = invite(MemoryHub.ADMIN, "n1");
        admission.redeem(exchange(invite.token(), "n1", "nonce-1", key).compact());
        NodeId n1 = NodeId.of("n1");

        assertRefused(ErrorCode.NODE_PROOF_INVALID, () -> admission.checkRotation(as("n1"), n1, Optional.empty(),
                Optional.empty()));
        String proof = sign(key, NodeProof.rotateMessage(n1, "r-1"));
        admission.checkRotation(as("n1"), n1, Optional.of("r-1"), Optional.of(proof));
        assertRefused(ErrorCode.REPLAY_DETECTED, () -> admission.checkRotation(as("n1"), n1, Optional.of("r-1"),
                Optional.of(proof)));
        admission.checkRotation(MemoryHub.ADMIN, n1, Optional.empty(), Optional.empty()); // the admin needs none
    }

    @Test
    void onlyTheAdminRotatesTheSigningKeyAndTheRotationIsAudited() {
        String version = hub.nextVersion();
        assertEquals("k-2", admission.rotateKeys(MemoryHub.ADMIN));
        assertEquals(List.of(new AuditEntry(MemoryHub.START, "admin", "auth.keys.rotate", "k-2",
                AuditEntry.Decision.ALLOW, "signing key k-1 retired (it verifies until its tickets expire); k-2 signs now",
                Optional.empty(), version)), store.audit().stream().filter(e -> e.action().equals("auth.keys.rotate"))
                .toList());

        int audited = store.audit().size();
        assertRefused(ErrorCode.FORBIDDEN, () -> admission.rotateKeys(as("lead")));
        assertEquals(audited, store.audit().size());
        assertEquals("k-3", admission.rotateKeys(MemoryHub.ADMIN), "the refusal rotated nothing");
    }

    private Admission admission(boolean requireNodeProof) {
        return new Admission(hub.registry, store, hub.rules, new MemoryTickets(hub.clock), hub.clock, hub.ids, requireNodeProof,
                TICKET_TTL);
    }

    private IssuedInvite invite(Principal by, String node) {
        return admission.invite(by, new NewInvite(Optional.of(NodeId.of(node)), NodeKind.EXTERNAL, Optional.empty(),
                Map.of(), NewInvite.DEFAULT_TTL));
    }

    private IssuedTicket exchange(String token, String node, String nonce, KeyPair signer) {
        return admission.exchange(request(token, node, nonce, signer, signer));
    }

    /** An exchange signed by {@code signer} presenting the public key of {@code presented}. */
    private IssuedTicket exchange(String token, String node, String nonce, KeyPair signer, KeyPair presented) {
        return admission.exchange(request(token, node, nonce, signer, presented));
    }

    private static ExchangeRequest request(String token, String node, String nonce, KeyPair signer, KeyPair presented) {
        String proof = sign(signer, NodeProof.exchangeMessage(token, NodeId.of(node), nonce));
        return new ExchangeRequest(token, NodeId.of(node), nonce, Optional.of(NodeProof.encode(presented.getPublic())),
                Optional.of(proof));
    }

    private static void assertRefused(ErrorCode expected, Runnable call) {
        assertEquals(expected, assertThrows(ParleyException.class, call::run).code());
    }

    private static KeyPair keyPair() {
        try {
            return KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String sign(KeyPair pair, String message) {
        try {
            Signature signer = Signature.getInstance("Ed25519");
            signer.initSign(pair.getPrivate());
            signer.update(message.getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(signer.sign());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
