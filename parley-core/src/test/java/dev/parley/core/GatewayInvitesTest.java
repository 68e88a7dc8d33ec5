package dev.parley.core;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Gateway invites: issued by the admin of the authority's holder, traded once, before expiry, for that id's credentials. */
class GatewayInvitesTest {
    private final MemoryHub hub = new MemoryHub();
    private final MemoryAdmissions store = new MemoryAdmissions();
    private final AtomicInteger minted = new AtomicInteger();
    private final GatewayMint mint = new GatewayMint() {
        @Override
        public void requireValidId(String gateway) {
            if (gateway.contains(".")) {
                throw new ParleyException(ErrorCode.INVALID_REQUEST, "no dots in a gateway id");
            }
        }

        @Override
        public Minted mint(String gateway) {
            return new Minted("U" + minted.incrementAndGet(), "creds of " + gateway);
        }
    };
    private final GatewayInvites invites = new GatewayInvites(store, Optional.of(mint), hub.rules, hub.clock, hub.ids);

    private static void assertRefused(ErrorCode code, Runnable call) {
        assertEquals(code, assertThrows(ParleyException.class, call::run).code());
    }

    @Test
    void anInviteIsTradedOnceForItsGatewaysCredentials() {
        GatewayInvites.Issued issued = invites.issue(MemoryHub.ADMIN, "b", Duration.ofMinutes(5));
        assertTrue(issued.token().startsWith("pg_"));
        GatewayInvites.Joined joined = invites.exchange(issued.token());
        assertEquals("b", joined.gateway());
        assertEquals("creds of b", joined.credentials().creds());
        assertRefused(ErrorCode.TOKEN_ALREADY_USED, () -> invites.exchange(issued.token()));
        assertRefused(ErrorCode.INVALID_TOKEN, () -> invites.exchange("pg_unknown"));
        assertRefused(ErrorCode.INVALID_TOKEN, () -> invites.exchange("pg_" + "x".repeat(300)));
        List<String> denied = store.audit().stream().filter(e -> e.action().equals("auth.gateway")
                && e.decision() == AuditEntry.Decision.DENY).map(AuditEntry::reason).toList();
        assertEquals(3, denied.size(), denied::toString);
        assertTrue(denied.getFirst().startsWith("token_already_used: "), denied::toString);
        assertTrue(store.audit().stream().anyMatch(e -> e.action().equals("auth.gateway")
                && e.decision() == AuditEntry.Decision.ALLOW && e.reason().contains("U1") && e.target().equals("b")));
    }

    @Test
    void anExpiredInviteIsRefusedAndMintsNothing() {
        GatewayInvites.Issued issued = invites.issue(MemoryHub.ADMIN, "b", GatewayInvites.MIN_TTL);
        hub.advance(GatewayInvites.MIN_TTL);
        assertRefused(ErrorCode.EXPIRED_TOKEN, () -> invites.exchange(issued.token()));
        assertEquals(0, minted.get());
    }

    @Test
    void onlyTheAdminInvitesForAValidIdAndTimeAndOnlyWithTheAuthority() {
        hub.node("lead", null);
        assertRefused(ErrorCode.FORBIDDEN, () -> invites.issue(MemoryHub.as("lead"), "b", Duration.ofMinutes(5)));
        assertRefused(ErrorCode.INVALID_REQUEST, () -> invites.issue(MemoryHub.ADMIN, "b.1", Duration.ofMinutes(5)));
        assertRefused(ErrorCode.INVALID_REQUEST, () -> invites.issue(MemoryHub.ADMIN, "b", Duration.ofSeconds(9)));
        assertRefused(ErrorCode.INVALID_REQUEST, () -> invites.issue(MemoryHub.ADMIN, "b", Duration.ofDays(8)));
        GatewayInvites without = new GatewayInvites(store, Optional.empty(), hub.rules, hub.clock, hub.ids);
        assertRefused(ErrorCode.NO_NATS_AUTHORITY, () -> without.issue(MemoryHub.ADMIN, "b", Duration.ofMinutes(5)));
        assertRefused(ErrorCode.NO_NATS_AUTHORITY, () -> without.exchange("pg_x"));
        assertEquals(5, store.audit().stream().filter(e -> e.action().equals("gateway.invite")
                && e.decision() == AuditEntry.Decision.DENY).count());
    }

    /** Exchanges of one invite racing: exactly one gets credentials; the others are told it was used. */
    @Test
    void racingExchangesOfOneInviteHandOutCredentialsOnce() throws Exception {
        String token = invites.issue(MemoryHub.ADMIN, "b", Duration.ofMinutes(5)).token();
        AtomicInteger joined = new AtomicInteger();
        AtomicInteger used = new AtomicInteger();
        try (ExecutorService pool = Executors.newFixedThreadPool(8)) {
            List<Future<?>> all = new java.util.ArrayList<>();
            for (int i = 0; i < 8; i++) {
                all.add(pool.submit(() -> {
                    try {
                        invites.exchange(token);
                        joined.incrementAndGet();
                    } catch (ParleyException e) {
                        assertEquals(ErrorCode.TOKEN_ALREADY_USED, e.code());
                        used.incrementAndGet();
                    }
                }));
            }
            for (Future<?> f : all) {
                f.get();
            }
        }
        assertEquals(1, joined.get());
        assertEquals(7, used.get());
    }
}
