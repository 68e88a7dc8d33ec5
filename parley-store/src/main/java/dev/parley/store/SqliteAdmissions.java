package dev.parley.store;

import dev.parley.core.AdmissionStore;
import dev.parley.core.AuditEntry;
import dev.parley.core.ErrorCode;
import dev.parley.core.GatewayInvite;
import dev.parley.core.Invite;
import dev.parley.core.LimitStore;
import dev.parley.core.Node;
import dev.parley.core.NodeId;
import dev.parley.core.NodeKind;
import dev.parley.core.ParleyException;
import dev.parley.core.Rate;
import dev.parley.core.Redemption;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;

/** Invites, used nonces and tickets, node public keys and rate overrides, on the hub's SQLite file. */
public final class SqliteAdmissions implements AdmissionStore, LimitStore {
    private static final Logger LOG = Logger.getLogger(SqliteAdmissions.class.getName());
    private static final String INVITE_COLUMNS = "id, node_id, kind, parent, labels, creator, created_at, expires_at,"
            + " redeemed_at";

    /** Well past any ticket lifetime plus clock skew. */
    private static final java.time.Duration FORGET_TICKETS_AFTER = java.time.Duration.ofHours(1);

    private final Writer writer;
    private final ReadPool readers;

    SqliteAdmissions(Writer writer, ReadPool readers) {
        this.writer = writer;
        this.readers = readers;
    }

    @Override
    public void createInvite(Invite invite, String tokenHash, AuditEntry audit) {
        writer.submit(tx -> {
            var insert = tx.statements().get("INSERT INTO invites (id, token_hash, node_id, kind, parent, labels, creator,"
                    + " created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
            insert.setString(1, invite.id());
            insert.setString(2, tokenHash);
            Rows.setNullable(insert, 3, invite.nodeId());
            insert.setString(4, invite.kind().wire());
            Rows.setNullable(insert, 5, invite.parent());
            String labels = Rows.json(invite.labels());
            insert.setString(6, labels == null ? "{}" : labels);
            Rows.setNullable(insert, 7, invite.creator());
            insert.setLong(8, invite.createdAt().toEpochMilli());
            insert.setLong(9, invite.expiresAt().toEpochMilli());
            insert.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public Optional<Invite> inviteByTokenHash(String tokenHash) {
        return readers.read(s -> {
            var select = s.get("SELECT " + INVITE_COLUMNS + " FROM invites WHERE token_hash = ?");
            select.setString(1, tokenHash);
            try (var rs = select.executeQuery()) {
                return rs.next() ? Optional.of(invite(rs)) : Optional.empty();
            }
        });
    }

    @Override
    public Optional<Invite> invite(String id) {
        return readers.read(s -> {
            var select = s.get("SELECT " + INVITE_COLUMNS + " FROM invites WHERE id = ?");
            select.setString(1, id);
            try (var rs = select.executeQuery()) {
                return rs.next() ? Optional.of(invite(rs)) : Optional.empty();
            }
        });
    }

    @Override
    public boolean nonceUsed(String scope, String nonce) {
        return readers.read(s -> {
            var select = s.get("SELECT 1 FROM nonces WHERE scope = ? AND nonce = ?");
            select.setString(1, scope);
            select.setString(2, nonce);
            try (var rs = select.executeQuery()) {
                return rs.next();
            }
        });
    }

    @Override
    public void useNonce(String scope, String nonce, Optional<Instant> keepUntil, AuditEntry audit) {
        writer.submit(tx -> {
            var forget = tx.statements().get("DELETE FROM nonces WHERE keep_until IS NOT NULL AND keep_until < ?");
            forget.setLong(1, audit.at().toEpochMilli());
            forget.executeUpdate();
            var insert = tx.statements().get(
                    "INSERT OR IGNORE INTO nonces (scope, nonce, used_at, keep_until) VALUES (?, ?, ?, ?)");
            insert.setString(1, scope);
            insert.setString(2, nonce);
            insert.setLong(3, audit.at().toEpochMilli());
            Rows.setNullableMillis(insert, 4, keepUntil);
            if (insert.executeUpdate() == 0) {
                throw new ParleyException(ErrorCode.REPLAY_DETECTED, "this nonce was already used");
            }
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public boolean ticketUsed(String jti) {
        return readers.read(s -> {
            var select = s.get("SELECT 1 FROM used_tickets WHERE jti = ?");
            select.setString(1, jti);
            try (var rs = select.executeQuery()) {
                return rs.next();
            }
        });
    }

    @Override
    public void redeem(Redemption redemption, Node node, String tokenHash, List<AuditEntry> audits) {
        writer.submit(tx -> {
            var s = tx.statements();
            // A ticket past its expiry is refused as expired before its jti is looked up: its row can go.
            var forget = s.get("DELETE FROM used_tickets WHERE expires_at < ?");
            forget.setLong(1, redemption.at().minus(FORGET_TICKETS_AFTER).toEpochMilli());
            forget.executeUpdate();
            var useTicket = s.get("INSERT OR IGNORE INTO used_tickets (jti, invite_id, used_at, expires_at) VALUES (?, ?, ?, ?)");
            useTicket.setString(1, redemption.jti());
            useTicket.setString(2, redemption.inviteId());
            useTicket.setLong(3, redemption.at().toEpochMilli());
            useTicket.setLong(4, redemption.ticketExpiresAt().toEpochMilli());
            if (useTicket.executeUpdate() == 0) {
                throw new ParleyException(ErrorCode.TICKET_ALREADY_USED, "this ticket was already redeemed");
            }
            var consume = s.get("UPDATE invites SET redeemed_at = ?, redeemed_node = ? WHERE id = ? AND redeemed_at IS NULL");
            consume.setLong(1, redemption.at().toEpochMilli());
            consume.setString(2, node.id().value());
            consume.setString(3, redemption.inviteId());
            if (consume.executeUpdate() == 0) {
                throw new ParleyException(ErrorCode.TICKET_ALREADY_USED, "the invite of this ticket was already redeemed");
            }
            Ledger.insertNode(s, node, tokenHash, Optional.empty());
            if (redemption.publicKey().isPresent()) {
                var key = s.get("INSERT OR REPLACE INTO node_keys (node_id, public_key, created_at) VALUES (?, ?, ?)");
                key.setString(1, node.id().value());
                key.setString(2, redemption.publicKey().get());
                key.setLong(3, redemption.at().toEpochMilli());
                key.executeUpdate();
            }
            for (AuditEntry audit : audits) {
                Ledger.insertAudit(tx, audit);
            }
            return null;
        });
    }

    @Override
    public void createGatewayInvite(GatewayInvite invite, String tokenHash, AuditEntry audit) {
        writer.submit(tx -> {
            var insert = tx.statements().get("INSERT INTO gateway_invites (id, token_hash, gateway, created_at,"
                    + " expires_at) VALUES (?, ?, ?, ?, ?)");
            insert.setString(1, invite.id());
            insert.setString(2, tokenHash);
            insert.setString(3, invite.gateway());
            insert.setLong(4, invite.createdAt().toEpochMilli());
            insert.setLong(5, invite.expiresAt().toEpochMilli());
            insert.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public Optional<GatewayInvite> gatewayInviteByTokenHash(String tokenHash) {
        return readers.read(s -> {
            var select = s.get("SELECT id, gateway, created_at, expires_at, redeemed_at FROM gateway_invites"
                    + " WHERE token_hash = ?");
            select.setString(1, tokenHash);
            try (var rs = select.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                return Optional.of(new GatewayInvite(rs.getString(1), rs.getString(2),
                        Instant.ofEpochMilli(rs.getLong(3)), Instant.ofEpochMilli(rs.getLong(4)),
                        Rows.optionalMillis(rs, 5)));
            }
        });
    }

    @Override
    public boolean useGatewayInvite(String id, Instant at, AuditEntry audit) {
        return writer.submit(tx -> {
            var use = tx.statements().get("UPDATE gateway_invites SET redeemed_at = ? WHERE id = ? AND redeemed_at IS NULL");
            use.setLong(1, at.toEpochMilli());
            use.setString(2, id);
            if (use.executeUpdate() == 0) {
                return false;
            }
            Ledger.insertAudit(tx, audit);
            return true;
        });
    }

    @Override
    public Optional<String> publicKey(NodeId node) {
        return readers.read(s -> {
            var select = s.get("SELECT public_key FROM node_keys WHERE node_id = ?");
            select.setString(1, node.value());
            try (var rs = select.executeQuery()) {
                return rs.next() ? Optional.of(rs.getString(1)) : Optional.empty();
            }
        });
    }

    @Override
    public void audit(AuditEntry entry) {
        writer.submit(tx -> {
            Ledger.insertAudit(tx, entry);
            return null;
        });
    }

    @Override
    public void auditLater(AuditEntry entry) {
        try {
            writer.enqueue(tx -> {
                Ledger.insertAudit(tx, entry);
                return null;
            }).exceptionally(e -> {
                LOG.log(Level.WARNING, "an audit entry could not be written: " + entry, e);
                return null;
            });
        } catch (ParleyException e) {
            LOG.log(Level.WARNING, "an audit entry could not be queued (" + e.getMessage() + "): " + entry);
        }
    }

    @Override
    public Map<NodeId, Rate> limits() {
        return readers.read(s -> {
            Map<NodeId, Rate> out = new HashMap<>();
            try (var rs = s.get("SELECT node_id, rate, burst FROM node_limits").executeQuery()) {
                while (rs.next()) {
                    out.put(new NodeId(rs.getString(1)), new Rate(rs.getDouble(2), rs.getLong(3)));
                }
            }
            return out;
        });
    }

    @Override
    public void putLimit(NodeId node, Rate rate, AuditEntry audit) {
        writer.submit(tx -> {
            var upsert = tx.statements().get(
                    "INSERT OR REPLACE INTO node_limits (node_id, rate, burst, updated_at) VALUES (?, ?, ?, ?)");
            upsert.setString(1, node.value());
            upsert.setDouble(2, rate.perSecond());
            upsert.setLong(3, rate.burst());
            upsert.setLong(4, audit.at().toEpochMilli());
            upsert.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public void deleteLimit(NodeId node, AuditEntry audit) {
        writer.submit(tx -> {
            var delete = tx.statements().get("DELETE FROM node_limits WHERE node_id = ?");
            delete.setString(1, node.value());
            delete.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    private static Invite invite(ResultSet rs) throws SQLException {
        Optional<Instant> redeemedAt = Rows.optionalMillis(rs, 9);
        return new Invite(rs.getString(1), Optional.ofNullable(rs.getString(2)).map(NodeId::new),
                NodeKind.parse(rs.getString(3)), Optional.ofNullable(rs.getString(4)).map(NodeId::new),
                Rows.stringMap(rs.getString(5)), Optional.ofNullable(rs.getString(6)).map(NodeId::new),
                Instant.ofEpochMilli(rs.getLong(7)), Instant.ofEpochMilli(rs.getLong(8)), redeemedAt);
    }
}
