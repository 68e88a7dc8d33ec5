package dev.parley.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The admission port in memory, for unit tests: invites by token hash, used nonces and
 * tickets, admitted nodes' keys. A refused write leaves nothing behind, like a transaction.
 */
final class MemoryAdmissions implements AdmissionStore {
    private final Map<String, Invite> invites = new HashMap<>();
    private final Map<String, String> inviteByHash = new HashMap<>();
    private final Set<String> nonces = new HashSet<>();
    private final Set<String> tickets = new HashSet<>();
    private final Map<NodeId, String> keys = new HashMap<>();
    private final Set<NodeId> nodes = new HashSet<>();
    private final List<AuditEntry> audit = new ArrayList<>();

    /** Every audit entry written, in order (refusals included). */
    synchronized List<AuditEntry> audit() {
        return List.copyOf(audit);
    }

    @Override
    public synchronized void createInvite(Invite invite, String tokenHash, AuditEntry entry) {
        invites.put(invite.id(), invite);
        inviteByHash.put(tokenHash, invite.id());
        audit.add(entry);
    }

    @Override
    public synchronized Optional<Invite> inviteByTokenHash(String tokenHash) {
        return Optional.ofNullable(inviteByHash.get(tokenHash)).map(invites::get);
    }

    @Override
    public synchronized Optional<Invite> invite(String id) {
        return Optional.ofNullable(invites.get(id));
    }

    @Override
    public synchronized boolean nonceUsed(String scope, String nonce) {
        return nonces.contains(scope + "|" + nonce);
    }

    @Override
    public synchronized void useNonce(String scope, String nonce, Optional<Instant> keepUntil, AuditEntry entry) {
        if (!nonces.add(scope + "|" + nonce)) {
            throw new ParleyException(ErrorCode.REPLAY_DETECTED, "this nonce was already used");
        }
        audit.add(entry);
    }

    @Override
    public synchronized boolean ticketUsed(String jti) {
        return tickets.contains(jti);
    }

    @Override
    public synchronized void redeem(Redemption redemption, Node node, String tokenHash, List<AuditEntry> audits) {
        Invite invite = invites.get(redemption.inviteId());
        if (invite.redeemed() || tickets.contains(redemption.jti())) {
            throw new ParleyException(ErrorCode.TICKET_ALREADY_USED, "already redeemed");
        }
        if (nodes.contains(node.id())) {
            throw new ParleyException(ErrorCode.NODE_EXISTS, "node " + node.id() + " already exists");
        }
        tickets.add(redemption.jti());
        invites.put(invite.id(), new Invite(invite.id(), invite.nodeId(), invite.kind(), invite.parent(),
                invite.labels(), invite.creator(), invite.createdAt(), invite.expiresAt(), Optional.of(redemption.at())));
        nodes.add(node.id());
        redemption.publicKey().ifPresent(key -> keys.put(node.id(), key));
        audit.addAll(audits);
    }

    @Override
    public synchronized Optional<String> publicKey(NodeId node) {
        return Optional.ofNullable(keys.get(node));
    }

    @Override
    public synchronized void audit(AuditEntry entry) {
        audit.add(entry);
    }

    @Override
    public synchronized void auditLater(AuditEntry entry) {
        audit.add(entry);
    }

    private final Map<String, GatewayInvite> gatewayInvites = new HashMap<>();

    @Override
    public synchronized void createGatewayInvite(GatewayInvite invite, String tokenHash, AuditEntry entry) {
        gatewayInvites.put(tokenHash, invite);
        audit.add(entry);
    }

    @Override
    public synchronized Optional<GatewayInvite> gatewayInviteByTokenHash(String tokenHash) {
        return Optional.ofNullable(gatewayInvites.get(tokenHash));
    }

    @Override
    public synchronized boolean useGatewayInvite(String id, Instant at, AuditEntry entry) {
        for (var e : gatewayInvites.entrySet()) {
            GatewayInvite invite = e.getValue();
            if (invite.id().equals(id) && invite.redeemedAt().isEmpty()) {
                e.setValue(new GatewayInvite(invite.id(), invite.gateway(), invite.createdAt(), invite.expiresAt(),
                        Optional.of(at)));
                audit.add(entry);
                return true;
            }
        }
        return false;
    }
}
