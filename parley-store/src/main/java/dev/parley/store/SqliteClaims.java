package dev.parley.store;

import dev.parley.core.AuditEntry;
import dev.parley.core.Claim;
import dev.parley.core.ClaimStore;
import dev.parley.core.DeliveryEvent;
import dev.parley.core.DeliveryStore;
import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@link ClaimStore} on the hub's SQLite file: table {@code claims}, a row per claimed envelope
 * until it is settled (the ledger deletes it then). Each change is one writer job, so a claim,
 * its state move and its audit entry commit together.
 */
public final class SqliteClaims implements ClaimStore {
    private static final String COLUMNS = "envelope_id, node, claimed_at, tries, declared_ms, heartbeat_at, tool,"
            + " tool_started_at";

    private final Writer writer;
    private final ReadPool readers;

    SqliteClaims(Writer writer, ReadPool readers) {
        this.writer = writer;
        this.readers = readers;
    }

    @Override
    public Claim claim(String envelopeId, NodeId node, Optional<Duration> declared, Instant at, AuditEntry audit) {
        return writer.submit(tx -> {
            var s = tx.statements();
            var select = s.get("SELECT claimed_at, not_before FROM claims WHERE envelope_id = ?");
            select.setString(1, envelopeId);
            boolean held = false;
            try (var rs = select.executeQuery()) {
                if (rs.next()) {
                    held = rs.getObject(1) != null;
                    Optional<Instant> notBefore = Rows.optionalMillis(rs, 2);
                    if (!held && notBefore.isPresent() && notBefore.get().isAfter(at)) {
                        throw new ParleyException(ErrorCode.CLAIM_BACKOFF, "message " + envelopeId
                                + " was taken back from its claimant; it may be claimed again from " + notBefore.get());
                    }
                }
            }
            if (held) {
                // The claimant claiming again (a restarted process taking its work up) is a sign of life;
                // the timeline already says it was claimed.
                var update = s.get("UPDATE claims SET heartbeat_at = ?, declared_ms = coalesce(?, declared_ms)"
                        + " WHERE envelope_id = ?");
                update.setLong(1, at.toEpochMilli());
                Rows.setNullable(update, 2, declared.map(Duration::toMillis));
                update.setString(3, envelopeId);
                update.executeUpdate();
            } else {
                Ledger.applyEvent(s, envelopeId, new DeliveryEvent.Claimed(node.value()), at, true);
                var upsert = s.get("INSERT INTO claims (envelope_id, node, claimed_at, declared_ms) VALUES (?, ?, ?, ?)"
                        + " ON CONFLICT (envelope_id) DO UPDATE SET claimed_at = excluded.claimed_at, not_before = NULL,"
                        + " declared_ms = excluded.declared_ms, heartbeat_at = NULL, tool = NULL, tool_started_at = NULL");
                upsert.setString(1, envelopeId);
                upsert.setString(2, node.value());
                upsert.setLong(3, at.toEpochMilli());
                Rows.setNullable(upsert, 4, declared.map(Duration::toMillis));
                upsert.executeUpdate();
                // A claimed envelope is the sweep's to watch, no longer the ack timeout's.
                Ledger.unschedule(s, envelopeId, DeliveryStore.Purpose.REDELIVER);
                Ledger.unschedule(s, envelopeId, DeliveryStore.Purpose.RELEASE);
                Ledger.insertAudit(tx, audit);
            }
            return held(s, envelopeId).orElseThrow();
        });
    }

    @Override
    public Claim heartbeat(String envelopeId, Claim.Heartbeat heartbeat, Optional<Duration> declared) {
        return writer.submit(tx -> {
            var s = tx.statements();
            // What a heartbeat leaves out (the tool, its start, its timeout) stays as the last one said.
            var update = s.get("UPDATE claims SET heartbeat_at = ?, tool = coalesce(?, tool),"
                    + " tool_started_at = coalesce(?, tool_started_at), declared_ms = coalesce(?, declared_ms)"
                    + " WHERE envelope_id = ? AND claimed_at IS NOT NULL");
            update.setLong(1, heartbeat.at().toEpochMilli());
            Rows.setNullable(update, 2, heartbeat.tool());
            Rows.setNullableMillis(update, 3, heartbeat.toolStartedAt());
            Rows.setNullable(update, 4, declared.map(Duration::toMillis));
            update.setString(5, envelopeId);
            if (update.executeUpdate() == 0) {
                throw new ParleyException(ErrorCode.NOT_CLAIMED, "message " + envelopeId
                        + " is not claimed: claim it before sending heartbeats");
            }
            return held(s, envelopeId).orElseThrow();
        });
    }

    @Override
    public Optional<Claim> held(String envelopeId) {
        return readers.read(s -> held(s, envelopeId));
    }

    @Override
    public List<Claim> claims() {
        return readers.read(s -> {
            var select = s.get("SELECT " + COLUMNS + " FROM claims INDEXED BY claims_held WHERE claimed_at IS NOT NULL"
                    + " ORDER BY claimed_at");
            List<Claim> out = new ArrayList<>();
            try (var rs = select.executeQuery()) {
                while (rs.next()) {
                    out.add(claim(rs));
                }
            }
            return out;
        });
    }

    @Override
    public Map<NodeId, Claim> lastHeartbeats() {
        return readers.read(s -> {
            // SQLite takes the bare columns of a max() group from the row with the maximum.
            var select = s.get("SELECT " + COLUMNS + ", max(heartbeat_at) FROM claims WHERE claimed_at IS NOT NULL"
                    + " AND heartbeat_at IS NOT NULL GROUP BY node");
            Map<NodeId, Claim> out = new HashMap<>();
            try (var rs = select.executeQuery()) {
                while (rs.next()) {
                    Claim claim = claim(rs);
                    out.put(claim.node(), claim);
                }
            }
            return out;
        });
    }

    @Override
    public boolean reset(Claim claim, String why, Instant notBefore, Instant at, AuditEntry audit) {
        return writer.submit(tx -> {
            var s = tx.statements();
            if (!held(s, claim.envelopeId()).equals(Optional.of(claim))) {
                return false;
            }
            var update = s.get("UPDATE claims SET claimed_at = NULL, tries = tries + 1, not_before = ?, declared_ms = NULL,"
                    + " heartbeat_at = NULL, tool = NULL, tool_started_at = NULL WHERE envelope_id = ?");
            update.setLong(1, notBefore.toEpochMilli());
            update.setString(2, claim.envelopeId());
            update.executeUpdate();
            Ledger.applyEvent(s, claim.envelopeId(), new DeliveryEvent.Released("claim taken back: " + why), at, false);
            // Once its backoff is over the envelope is delivered again, to live streams too.
            var attempt = s.get("SELECT attempt + 1 FROM envelopes WHERE id = ?");
            attempt.setString(1, claim.envelopeId());
            try (var rs = attempt.executeQuery()) {
                rs.next();
                Ledger.schedule(s, claim.envelopeId(), DeliveryStore.Purpose.RELEASE, notBefore, rs.getInt(1));
            }
            Ledger.insertAudit(tx, audit);
            return true;
        });
    }

    @Override
    public boolean giveUp(Claim claim, String why, int tries, Instant at, Optional<Envelope> notice, AuditEntry audit) {
        return writer.submit(tx -> {
            if (!held(tx.statements(), claim.envelopeId()).equals(Optional.of(claim))) {
                return false;
            }
            boolean moved = Ledger.deadLetter(tx, claim.envelopeId(), why, tries, at, notice);
            Ledger.insertAudit(tx, audit);
            return moved;
        });
    }

    /** The claim held on {@code envelopeId}, if one is. */
    private static Optional<Claim> held(Statements s, String envelopeId) throws SQLException {
        var select = s.get("SELECT " + COLUMNS + " FROM claims WHERE envelope_id = ? AND claimed_at IS NOT NULL");
        select.setString(1, envelopeId);
        try (var rs = select.executeQuery()) {
            return rs.next() ? Optional.of(claim(rs)) : Optional.empty();
        }
    }

    private static Claim claim(ResultSet rs) throws SQLException {
        Optional<Instant> heartbeatAt = Rows.optionalMillis(rs, 6);
        Optional<Claim.Heartbeat> heartbeat = heartbeatAt.isEmpty() ? Optional.empty()
                : Optional.of(new Claim.Heartbeat(heartbeatAt.get(), Optional.ofNullable(rs.getString(7)),
                        Rows.optionalMillis(rs, 8)));
        long declaredMs = rs.getLong(5);
        Optional<Duration> declared = rs.wasNull() ? Optional.empty() : Optional.of(Duration.ofMillis(declaredMs));
        return new Claim(rs.getString(1), new NodeId(rs.getString(2)), Instant.ofEpochMilli(rs.getLong(3)), rs.getInt(4),
                declared, heartbeat);
    }
}
