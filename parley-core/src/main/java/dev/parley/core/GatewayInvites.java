package dev.parley.core;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;

/**
 * Joining a federation: the admin of a gateway that holds the federation's NATS authority
 * issues a single-use invite bound to a new gateway id; the newcomer exchanges it (no bearer)
 * for that gateway's NATS credentials. The credentials are minted before the invite is
 * consumed and handed out only if this exchange is the one that consumed it, so two
 * exchanges of one invite never both get credentials. Every decision is audited.
 */
public final class GatewayInvites {
    static final String TOKEN_PREFIX = "pg_";
    public static final Duration DEFAULT_TTL = Duration.ofMinutes(15);
    public static final Duration MIN_TTL = Duration.ofSeconds(10);
    public static final Duration MAX_TTL = Duration.ofDays(7);
    private static final int MAX_TOKEN_LENGTH = 256;

    private final AdmissionStore store;
    private final Optional<GatewayMint> mint;
    private final PolicyRules rules;
    private final InstantSource clock;
    private final IdGenerator ids;

    public GatewayInvites(AdmissionStore store, Optional<GatewayMint> mint, PolicyRules rules, InstantSource clock,
                          IdGenerator ids) {
        this.store = store;
        this.mint = mint;
        this.rules = rules;
        this.clock = clock;
        this.ids = ids;
    }

    /** An invite and its token, which is shown once and kept only as a hash. */
    public record Issued(GatewayInvite invite, String token) {
    }

    /** What an exchange hands the new gateway. */
    public record Joined(String gateway, GatewayMint.Minted credentials) {
    }

    /** Issues an invite for gateway {@code gateway}, valid for {@code ttl}. */
    public Issued issue(Principal caller, String gateway, Duration ttl) {
        Instant now = clock.instant();
        try {
            Registry.requireAdmin(caller, "invite gateways");
            if (ttl.compareTo(MIN_TTL) < 0 || ttl.compareTo(MAX_TTL) > 0) {
                throw new ParleyException(ErrorCode.INVALID_REQUEST, "ttlSeconds must be between "
                        + MIN_TTL.toSeconds() + " and " + MAX_TTL.toSeconds());
            }
            GatewayMint authority = authority();
            authority.requireValidId(gateway);
            String token = Tokens.mint(TOKEN_PREFIX);
            GatewayInvite invite = new GatewayInvite(ids.next(), gateway, now, now.plus(ttl), Optional.empty());
            store.createGatewayInvite(invite, Tokens.hash(token), audit(caller.name(), "gateway.invite", gateway,
                    AuditEntry.Decision.ALLOW, "invite " + invite.id() + " until " + invite.expiresAt(), now));
            return new Issued(invite, token);
        } catch (ParleyException e) {
            store.auditLater(audit(caller.name(), "gateway.invite", gateway, AuditEntry.Decision.DENY, Admission.reason(e), now));
            throw e;
        }
    }

    /**
     * Trades an invite token for the credentials of the gateway it names: refused when the
     * token is unknown ({@code invalid_token}), used ({@code token_already_used}) or expired
     * ({@code expired_token}), and by a hub without the authority ({@code no_nats_authority}).
     */
    public Joined exchange(String token) {
        Instant now = clock.instant();
        String actor = "anonymous";
        String target = "?";
        try {
            GatewayMint authority = authority();
            GatewayInvite invite = (token.length() > MAX_TOKEN_LENGTH || !token.startsWith(TOKEN_PREFIX)
                    ? Optional.<GatewayInvite>empty() : store.gatewayInviteByTokenHash(Tokens.hash(token)))
                    .orElseThrow(() -> new ParleyException(ErrorCode.INVALID_TOKEN, "the gateway invite is not valid"));
            actor = "gateway-invite:" + invite.id();
            target = invite.gateway();
            if (invite.redeemedAt().isPresent()) {
                throw new ParleyException(ErrorCode.TOKEN_ALREADY_USED, "the gateway invite was already used");
            }
            if (!now.isBefore(invite.expiresAt())) {
                throw new ParleyException(ErrorCode.EXPIRED_TOKEN, "the gateway invite expired at " + invite.expiresAt());
            }
            GatewayMint.Minted minted = authority.mint(invite.gateway());
            if (!store.useGatewayInvite(invite.id(), now, audit(actor, "auth.gateway", target, AuditEntry.Decision.ALLOW,
                    "NATS user " + minted.userPublicKey() + " for gateway " + invite.gateway(), now))) {
                throw new ParleyException(ErrorCode.TOKEN_ALREADY_USED, "the gateway invite was already used");
            }
            return new Joined(invite.gateway(), minted);
        } catch (ParleyException e) {
            store.auditLater(audit(actor, "auth.gateway", target, AuditEntry.Decision.DENY, Admission.reason(e), now));
            throw e;
        }
    }

    private GatewayMint authority() {
        return mint.orElseThrow(() -> new ParleyException(ErrorCode.NO_NATS_AUTHORITY, "this hub does not hold the"
                + " federation's NATS authority: invite and join on the gateway where `parley gateway init` was run"));
    }

    private AuditEntry audit(String actor, String action, String target, AuditEntry.Decision decision, String reason,
                             Instant at) {
        return new AuditEntry(at, actor, action, target, decision, reason, Optional.empty(), rules.version());
    }
}
