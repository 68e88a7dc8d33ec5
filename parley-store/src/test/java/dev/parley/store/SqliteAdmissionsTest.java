package dev.parley.store;

import dev.parley.core.AccessPolicy;
import dev.parley.core.AuditEntry;
import dev.parley.core.ErrorCode;
import dev.parley.core.Invite;
import dev.parley.core.Node;
import dev.parley.core.NodeId;
import dev.parley.core.NodeKind;
import dev.parley.core.ParleyException;
import dev.parley.core.Rate;
import dev.parley.core.Redemption;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Invites, nonces, redeems and rate overrides: a redeem is one transaction that writes all or nothing. */
class SqliteAdmissionsTest {
    private static final Instant NOW = Instant.parse("2026-11-22T10:00:00.000Z");

    @TempDir
    Path dir;
    private SqliteStore store;
    private SqliteAdmissions admissions;

    @BeforeEach
    void open() {
        store = SqliteStore.open(dir, e -> { }, (count, nanos) -> { });
        admissions = store.admissions();
    }

    @AfterEach
    void close() {
        store.close();
    }

    private static AuditEntry audit(String action) {
        return new AuditEntry(NOW, "admin", action, "t", AuditEntry.Decision.ALLOW, "test", Optional.empty(),
                AccessPolicy.VERSION);
    }

    private Invite invite(String id, Optional<NodeId> bound) {
        Invite invite = new Invite(id, bound, NodeKind.EXTERNAL, Optional.empty(), Map.of("role", "x"), Optional.empty(),
                NOW, NOW.plusSeconds(900), Optional.empty());
        admissions.createInvite(invite, "hash-" + id, audit("invite.create"));
        return invite;
    }

    private static Node node(String id) {
        return new Node(NodeId.of(id), NodeKind.EXTERNAL, Optional.empty(), Map.of("role", "x"), 0, NOW);
    }

    @Test
    void invitesAreFoundByTokenHashAndById() {
        Invite invite = invite("i1", Optional.of(NodeId.of("n1")));
        assertEquals(Optional.of(invite), admissions.inviteByTokenHash("hash-i1"));
        assertEquals(Optional.of(invite), admissions.invite("i1"));
        assertTrue(admissions.inviteByTokenHash("hash-other").isEmpty());
    }

    @Test
    void aNonceIsUsedOncePerScope() {
        assertFalse(admissions.nonceUsed("exchange:i1", "n"));
        admissions.useNonce("exchange:i1", "n", Optional.of(NOW.plusSeconds(60)), audit("auth.exchange"));
        assertTrue(admissions.nonceUsed("exchange:i1", "n"));
        assertFalse(admissions.nonceUsed("exchange:i2", "n"));
        ParleyException replay = assertThrows(ParleyException.class,
                () -> admissions.useNonce("exchange:i1", "n", Optional.empty(), audit("auth.exchange")));
        assertEquals(ErrorCode.REPLAY_DETECTED, replay.code());
        admissions.useNonce("exchange:i2", "n", Optional.empty(), audit("auth.exchange"));
    }

    @Test
    void aRedeemConsumesInviteAndTicketAndCreatesTheNodeWithItsKey() {
        invite("i1", Optional.empty());
        admissions.redeem(new Redemption("i1", "jti-1", NOW.plusSeconds(60), Optional.of("pk"), NOW), node("n1"), "th1",
                List.of(audit("node.create"), audit("auth.redeem")));
        assertTrue(admissions.invite("i1").orElseThrow().redeemed());
        assertTrue(admissions.ticketUsed("jti-1"));
        assertEquals(Optional.of("pk"), admissions.publicKey(NodeId.of("n1")));
        assertEquals(1, store.loadGraph().nodes().size());
        assertEquals("th1", store.loadGraph().tokenHashes().get(NodeId.of("n1")));
    }

    @Test
    void aSecondRedeemOfOneInviteWritesNothing() {
        invite("i1", Optional.empty());
        admissions.redeem(new Redemption("i1", "jti-1", NOW.plusSeconds(60), Optional.empty(), NOW), node("n1"), "th1",
                List.of());
        ParleyException sameInvite = assertThrows(ParleyException.class, () -> admissions.redeem(
                new Redemption("i1", "jti-2", NOW.plusSeconds(60), Optional.of("pk"), NOW), node("n2"), "th2", List.of()));
        assertEquals(ErrorCode.TICKET_ALREADY_USED, sameInvite.code());
        assertFalse(admissions.ticketUsed("jti-2"), "the refused redeem must not consume its jti");
        ParleyException sameTicket = assertThrows(ParleyException.class, () -> admissions.redeem(
                new Redemption("i1", "jti-1", NOW.plusSeconds(60), Optional.empty(), NOW), node("n3"), "th3", List.of()));
        assertEquals(ErrorCode.TICKET_ALREADY_USED, sameTicket.code());
        assertEquals(1, store.loadGraph().nodes().size(), "only the first redeem created a node");
        assertTrue(admissions.publicKey(NodeId.of("n2")).isEmpty());
    }

    @Test
    void aRedeemForATakenIdRollsBackTheInviteAndTheTicket() {
        invite("i1", Optional.empty());
        invite("i2", Optional.empty());
        admissions.redeem(new Redemption("i1", "jti-1", NOW.plusSeconds(60), Optional.empty(), NOW), node("n1"), "th1",
                List.of());
        ParleyException taken = assertThrows(ParleyException.class, () -> admissions.redeem(
                new Redemption("i2", "jti-2", NOW.plusSeconds(60), Optional.empty(), NOW), node("n1"), "th2", List.of()));
        assertEquals(ErrorCode.NODE_EXISTS, taken.code());
        assertFalse(admissions.invite("i2").orElseThrow().redeemed(), "the invite stays usable");
        assertFalse(admissions.ticketUsed("jti-2"), "the ticket stays unused");
    }

    @Test
    void rateOverridesAreKept() {
        admissions.putLimit(NodeId.of("n1"), new Rate(2.5, 3), audit("limits.set"));
        admissions.putLimit(NodeId.of("n2"), new Rate(10, 20), audit("limits.set"));
        admissions.deleteLimit(NodeId.of("n2"), audit("limits.reset"));
        assertEquals(Map.of(NodeId.of("n1"), new Rate(2.5, 3)), admissions.limits());
    }
}
