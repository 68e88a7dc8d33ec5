package dev.parley.store;

import dev.parley.core.AuditEntry;
import dev.parley.core.DeliveryEvent;
import dev.parley.core.DeliveryState;
import dev.parley.core.DeliveryStore;
import dev.parley.core.Envelope;
import dev.parley.core.FederationStore;
import dev.parley.core.Grant;
import dev.parley.core.Node;
import dev.parley.core.NodeId;
import dev.parley.core.Outgoing;
import dev.parley.core.RemoteStep;
import dev.parley.core.Subscription;
import dev.parley.core.Task;
import dev.parley.core.TaskCopy;
import dev.parley.core.TaskTap;
import dev.parley.core.TopicName;
import dev.parley.core.Transition;

import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** {@link FederationStore} on the hub's SQLite file: tables {@code relay}, {@code ingest_cursors}, and mirrored rows. */
public final class SqliteFederation implements FederationStore {
    private final Writer writer;
    private final ReadPool readers;
    private final List<TaskTap> taskTaps;

    SqliteFederation(Writer writer, ReadPool readers, List<TaskTap> taskTaps) {
        this.writer = writer;
        this.readers = readers;
        this.taskTaps = taskTaps;
    }

    @Override
    public void mirrorNode(Node node, String gateway) {
        writer.submit(tx -> {
            var known = tx.statements().get("SELECT 1 FROM nodes WHERE id = ?");
            known.setString(1, node.id().value());
            try (var rs = known.executeQuery()) {
                if (rs.next()) {
                    return null;
                }
            }
            Ledger.insertNode(tx.statements(), node, null, Optional.of(gateway));
            return null;
        });
    }

    @Override
    public void moveNode(NodeId node, Optional<String> to, String reason, AuditEntry audit) {
        writer.submit(tx -> {
            var s = tx.statements();
            Optional<String> was = Ledger.remoteOwner(s, node);
            var move = s.get("UPDATE nodes SET gateway = ?, token_hash = CASE WHEN ? IS NULL THEN token_hash END"
                    + " WHERE id = ?");
            move.setString(1, to.orElse(null));
            move.setString(2, to.orElse(null));
            move.setString(3, node.value());
            move.executeUpdate();
            if (to.isEmpty()) {
                takenOver(s, node);
            } else if (was.isEmpty()) {
                movedAway(tx, node, to.get(), reason, audit.at());
            } else {
                movedBetween(s, node, to.get(), audit.at());
            }
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    /** Its inbox here is its inbox now: nothing for it is owed to, or awaited from, its old owner. */
    private static void takenOver(Statements s, NodeId node) throws SQLException {
        var owed = s.get("DELETE FROM relay WHERE kind = 'envelope' AND envelope_id IN (" + InboxOrder.IDS + ")");
        owed.setString(1, node.value());
        owed.setString(2, node.value());
        owed.executeUpdate();
        var awaited = s.get("DELETE FROM schedule WHERE purpose = 'owner_ack' AND envelope_id IN (" + InboxOrder.IDS + ")");
        awaited.setString(1, node.value());
        awaited.setString(2, node.value());
        awaited.executeUpdate();
    }

    /**
     * What its inbox here holds undelivered: its new owner gets what this gateway's nodes sent
     * (this gateway speaks for them); the rest came from other gateways: dead-lettered here, and
     * each sender's gateway owed that step, with the reason.
     */
    private static void movedAway(Writer.Tx tx, NodeId node, String to, String reason, Instant at)
            throws SQLException {
        var s = tx.statements();
        // The hub's own notices have no nodes row: they are not this gateway's nodes' to forward.
        var undelivered = s.get("SELECT e.id, n.id IS NOT NULL AND n.gateway IS NULL, n.gateway FROM envelopes e"
                + " LEFT JOIN nodes n ON n.id = e.from_node WHERE e.to_node = ? AND e.delivered_at IS NULL"
                + " AND e.state IN ('accepted', 'retry_pending', 'incident') ORDER BY e.seq");
        undelivered.setString(1, node.value());
        List<Undelivered> found = new ArrayList<>();
        try (var rs = undelivered.executeQuery()) {
            while (rs.next()) {
                // From a node of the new owner: its own copy there is the node's inbox entry now.
                if (!to.equals(rs.getString(3))) {
                    found.add(new Undelivered(rs.getString(1), rs.getBoolean(2)));
                }
            }
        }
        var forward = s.get("INSERT INTO relay (gateway, kind, envelope_id, at) VALUES (?, 'envelope', ?, ?)");
        for (Undelivered envelope : found) {
            if (envelope.fromHere()) {
                forward.setString(1, to);
                forward.setString(2, envelope.id());
                forward.setLong(3, at.toEpochMilli());
                forward.executeUpdate();
            } else {
                Ledger.deadLetter(tx, envelope.id(), reason, 0, at, Optional.empty()); // its gateway is owed the step
            }
        }
    }

    /** An envelope in the inbox of a node that moved away, and whether a node of this gateway sent it. */
    private record Undelivered(String id, boolean fromHere) {
    }

    /** What is owed for it goes to its new owner, and what its old owner has not confirmed is published there now. */
    private static void movedBetween(Statements s, NodeId node, String to, Instant at) throws SQLException {
        var owed = s.get("UPDATE relay SET gateway = ? WHERE kind = 'envelope' AND envelope_id IN (" + InboxOrder.IDS + ")");
        owed.setString(1, to);
        owed.setString(2, node.value());
        owed.setString(3, node.value());
        owed.executeUpdate();
        // A check waiting for the stream (due at the end of time) is left to the relay.
        // The count of publications starts again: the new owner is not given up on for the old one's silence.
        var due = s.get("UPDATE schedule SET due_at = ?, attempt = 1 WHERE purpose = 'owner_ack' AND due_at < ?"
                + " AND envelope_id IN (" + InboxOrder.IDS + ")");
        due.setLong(1, at.toEpochMilli());
        due.setLong(2, Long.MAX_VALUE);
        due.setString(3, node.value());
        due.setString(4, node.value());
        due.executeUpdate();
    }

    @Override
    public void mirrorGrant(Grant grant) {
        writer.submit(tx -> {
            Ledger.insertGrant(tx.statements(), grant); // a grant seen again is the same grant
            return null;
        });
    }

    @Override
    public boolean dropGrant(String grantId) {
        return writer.submit(tx -> {
            var delete = tx.statements().get("DELETE FROM grants WHERE id = ?");
            delete.setString(1, grantId);
            return delete.executeUpdate() > 0;
        });
    }

    @Override
    public void mirrorSubscription(Subscription subscription) {
        writer.submit(tx -> {
            var insert = tx.statements().get("INSERT OR IGNORE INTO subscriptions (topic, node, created_at) VALUES (?, ?, ?)");
            insert.setString(1, subscription.topic().value());
            insert.setString(2, subscription.node().value());
            insert.setLong(3, subscription.createdAt().toEpochMilli());
            insert.executeUpdate();
            return null;
        });
    }

    @Override
    public void dropSubscription(TopicName topic, NodeId node) {
        writer.submit(tx -> {
            var delete = tx.statements().get("DELETE FROM subscriptions WHERE topic = ? AND node = ?");
            delete.setString(1, topic.value());
            delete.setString(2, node.value());
            delete.executeUpdate();
            return null;
        });
    }

    @Override
    public List<Outgoing> owed(long after, int limit) {
        return readers.read(s -> {
            var select = s.get("SELECT r.pos, r.gateway, r.kind, r.envelope_id, r.state, r.at, r.detail FROM relay r"
                    + " WHERE r.pos > ? ORDER BY r.pos LIMIT ?");
            select.setLong(1, after);
            select.setInt(2, limit);
            var envelope = s.get("SELECT " + Rows.ENVELOPE_COLUMNS + " FROM envelopes WHERE id = ?");
            List<Outgoing> out = new ArrayList<>();
            try (var rs = select.executeQuery()) {
                while (rs.next()) {
                    long pos = rs.getLong(1);
                    String gateway = rs.getString(2);
                    String ref = rs.getString(4);
                    if (rs.getString(3).equals("envelope")) {
                        envelope.setString(1, ref);
                        try (var e = envelope.executeQuery()) {
                            if (e.next()) {
                                out.add(new Outgoing.Mail(pos, gateway, Rows.envelope(e)));
                            }
                        }
                    } else {
                        out.add(new Outgoing.Ack(pos, gateway, new RemoteStep(ref, DeliveryState.parse(rs.getString(5)),
                                Instant.ofEpochMilli(rs.getLong(6)), rs.getString(7))));
                    }
                }
            }
            return out;
        });
    }

    @Override
    public void relayed(long pos, Instant at, Duration window) {
        writer.submit(tx -> {
            var s = tx.statements();
            // An owner that confirmed already (its step can overtake this commit) needs no check.
            var check = s.get("INSERT INTO schedule (envelope_id, purpose, due_at, attempt)"
                    + " SELECT r.envelope_id, 'owner_ack', ? + ?, 1 FROM relay r WHERE r.pos <= ? AND r.kind = 'envelope'"
                    + " AND NOT EXISTS (SELECT 1 FROM timeline t WHERE t.envelope_id = r.envelope_id"
                    + " AND t.state = 'accepted' AND t.detail LIKE 'accepted by %')"
                    + " ON CONFLICT (envelope_id, purpose) DO UPDATE SET due_at = ? + ? * (1 << (schedule.attempt - 1))");
            check.setLong(1, at.toEpochMilli());
            check.setLong(2, window.toMillis());
            check.setLong(3, pos);
            check.setLong(4, at.toEpochMilli());
            check.setLong(5, window.toMillis());
            check.executeUpdate();
            var delete = s.get("DELETE FROM relay WHERE pos <= ?");
            delete.setLong(1, pos);
            delete.executeUpdate();
            return null;
        });
    }

    @Override
    public boolean republish(String envelopeId, int publication) {
        return writer.submit(tx -> {
            var s = tx.statements();
            // Not due again until the stream has the new publication (relayed sets the time).
            var claim = s.get("UPDATE schedule SET attempt = ?, due_at = ? WHERE envelope_id = ? AND purpose = 'owner_ack'"
                    + " AND attempt = ?");
            claim.setInt(1, publication);
            claim.setLong(2, Long.MAX_VALUE);
            claim.setString(3, envelopeId);
            claim.setInt(4, publication - 1);
            if (claim.executeUpdate() == 0) {
                return false;
            }
            var mark = s.get("INSERT INTO relay (gateway, kind, envelope_id, at) SELECT n.gateway, 'envelope', e.id,"
                    + " e.created_at FROM envelopes e JOIN nodes n ON n.id = e.to_node WHERE e.id = ? AND n.gateway IS NOT NULL");
            mark.setString(1, envelopeId);
            mark.executeUpdate();
            return true;
        });
    }

    @Override
    public boolean giveUp(String envelopeId, int publications, String reason, Instant at, Optional<Envelope> notice) {
        return writer.submit(tx -> {
            var claim = tx.statements().get("DELETE FROM schedule WHERE envelope_id = ? AND purpose = 'owner_ack'"
                    + " AND attempt = ?");
            claim.setString(1, envelopeId);
            claim.setInt(2, publications);
            return claim.executeUpdate() > 0 && Ledger.deadLetter(tx, envelopeId, reason, publications, at, notice);
        });
    }

    @Override
    public long owedCount() {
        return readers.read(s -> {
            try (var rs = s.get("SELECT count(*) FROM relay").executeQuery()) {
                return rs.next() ? rs.getLong(1) : 0L;
            }
        });
    }

    @Override
    public Map<String, Long> cursors() {
        return readers.read(s -> {
            Map<String, Long> out = new LinkedHashMap<>();
            try (var rs = s.get("SELECT source, stream_seq FROM ingest_cursors ORDER BY source").executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getLong(2));
                }
            }
            return out;
        });
    }

    @Override
    public List<Boolean> take(String source, List<Inbound> batch) {
        if (batch.isEmpty()) {
            return List.of();
        }
        return writer.submit(tx -> {
            List<Boolean> changed = new ArrayList<>(batch.size());
            for (Inbound record : batch) {
                changed.add(switch (record) {
                    case Inbound.Mail mail -> ingest(tx, mail);
                    case Inbound.Step step -> fold(tx.statements(), source, step.step());
                    case Inbound.Skip skip -> {
                        Ledger.insertAudit(tx, skip.audit());
                        yield false;
                    }
                    case Inbound.Refused refused -> {
                        refuse(tx, refused.envelope(), refused.audit());
                        yield false;
                    }
                });
            }
            Inbound last = batch.getLast();
            advance(tx.statements(), source, last.streamSeq(), switch (last) {
                case Inbound.Mail mail -> mail.audit().at();
                case Inbound.Step step -> step.step().at();
                case Inbound.Skip skip -> skip.audit().at();
                case Inbound.Refused refused -> refused.audit().at();
            });
            return changed;
        });
    }

    /** An envelope refused here: audited, and its sender's gateway owed a {@code failed} step with the reason. */
    private static void refuse(Writer.Tx tx, Envelope envelope, AuditEntry audit) throws SQLException {
        Ledger.insertAudit(tx, audit);
        Ledger.oweStep(tx.statements(), envelope.id(), envelope.from().value(), DeliveryState.FAILED, audit.at(),
                "refused: " + audit.reason());
    }

    private boolean ingest(Writer.Tx tx, Inbound.Mail mail) throws SQLException {
        var known = tx.statements().get("SELECT 1 FROM envelopes WHERE id = ?");
        known.setString(1, mail.envelope().id());
        try (var rs = known.executeQuery()) {
            if (rs.next()) {
                // Taken before: published again because its accepted step did not reach the sender
                // (or not yet). Owe it again; the sender folds a step it has once.
                Ledger.oweStep(tx.statements(), mail.envelope().id(), mail.envelope().from().value(),
                        DeliveryState.ACCEPTED, mail.audit().at(), "accepted");
                return false;
            }
        }
        if (mail.task().orElse(null) instanceof TaskCopy.Assigned assigned
                && SqliteTasks.read(tx.statements(), assigned.task().id()).isPresent()) {
            // Judged when no such task was here; one came in meanwhile (another source's, or a local one).
            refuse(tx, mail.envelope(), new AuditEntry(mail.audit().at(), mail.audit().actor(),
                    mail.audit().action(), mail.audit().target(), AuditEntry.Decision.DENY, "task "
                    + assigned.task().id() + " exists here already", Optional.of(mail.envelope().id()),
                    mail.audit().policyVersion()));
            return false;
        }
        // The messageId was the sender's gateway's to dedupe; here the envelope id is the key.
        Envelope appended = Ledger.append(tx, mail.envelope().withMessageId(Optional.empty()));
        Ledger.oweStep(tx.statements(), appended.id(), appended.from().value(), DeliveryState.ACCEPTED,
                mail.audit().at(), "accepted");
        Ledger.insertAudit(tx, mail.audit());
        if (mail.task().isPresent()) {
            copy(tx, mail.task().get(), appended, mail.audit());
        }
        return true;
    }

    /** What a task envelope taken in does to the copy of its task here, committed with it. */
    private void copy(Writer.Tx tx, TaskCopy copy, Envelope notice, AuditEntry taken) throws SQLException {
        Statements s = tx.statements();
        switch (copy) {
            case TaskCopy.Assigned assigned -> { // none of this id is here: see ingest
                SqliteTasks.insert(s, assigned.task());
                SqliteTasks.tap(tx, taskTaps, assigned.task(), notice);
            }
            case TaskCopy.Moved moved -> {
                String id = notice.corrId().orElseThrow();
                Optional<Task> current = SqliteTasks.read(s, id);
                Optional<Task> next = current.flatMap(moved::applyTo);
                if (next.isPresent()) {
                    SqliteTasks.update(s, next.get());
                    SqliteTasks.tap(tx, taskTaps, next.get(), notice);
                } else {
                    Ledger.insertAudit(tx, new AuditEntry(taken.at(), taken.actor(), "task.copy", "task:" + id,
                            AuditEntry.Decision.DENY, notice.from() + "'s " + moved.event().name() + " not taken: task "
                            + id + current.map(t -> " is " + t.state().wire()).orElse(" is not") + " here",
                            Optional.of(notice.id()), taken.policyVersion()));
                }
            }
        }
    }

    private static boolean fold(Statements s, String source, RemoteStep step) throws SQLException {
        String detail = step.state() == DeliveryState.ACCEPTED ? "accepted by " + source
                : "on " + source + ": " + step.detail();
        // A step published twice (past the stream's duplicate window) is folded once.
        var seen = s.get("SELECT 1 FROM timeline WHERE envelope_id = ? AND state = ? AND detail = ?");
        seen.setString(1, step.ref());
        seen.setString(2, step.state().wire());
        seen.setString(3, detail);
        try (var rs = seen.executeQuery()) {
            if (rs.next()) {
                return false;
            }
        }
        if (step.state() == DeliveryState.ACCEPTED) {
            Ledger.unschedule(s, step.ref(), DeliveryStore.Purpose.OWNER_ACK); // the owner has it
        }
        if (step.state() == DeliveryState.DELIVERED) {
            var select = s.get("SELECT " + Rows.ENVELOPE_COLUMNS + " FROM envelopes WHERE id = ?");
            select.setString(1, step.ref());
            try (var rs = select.executeQuery()) {
                if (!rs.next()) {
                    return false;
                }
                // recorded, not announced: the owner's hub, which delivered it, tells of the delivery
                Ledger.markDelivered(s, List.of(Rows.envelope(rs)), step.at(), Optional.empty());
            }
            return true;
        }
        Optional<DeliveryEvent> event = step.event();
        if (event.isEmpty()) {
            Ledger.insertTimeline(s, step.ref(), step.state(), step.at(), detail);
            return true;
        }
        return switch (Ledger.applyEvent(s, step.ref(), event.get(), step.at(), false, detail)) {
            case Transition.Moved moved -> true;
            case Transition.Unchanged unchanged -> false;
            case Transition.Refused refused -> false;
        };
    }

    private static void advance(Statements s, String source, long streamSeq, Instant at) throws SQLException {
        var upsert = s.get("INSERT INTO ingest_cursors (source, stream_seq, updated_at) VALUES (?, ?, ?)"
                + " ON CONFLICT (source) DO UPDATE SET stream_seq = max(stream_seq, excluded.stream_seq),"
                + " updated_at = excluded.updated_at");
        upsert.setString(1, source);
        upsert.setLong(2, streamSeq);
        upsert.setLong(3, at.toEpochMilli());
        upsert.executeUpdate();
    }
}
