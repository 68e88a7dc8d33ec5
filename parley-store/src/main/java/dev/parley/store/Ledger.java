package dev.parley.store;

import dev.parley.core.AuditEntry;
import dev.parley.core.DeliveryEvent;
import dev.parley.core.DeliveryState;
import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.ParleyException;
import dev.parley.core.Transition;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Optional;

/**
 * The writes every part of the store shares, run inside a writer job: appending an
 * envelope to an inbox, moving an envelope through the state machine, the audit log.
 */
final class Ledger {
    private Ledger() {
    }

    /** Appends {@code draft} to its inbox with the next seq; it is announced after the commit. */
    static Envelope append(Writer.Tx tx, Envelope draft) throws SQLException {
        Envelope envelope = draft.withSeq(tx.nextSeq(draft.to()));
        insertEnvelope(tx.statements(), envelope);
        tx.announce(envelope);
        return envelope;
    }

    static Optional<Envelope> byMessageId(Statements s, Envelope draft) throws SQLException {
        var select = s.get("SELECT " + Rows.ENVELOPE_COLUMNS + " FROM envelopes WHERE from_node = ? AND message_id = ?");
        select.setString(1, draft.from().value());
        select.setString(2, draft.messageId().orElseThrow());
        try (var rs = select.executeQuery()) {
            return rs.next() ? Optional.of(Rows.envelope(rs)) : Optional.empty();
        }
    }

    /**
     * Reads the envelope's state, asks the state machine, and writes the move. With
     * {@code refuseThrows}, a refused move aborts the whole job (used when it is part of a
     * larger change that must not happen half).
     */
    static Transition applyEvent(Statements s, String envelopeId, DeliveryEvent event, Instant at,
                                         boolean refuseThrows) throws SQLException {
        var select = s.get("SELECT state FROM envelopes WHERE id = ?");
        select.setString(1, envelopeId);
        DeliveryState current;
        try (var rs = select.executeQuery()) {
            if (!rs.next()) {
                throw new ParleyException(ErrorCode.MESSAGE_NOT_FOUND, "message " + envelopeId + " does not exist");
            }
            current = DeliveryState.parse(rs.getString(1));
        }
        Transition transition = current.on(event);
        switch (transition) {
            case Transition.Moved moved -> {
                var update = s.get("UPDATE envelopes SET state = ? WHERE id = ?");
                update.setString(1, moved.to().wire());
                update.setString(2, envelopeId);
                update.executeUpdate();
                insertTimeline(s, envelopeId, moved.to(), at, event.detail());
            }
            case Transition.Unchanged unchanged -> insertTimeline(s, envelopeId, unchanged.from(), at, event.detail());
            case Transition.Refused refused -> {
                if (refuseThrows) {
                    throw new ParleyException(ErrorCode.INVALID_TRANSITION, refused.reason());
                }
            }
        }
        return transition;
    }

    static void insertTimeline(Statements s, String envelopeId, DeliveryState state, Instant at, String detail)
            throws SQLException {
        var insert = s.get("INSERT INTO timeline (envelope_id, at, state, detail) VALUES (?, ?, ?, ?)");
        insert.setString(1, envelopeId);
        insert.setLong(2, at.toEpochMilli());
        insert.setString(3, state.wire());
        insert.setString(4, detail);
        insert.executeUpdate();
    }

    static void insertEnvelope(Statements s, Envelope e) throws SQLException {
        PreparedStatement insert = s.get("INSERT INTO envelopes (" + Rows.ENVELOPE_COLUMNS
                + ", state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'accepted')");
        insert.setString(1, e.id());
        insert.setLong(2, e.seq());
        insert.setString(3, e.from().value());
        insert.setString(4, e.to().value());
        insert.setString(5, e.kind());
        Rows.setNullable(insert, 6, e.text());
        Rows.setNullable(insert, 7, e.data().map(d -> d.json()));
        Rows.setNullable(insert, 8, e.corrId());
        Rows.setNullable(insert, 9, e.threadId());
        Rows.setNullable(insert, 10, e.messageId());
        insert.setString(11, Rows.json(e.meta()));
        insert.setLong(12, e.createdAt().toEpochMilli());
        insert.setInt(13, e.trace().attempt());
        insert.setString(14, e.trace().route().wire());
        insert.setString(15, e.trace().policyVersion());
        Rows.setNullable(insert, 16, e.topic());
        insert.executeUpdate();
    }

    static void insertAudit(Statements s, AuditEntry a) throws SQLException {
        var insert = s.get("INSERT INTO audit (at, actor, action, target, decision, reason, envelope_id, policy_version)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
        insert.setLong(1, a.at().toEpochMilli());
        insert.setString(2, a.actor());
        insert.setString(3, a.action());
        insert.setString(4, a.target());
        insert.setString(5, a.decision().wire());
        insert.setString(6, a.reason());
        Rows.setNullable(insert, 7, a.envelopeId());
        insert.setString(8, a.policyVersion());
        insert.executeUpdate();
    }
}
