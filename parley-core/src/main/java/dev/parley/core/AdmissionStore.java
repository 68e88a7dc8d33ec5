package dev.parley.core;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The durable side of admission: invites (tokens kept only as hashes), nonces already
 * used, tickets already redeemed, and the public keys of admitted nodes.
 */
public interface AdmissionStore {
    void createInvite(Invite invite, String tokenHash, AuditEntry audit);

    Optional<Invite> inviteByTokenHash(String tokenHash);

    Optional<Invite> invite(String id);

    /** Whether {@code nonce} was already used in {@code scope} (e.g. one invite, or one node's proofs). */
    boolean nonceUsed(String scope, String nonce);

    /**
     * Records {@code nonce} as used in {@code scope} together with {@code audit}; refuses with
     * {@link ErrorCode#REPLAY_DETECTED}, writing nothing, when it already was. The record may
     * be forgotten after {@code keepUntil} (empty: kept for good).
     */
    void useNonce(String scope, String nonce, Optional<Instant> keepUntil, AuditEntry audit);

    boolean ticketUsed(String jti);

    /**
     * In one transaction: marks the ticket's jti used and the invite redeemed (refusing with
     * {@link ErrorCode#TICKET_ALREADY_USED} when either already is), creates the node
     * ({@link ErrorCode#NODE_EXISTS} when its id is taken), stores its public key and writes
     * the audit entries. A refusal writes nothing.
     */
    void redeem(Redemption redemption, Node node, String tokenHash, List<AuditEntry> audits);

    /** The public key (base64url, raw Ed25519) a node was admitted with, if any. */
    Optional<String> publicKey(NodeId node);

    void createGatewayInvite(GatewayInvite invite, String tokenHash, AuditEntry audit);

    Optional<GatewayInvite> gatewayInviteByTokenHash(String tokenHash);

    /**
     * Marks the gateway invite used at {@code at}, with {@code audit}, in one transaction;
     * answers false, writing nothing, when it already was.
     */
    boolean useGatewayInvite(String id, Instant at, AuditEntry audit);

    /** Writes {@code entry}, returning once it is committed. */
    void audit(AuditEntry entry);

    /** Writes {@code entry} without waiting for the commit (for refusals, which must not slow down the hub). */
    void auditLater(AuditEntry entry);
}
