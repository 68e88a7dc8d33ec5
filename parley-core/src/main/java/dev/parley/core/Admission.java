package dev.parley.core;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Admission by invite: the admin (or a node, for a child of itself) issues a single-use
 * invite; a newcomer exchanges its token, with a nonce and optionally a proof that it holds
 * an Ed25519 key, for a short-lived signed ticket; redeeming the ticket creates the node
 * under the invite's terms and returns its bearer token. Every decision is audited.
 *
 * <p>The exchange checks run in a fixed order and the first that fails names the refusal:
 * invite exists ({@code invalid_token}) and is unused ({@code token_already_used}); not
 * expired ({@code expired_token}); bound node id matches ({@code node_mismatch}); nonce not
 * seen for this invite ({@code replay_detected}); node proof ({@code node_proof_invalid}).
 */
public final class Admission {
    static final String INVITE_TOKEN_PREFIX = "pi_";
    private static final int MAX_TOKEN_LENGTH = 256;
    private static final int LOCK_STRIPES = 64;

    private final Registry registry;
    private final AdmissionStore store;
    private final PolicyRules rules;
    private final TicketIssuer tickets;
    private final InstantSource clock;
    private final IdGenerator ids;
    private final boolean requireNodeProof;
    private final Duration ticketTtl;
    /** Redeems of one invite run one at a time, so that the first decides and the others see it. */
    private final ReentrantLock[] redeemLocks = new ReentrantLock[LOCK_STRIPES];

    public Admission(Registry registry, AdmissionStore store, PolicyRules rules, TicketIssuer tickets, InstantSource clock,
                     IdGenerator ids, boolean requireNodeProof, Duration ticketTtl) {
        this.registry = registry;
        this.store = store;
        this.rules = rules;
        this.tickets = tickets;
        this.clock = clock;
        this.ids = ids;
        this.requireNodeProof = requireNodeProof;
        this.ticketTtl = ticketTtl;
        for (int i = 0; i < LOCK_STRIPES; i++) {
            redeemLocks[i] = new ReentrantLock();
        }
    }

    public boolean requiresNodeProof() {
        return requireNodeProof;
    }

    /** Issues an invite, after the same lineage, depth and id checks a direct create would make. */
    public IssuedInvite invite(Principal caller, NewInvite request) {
        Instant now = clock.instant();
        String target = request.nodeId().map(NodeId::value).orElse("*");
        try {
            Optional<NodeId> parent = registry.planParent(caller, request.parent());
            if (request.nodeId().isPresent()) {
                registry.plan(caller, new NewNode(request.nodeId().get(), request.kind(), request.parent(),
                        request.labels()));
            }
            Optional<NodeId> creator = switch (caller) {
                case Principal.Admin a -> Optional.empty();
                case Principal.Caller c -> Optional.of(c.id());
            };
            String token = Tokens.mint(INVITE_TOKEN_PREFIX);
            Invite invite = new Invite(ids.next(), request.nodeId(), request.kind(), parent, request.labels(), creator,
                    now, now.plus(request.ttl()), Optional.empty());
            store.createInvite(invite, Tokens.hash(token), audit(caller.name(), "invite.create", target,
                    AuditEntry.Decision.ALLOW, "invite " + invite.id() + " for " + invite.kind().wire() + " node under "
                            + parent.map(NodeId::value).orElse("(root)") + " until " + invite.expiresAt(), now));
            return new IssuedInvite(invite, token);
        } catch (ParleyException e) {
            store.auditLater(audit(caller.name(), "invite.create", target, AuditEntry.Decision.DENY, reason(e), now));
            throw e;
        }
    }

    /** Trades an invite token for a ticket; see the class comment for the order of the checks. */
    public IssuedTicket exchange(ExchangeRequest request) {
        Instant now = clock.instant();
        String target = request.nodeId().value();
        String actor = "anonymous";
        try {
            Invite invite = lookup(request.inviteToken()).orElseThrow(() -> new ParleyException(ErrorCode.INVALID_TOKEN,
                    "the invite token is not valid"));
            actor = "invite:" + invite.id();
            if (invite.redeemed()) {
                throw new ParleyException(ErrorCode.TOKEN_ALREADY_USED, "the invite was already redeemed");
            }
            if (!now.isBefore(invite.expiresAt())) {
                throw new ParleyException(ErrorCode.EXPIRED_TOKEN, "the invite expired at " + invite.expiresAt());
            }
            if (invite.nodeId().isPresent() && !invite.nodeId().get().equals(request.nodeId())) {
                throw new ParleyException(ErrorCode.NODE_MISMATCH, "the invite is bound to another node id");
            }
            String scope = exchangeScope(invite);
            if (store.nonceUsed(scope, request.nonce())) {
                throw new ParleyException(ErrorCode.REPLAY_DETECTED, "this nonce was already used with this invite");
            }
            checkExchangeProof(request);
            Instant issued = now.truncatedTo(ChronoUnit.SECONDS); // a JWT's times are whole seconds
            Ticket ticket = new Ticket(ids.next(), request.nodeId(), invite.id(), ids.next(), request.publicKey(),
                    issued, issued.plus(ticketTtl));
            String compact = tickets.issue(ticket);
            store.useNonce(scope, request.nonce(), Optional.of(invite.expiresAt()), audit(actor, "auth.exchange", target,
                    AuditEntry.Decision.ALLOW, "ticket " + ticket.jti() + " (session " + ticket.sessionId() + ")"
                            + (ticket.publicKey().isPresent() ? " with a verified node key" : ""), now));
            return new IssuedTicket(compact, ticket);
        } catch (ParleyException e) {
            store.auditLater(audit(actor, "auth.exchange", target, AuditEntry.Decision.DENY, reason(e), now));
            throw e;
        }
    }

    /**
     * Creates the node a ticket names, as the invite's creator would (kind, parent and
     * labels from the invite), and consumes the invite and the ticket in the same
     * transaction. Concurrent redeems of one invite create at most one node.
     */
    public CreatedNode redeem(String compact) {
        Instant now = clock.instant();
        Ticket ticket;
        try {
            ticket = tickets.verify(compact);
        } catch (ParleyException e) {
            store.auditLater(audit("anonymous", "auth.redeem", "?", AuditEntry.Decision.DENY, reason(e), now));
            throw e;
        }
        String actor = "invite:" + ticket.inviteId();
        ReentrantLock lock = redeemLocks[Math.floorMod(ticket.inviteId().hashCode(), LOCK_STRIPES)];
        lock.lock();
        try {
            Invite invite = store.invite(ticket.inviteId()).orElseThrow(() -> new ParleyException(ErrorCode.INVALID_TICKET,
                    "the ticket names no invite"));
            if (invite.redeemed() || store.ticketUsed(ticket.jti())) {
                throw new ParleyException(ErrorCode.TICKET_ALREADY_USED, invite.redeemed()
                        ? "the invite of this ticket was already redeemed" : "this ticket was already redeemed");
            }
            if (invite.nodeId().isPresent() && !invite.nodeId().get().equals(ticket.subject())) {
                throw new ParleyException(ErrorCode.INVALID_TICKET, "the ticket does not match its invite");
            }
            Redemption redemption = new Redemption(invite.id(), ticket.jti(), ticket.expiresAt(), ticket.publicKey(), now);
            AuditEntry redeemed = audit(actor, "auth.redeem", ticket.subject().value(), AuditEntry.Decision.ALLOW,
                    "ticket " + ticket.jti() + " redeemed; invite " + invite.id() + " consumed", now);
            return registry.create(invite.inviter(), new NewNode(ticket.subject(), invite.kind(), invite.parent(),
                    invite.labels()), (node, tokenHash, created) -> store.redeem(redemption, node, tokenHash,
                    List.of(created, redeemed)));
        } catch (ParleyException e) {
            store.auditLater(audit(actor, "auth.redeem", ticket.subject().value(), AuditEntry.Decision.DENY, reason(e),
                    now));
            throw e;
        } finally {
            lock.unlock();
        }
    }

    /**
     * A node admitted with a public key rotates its own token only with a fresh proof over
     * {@code parley-rotate|<nodeId>|<nonce>}. The admin, and nodes without a key, need none.
     */
    public void checkRotation(Principal caller, NodeId node, Optional<String> nonce, Optional<String> proof) {
        if (!(caller instanceof Principal.Caller c) || !c.id().equals(node)) {
            return;
        }
        Optional<String> key = store.publicKey(node);
        if (key.isEmpty()) {
            return;
        }
        Instant now = clock.instant();
        try {
            if (nonce.isEmpty() || proof.isEmpty()) {
                throw new ParleyException(ErrorCode.NODE_PROOF_INVALID,
                        "this node was admitted with a public key: rotating its token needs nonce and proof");
            }
            String scope = "rotate:" + node.value();
            if (store.nonceUsed(scope, nonce.get())) {
                throw new ParleyException(ErrorCode.REPLAY_DETECTED, "this nonce was already used by this node");
            }
            if (!NodeProof.valid(key.get(), NodeProof.rotateMessage(node, nonce.get()), proof.get())) {
                throw new ParleyException(ErrorCode.NODE_PROOF_INVALID,
                        "the proof is not a signature of parley-rotate|<nodeId>|<nonce> by this node's key");
            }
            store.useNonce(scope, nonce.get(), Optional.empty(), audit(node.value(), "token.rotate.proof", node.value(),
                    AuditEntry.Decision.ALLOW, "node proof verified", now));
        } catch (ParleyException e) {
            store.auditLater(audit(node.value(), "token.rotate.proof", node.value(), AuditEntry.Decision.DENY, reason(e),
                    now));
            throw e;
        }
    }

    private void checkExchangeProof(ExchangeRequest request) {
        if (request.publicKey().isEmpty() && request.proof().isEmpty()) {
            if (requireNodeProof) {
                throw new ParleyException(ErrorCode.NODE_PROOF_INVALID,
                        "this hub requires a node proof: publicKey and proof are needed");
            }
            return;
        }
        if (request.publicKey().isEmpty() || request.proof().isEmpty()) {
            throw new ParleyException(ErrorCode.NODE_PROOF_INVALID, "publicKey and proof go together");
        }
        if (!NodeProof.wellFormedKey(request.publicKey().get())) {
            throw new ParleyException(ErrorCode.NODE_PROOF_INVALID,
                    "publicKey must be a raw 32-byte Ed25519 public key in base64url");
        }
        String message = NodeProof.exchangeMessage(request.inviteToken(), request.nodeId(), request.nonce());
        if (!NodeProof.valid(request.publicKey().get(), message, request.proof().get())) {
            throw new ParleyException(ErrorCode.NODE_PROOF_INVALID,
                    "the proof is not a signature of parley-exchange|<inviteToken>|<nodeId>|<nonce> by publicKey");
        }
    }

    private Optional<Invite> lookup(String token) {
        if (token.isEmpty() || token.length() > MAX_TOKEN_LENGTH) {
            return Optional.empty();
        }
        return store.inviteByTokenHash(Tokens.hash(token));
    }

    /** Rotates the hub's ticket signing key (the admin's alone) and audits it; returns the new key's id. */
    public String rotateKeys(Principal caller) {
        if (!(caller instanceof Principal.Admin)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the admin may rotate the hub's signing key");
        }
        TicketIssuer.KeyRotation rotation = tickets.rotate();
        store.audit(audit(caller.name(), "auth.keys.rotate", rotation.active(), AuditEntry.Decision.ALLOW,
                "signing key " + rotation.retired() + " retired (it verifies until its tickets expire); "
                        + rotation.active() + " signs now", clock.instant()));
        return rotation.active();
    }

    private static String exchangeScope(Invite invite) {
        return "exchange:" + invite.id();
    }

    /** How a refusal reads in the audit log: its code, then its sentence. */
    static String reason(ParleyException e) {
        return e.code().wire() + ": " + e.getMessage();
    }

    private AuditEntry audit(String actor, String action, String target, AuditEntry.Decision decision, String reason,
                             Instant at) {
        return new AuditEntry(at, actor, action, target, decision, reason, Optional.empty(), rules.version());
    }
}
