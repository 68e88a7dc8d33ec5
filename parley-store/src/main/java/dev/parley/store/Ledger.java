package dev.parley.store;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import dev.parley.core.Appended;
import dev.parley.core.AuditEntry;
import dev.parley.core.DeliveryEvent;
import dev.parley.core.DeliveryState;
import dev.parley.core.DeliveryStore;
import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.Grant;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Transition;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The writes every part of the store shares, run inside a writer job: appending an
 * envelope to an inbox, moving an envelope through the state machine, the audit log.
 */
final class Ledger {
    /**
     * The states a delivery moves on from, taken from the state machine so that the SQL
     * below cannot disagree with it.
     */
    private static final String DELIVERABLE_STATES = Arrays.stream(DeliveryState.values())
            .filter(s -> s.on(new DeliveryEvent.Delivered("stream")) instanceof Transition.Moved)
            .map(s -> "'" + s.wire() + "'")
            .collect(Collectors.joining(", "));

    /**
     * Marks the envelopes of a JSON array of {@code [id, at]} pairs delivered. Built once: a statement's
     * text is its key among the prepared ones, and every marks job would otherwise build it again.
     */
    private static final String MARK_DELIVERED = "UPDATE envelopes SET delivered_at = m.at, state = CASE WHEN state IN ("
            + DELIVERABLE_STATES + ") THEN 'delivered' ELSE state END"
            + " FROM (SELECT value ->> 0 AS id, value ->> 1 AS at FROM json_each(?)) AS m"
            + " WHERE envelopes.id = m.id AND envelopes.delivered_at IS NULL RETURNING envelopes.id";

    /** {@link #MARK_DELIVERED} for the seqs of one inbox from the third parameter to the fourth. */
    private static final String MARK_SEQS_DELIVERED = "UPDATE envelopes SET delivered_at = ?1, state = CASE WHEN state IN ("
            + DELIVERABLE_STATES + ") THEN 'delivered' ELSE state END"
            + " WHERE to_node = ?2 AND seq BETWEEN ?3 AND ?4 AND delivered_at IS NULL RETURNING id";

    /** States after which nothing more is owed to an envelope: its scheduled work is dropped. */
    private static final Set<DeliveryState> SETTLED = EnumSet.of(DeliveryState.PROCESSED, DeliveryState.REPLIED,
            DeliveryState.FAILED, DeliveryState.DEAD_LETTERED);

    /** {@link #SETTLED} as an SQL list. */
    static final String SETTLED_STATES = SETTLED.stream().map(s -> "'" + s.wire() + "'")
            .collect(Collectors.joining(", "));

    /**
     * The length from which a mark is taken for a stream's page: marked by its seqs when they are
     * {@link #consecutive}, else probed by {@link #markedAlready} first. Live frames, mostly
     * undelivered and a few at a time, go straight into the one statement of every mark.
     */
    private static final int PAGE_FROM = 32;

    private Ledger() {
    }

    static boolean settled(DeliveryState state) {
        return SETTLED.contains(state);
    }

    /** Envelopes delivered at one instant and, when given, how long until the check that they were acked. */
    record Mark(List<Envelope> envelopes, Instant at, Optional<Duration> redeliverAfter) {
    }

    /**
     * Marks envelopes delivered (first delivery, or again after a redelivery) and, with
     * {@code redeliverAfter}, schedules the check that they were acked in time. Returns those it
     * marked (not those marked already), which the caller announces ({@link Writer.Tx#delivered}).
     */
    static List<Envelope> markDelivered(Statements statements, List<Envelope> delivered, Instant at,
                                        Optional<Duration> redeliverAfter) throws SQLException {
        return markDelivered(statements, List.of(new Mark(delivered, at, redeliverAfter))).getFirst();
    }

    /**
     * {@link #markDelivered(Statements, List, Instant, Optional)} for many marks (every stream's
     * since the last job): a stream's page of consecutive seqs by those seqs, the rest in one
     * statement, however many. Each envelope is marked at the instant of the first mark that
     * lists it, the pages before the rest. Returns, for each mark, the envelopes it marked.
     */
    static List<List<Envelope>> markDelivered(Statements statements, List<Mark> marks) throws SQLException {
        List<List<Envelope>> marked = new ArrayList<>(marks.size());
        Map<String, Mark> first = new HashMap<>();
        StringBuilder pairs = new StringBuilder("[");
        for (Mark mark : marks) {
            List<Envelope> ofMark = new ArrayList<>();
            marked.add(ofMark);
            if (consecutive(mark.envelopes())) {
                markSeqs(statements, mark, ofMark);
                continue;
            }
            if (mark.envelopes().isEmpty() || markedAlready(statements, mark.envelopes())) {
                continue;
            }
            for (Envelope envelope : mark.envelopes()) {
                if (first.putIfAbsent(envelope.id(), mark) == null) {
                    pair(pairs, envelope.id(), mark.at().toEpochMilli());
                }
            }
        }
        if (!first.isEmpty()) {
            var update = statements.get(MARK_DELIVERED);
            update.setString(1, pairs.append(']').toString());
            Set<String> changed = firstColumn(update);
            for (int i = 0; i < marks.size() && !changed.isEmpty(); i++) {
                Mark mark = marks.get(i);
                for (Envelope envelope : mark.envelopes()) {
                    if (first.get(envelope.id()) == mark && changed.remove(envelope.id())) { // once, for the first mark
                        marked.get(i).add(envelope);
                    }
                }
            }
        }
        oweAcks(statements, marks, marked);
        for (int i = 0; i < marks.size(); i++) {
            Optional<Duration> redeliverAfter = marks.get(i).redeliverAfter();
            if (redeliverAfter.isPresent()) {
                for (Envelope envelope : marked.get(i)) {
                    schedule(statements, envelope.id(), DeliveryStore.Purpose.REDELIVER,
                            marks.get(i).at().plus(redeliverAfter.get()), envelope.trace().attempt() + 1);
                }
            }
        }
        return marked;
    }

    /**
     * Whether a mark is a stream's page: at least {@link #PAGE_FROM} envelopes of one inbox, each
     * seq one past the one before. Then they are every envelope of the inbox between the first
     * and the last seq, and the update can find them by seq on {@code envelopes_undelivered},
     * in order, instead of by id across the table: with the acks owed below, the writer's time
     * for a catch-up's first marks halved (BENCHMARKS.md, "Issue 15, stop 48").
     */
    private static boolean consecutive(List<Envelope> envelopes) {
        if (envelopes.size() < PAGE_FROM) {
            return false;
        }
        NodeId inbox = envelopes.getFirst().to();
        long seq = envelopes.getFirst().seq();
        for (Envelope envelope : envelopes) {
            if (!envelope.to().equals(inbox) || envelope.seq() != seq++) {
                return false;
            }
        }
        return true;
    }

    /** Marks a {@link #consecutive} page delivered by its seqs, adding to {@code marked} those it changed. */
    private static void markSeqs(Statements statements, Mark mark, List<Envelope> marked) throws SQLException {
        var update = statements.get(MARK_SEQS_DELIVERED);
        update.setLong(1, mark.at().toEpochMilli());
        update.setString(2, mark.envelopes().getFirst().to().value());
        update.setLong(3, mark.envelopes().getFirst().seq());
        update.setLong(4, mark.envelopes().getLast().seq());
        Set<String> changed = firstColumn(update);
        for (Envelope envelope : mark.envelopes()) {
            if (changed.contains(envelope.id())) {
                marked.add(envelope);
            }
        }
    }

    /**
     * The relay steps owed for envelopes just marked delivered: an ack for the gateway that
     * owns each sender, where another gateway does. One lookup of the job's senders decides;
     * most jobs owe nothing and run no insert (a join of every marked envelope to its row and
     * its sender was a fifth of a catch-up's first mark).
     */
    private static void oweAcks(Statements statements, List<Mark> marks, List<List<Envelope>> marked)
            throws SQLException {
        Set<NodeId> senders = new HashSet<>();
        marked.forEach(envelopes -> envelopes.forEach(envelope -> senders.add(envelope.from())));
        if (senders.isEmpty()) {
            return;
        }
        var elsewhere = statements.get("SELECT id FROM nodes WHERE gateway IS NOT NULL"
                + " AND id IN (SELECT value FROM json_each(?))");
        elsewhere.setString(1, Rows.jsonArray(senders, NodeId::value));
        Set<String> remote = firstColumn(elsewhere);
        if (remote.isEmpty()) {
            return;
        }
        StringBuilder owed = new StringBuilder("[");
        for (int i = 0; i < marks.size(); i++) {
            for (Envelope envelope : marked.get(i)) {
                if (remote.contains(envelope.from().value())) {
                    pair(owed, envelope.id(), marks.get(i).at().toEpochMilli());
                }
            }
        }
        var owe = statements.get("INSERT INTO relay (gateway, kind, envelope_id, state, at, detail)"
                + " SELECT n.gateway, 'ack', e.id, ?1, j.value ->> 1, 'delivered' FROM json_each(?2) j"
                + " JOIN envelopes e ON e.id = j.value ->> 0 JOIN nodes n ON n.id = e.from_node"
                + " WHERE n.gateway IS NOT NULL ORDER BY j.key");
        owe.setString(1, DeliveryState.DELIVERED.wire());
        owe.setString(2, owed.append(']').toString());
        owe.executeUpdate();
    }

    /** The text of the first column of each row {@code query} returns. */
    private static Set<String> firstColumn(PreparedStatement query) throws SQLException {
        Set<String> values = new HashSet<>();
        try (var rs = query.executeQuery()) {
            while (rs.next()) {
                values.add(rs.getString(1));
            }
        }
        return values;
    }

    /** Appends {@code ["text",number]} to a JSON array being written, for {@code json_each} to take apart. */
    private static void pair(StringBuilder array, String text, long number) {
        array.append(array.length() > 1 ? ",[\"" : "[\"");
        JsonStringEncoder.getInstance().quoteAsString(text, array);
        array.append("\",").append(number).append(']');
    }

    /**
     * Whether every envelope of a long list of one inbox (a stream's page from the store) is
     * delivered already: one probe of {@code envelopes_undelivered} over its seqs. Without it a
     * replay of delivered history made the update look up and fetch every row of every page
     * to change nothing (a fifth of the CPU samples of {@code bench replay}). Short lists (live
     * frames, mostly undelivered) go straight to the update.
     */
    private static boolean markedAlready(Statements statements, List<Envelope> delivered) throws SQLException {
        if (delivered.size() < PAGE_FROM) {
            return false;
        }
        NodeId inbox = delivered.getFirst().to();
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        for (Envelope envelope : delivered) {
            if (!envelope.to().equals(inbox)) {
                return false;
            }
            first = Math.min(first, envelope.seq());
            last = Math.max(last, envelope.seq());
        }
        var probe = statements.get("SELECT 1 FROM envelopes INDEXED BY envelopes_undelivered"
                + " WHERE to_node = ? AND seq BETWEEN ? AND ? AND delivered_at IS NULL LIMIT 1");
        probe.setString(1, inbox.value());
        probe.setLong(2, first);
        probe.setLong(3, last);
        try (var rs = probe.executeQuery()) {
            return !rs.next();
        }
    }

    /**
     * Appends {@code draft} to its inbox with the next seq; it is announced after the commit.
     * A target reached by webhook gets its first push scheduled in the same transaction, so
     * every path into an inbox (sends, replies, topics, tasks, notices) is pushed alike.
     */
    static Envelope append(Writer.Tx tx, Envelope draft) throws SQLException {
        return place(tx, draft, Optional.empty()).envelope();
    }

    /** An appended envelope and the gateway that owns its receiver when another gateway does. */
    private record Placed(Envelope envelope, Optional<String> remoteOwner) {
    }

    /**
     * {@link #append}, telling also where the envelope is relayed. One lookup says whether the
     * receiver is pushed to by webhook and whether another gateway owns it; the rows that follow
     * from either are written only when they are owed. {@code audit}, when given, is written in
     * the envelope's row ({@link #UNCOPIED_AUDIT}).
     */
    private static Placed place(Writer.Tx tx, Envelope draft, Optional<AuditEntry> audit) throws SQLException {
        Envelope envelope = draft.withSeq(tx.nextSeq(draft.to()));
        insertEnvelope(tx, envelope, audit);
        var receiver = tx.statements().get("SELECT (SELECT gateway FROM nodes WHERE id = ?1), EXISTS (SELECT 1 FROM"
                + " delivery_policies WHERE node_id = ?1 AND webhook_url IS NOT NULL)");
        receiver.setString(1, envelope.to().value());
        Optional<String> owner;
        boolean pushed;
        try (var rs = receiver.executeQuery()) {
            rs.next();
            owner = Optional.ofNullable(rs.getString(1));
            pushed = rs.getBoolean(2);
        }
        long at = envelope.createdAt().toEpochMilli();
        if (pushed) {
            var push = tx.statements().get("INSERT INTO schedule (envelope_id, purpose, due_at, attempt) VALUES (?, 'push', ?, 1)");
            push.setString(1, envelope.id());
            push.setLong(2, at);
            push.executeUpdate();
        }
        if (owner.isPresent()) {
            var relay = tx.statements().get("INSERT INTO relay (gateway, kind, envelope_id, at) VALUES (?, 'envelope', ?, ?)");
            relay.setString(1, owner.get());
            relay.setString(2, envelope.id());
            relay.setLong(3, at);
            relay.executeUpdate();
        }
        tx.announce(envelope);
        return new Placed(envelope, owner);
    }

    /**
     * A node's send, as {@link dev.parley.core.EventStore#append} describes it: appended with
     * its audit entry unless the sender already sent its messageId (then the first comes
     * back as a duplicate), moving the envelope it answers to replied, with its reply deadline.
     * The entry of a send allowed is written in the envelope's row, the others to the audit table.
     */
    static Appended send(Writer.Tx tx, Envelope draft, AuditEntry audit, Optional<String> answers,
                         Optional<Instant> replyBy) throws SQLException {
        Optional<Envelope> earlier = draft.messageId().isPresent() ? byMessageId(tx.statements(), draft) : Optional.empty();
        if (earlier.isPresent()) {
            return new Appended(earlier.get(), true, relayed(remoteOwner(tx.statements(), earlier.get().to())));
        }
        if (answers.isPresent()) {
            applyEvent(tx.statements(), answers.get(), new DeliveryEvent.Replied(draft.id()), draft.createdAt(), true);
        }
        boolean inRow = audit.decision() == AuditEntry.Decision.ALLOW && audit.envelopeId().equals(Optional.of(draft.id()));
        Placed placed = place(tx, draft, inRow ? Optional.of(audit) : Optional.empty());
        if (replyBy.isPresent()) {
            schedule(tx.statements(), placed.envelope().id(), DeliveryStore.Purpose.DEADLINE, replyBy.get(), 0);
        }
        if (!inRow) {
            insertAudit(tx, audit);
        }
        return new Appended(placed.envelope(), false, relayed(placed.remoteOwner()));
    }

    /** Where an envelope for a node that {@code remoteOwner} owns is relayed to; empty for a node of this hub. */
    private static Optional<Appended.Relayed> relayed(Optional<String> remoteOwner) {
        return remoteOwner.map(gateway -> new Appended.Relayed(gateway, false));
    }

    /** The gateway that owns {@code node} when another gateway does (federation); empty for a node of this hub. */
    static Optional<String> remoteOwner(Statements s, dev.parley.core.NodeId node) throws SQLException {
        var select = s.get("SELECT gateway FROM nodes WHERE id = ?");
        select.setString(1, node.value());
        try (var rs = select.executeQuery()) {
            return rs.next() ? Optional.ofNullable(rs.getString(1)) : Optional.empty();
        }
    }

    /**
     * Owes the gateway that owns {@code sender} (when another gateway does) a step of an
     * envelope it sent here, so that its timeline shows what became of it on this gateway.
     */
    static void oweStep(Statements s, String envelopeId, String sender, DeliveryState state, Instant at, String detail)
            throws SQLException {
        var insert = s.get("INSERT INTO relay (gateway, kind, envelope_id, state, at, detail)"
                + " SELECT gateway, 'ack', ?, ?, ?, ? FROM nodes WHERE id = ? AND gateway IS NOT NULL");
        insert.setString(1, envelopeId);
        insert.setString(2, state.wire());
        insert.setLong(3, at.toEpochMilli());
        insert.setString(4, detail);
        insert.setString(5, sender);
        insert.executeUpdate();
    }

    /**
     * Moves an envelope to the dead letters with its reason and, when given, appends the notice
     * to its sender; returns whether it moved (an envelope settled meanwhile, acked or already
     * dead, stays as it is).
     */
    static boolean deadLetter(Writer.Tx tx, String envelopeId, String reason, int attempts, Instant at,
                              Optional<Envelope> notice) throws SQLException {
        Transition transition = applyEvent(tx.statements(), envelopeId, new DeliveryEvent.DeadLettered(reason), at, false);
        if (!(transition instanceof Transition.Moved)) {
            return false;
        }
        var insert = tx.statements().get("INSERT OR REPLACE INTO dead_letters (envelope_id, node, reason, attempts, at)"
                + " SELECT id, to_node, ?, ?, ? FROM envelopes WHERE id = ?");
        insert.setString(1, reason);
        insert.setInt(2, attempts);
        insert.setLong(3, at.toEpochMilli());
        insert.setString(4, envelopeId);
        insert.executeUpdate();
        if (notice.isPresent()) {
            append(tx, notice.get());
        }
        return true;
    }

    /** Sets (or moves) one piece of scheduled work. */
    static void schedule(Statements s, String envelopeId, DeliveryStore.Purpose purpose, Instant due, int attempt)
            throws SQLException {
        var insert = s.get("INSERT OR REPLACE INTO schedule (envelope_id, purpose, due_at, attempt) VALUES (?, ?, ?, ?)");
        insert.setString(1, envelopeId);
        insert.setString(2, purpose(purpose));
        insert.setLong(3, due.toEpochMilli());
        insert.setInt(4, attempt);
        insert.executeUpdate();
    }

    /** A purpose as the schedule stores it. */
    static String purpose(DeliveryStore.Purpose purpose) {
        return purpose.name().toLowerCase(java.util.Locale.ROOT);
    }

    static void unschedule(Statements s, String envelopeId, DeliveryStore.Purpose purpose) throws SQLException {
        var delete = s.get("DELETE FROM schedule WHERE envelope_id = ? AND purpose = ?");
        delete.setString(1, envelopeId);
        delete.setString(2, purpose(purpose));
        delete.executeUpdate();
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
        return applyEvent(s, envelopeId, event, at, refuseThrows, event.detail());
    }

    /** {@link #applyEvent(Statements, String, DeliveryEvent, Instant, boolean)} with the timeline's detail given. */
    static Transition applyEvent(Statements s, String envelopeId, DeliveryEvent event, Instant at,
                                 boolean refuseThrows, String detail) throws SQLException {
        var select = s.get("SELECT state, from_node FROM envelopes WHERE id = ?");
        select.setString(1, envelopeId);
        DeliveryState current;
        String sender;
        try (var rs = select.executeQuery()) {
            if (!rs.next()) {
                throw new ParleyException(ErrorCode.MESSAGE_NOT_FOUND, "message " + envelopeId + " does not exist");
            }
            current = DeliveryState.parse(rs.getString(1));
            sender = rs.getString(2);
        }
        Transition transition = current.on(event);
        switch (transition) {
            case Transition.Moved moved -> {
                var update = s.get("UPDATE envelopes SET state = ? WHERE id = ?");
                update.setString(1, moved.to().wire());
                update.setString(2, envelopeId);
                update.executeUpdate();
                insertTimeline(s, envelopeId, moved.to(), at, detail);
                oweStep(s, envelopeId, sender, moved.to(), at, detail);
                if (SETTLED.contains(moved.to())) {
                    var forget = s.get("DELETE FROM schedule WHERE envelope_id = ?");
                    forget.setString(1, envelopeId);
                    forget.executeUpdate();
                    var unclaim = s.get("DELETE FROM claims WHERE envelope_id = ?");
                    unclaim.setString(1, envelopeId);
                    unclaim.executeUpdate();
                }
            }
            case Transition.Unchanged unchanged -> insertTimeline(s, envelopeId, unchanged.from(), at, detail);
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

    private static void insertEnvelope(Writer.Tx tx, Envelope e, Optional<AuditEntry> audit) throws SQLException {
        PreparedStatement insert = tx.statements().get("INSERT INTO envelopes (" + Rows.ENVELOPE_COLUMNS
                + ", state, audit_id, audit_at, audit_actor, audit_action, audit_target, audit_reason, audit_policy_version,"
                + " audit_rule) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'accepted',"
                + " ?, ?, ?, ?, ?, ?, ?, ?)");
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
        Rows.setNullable(insert, 17, e.trace().rule());
        insert.setString(18, e.trace().context().stored());
        if (audit.isPresent()) {
            AuditEntry a = audit.get();
            insert.setLong(19, tx.nextAuditId());
            insert.setLong(20, a.at().toEpochMilli());
            insert.setString(21, a.actor());
            insert.setString(22, a.action());
            insert.setString(23, a.target());
            insert.setString(24, a.reason());
            insert.setString(25, a.policyVersion());
            Rows.setNullable(insert, 26, a.rule());
        } else {
            for (int i = 19; i <= 26; i++) {
                insert.setNull(i, java.sql.Types.NULL);
            }
        }
        insert.executeUpdate();
    }

    /**
     * Inserts a node row; throws {@link ErrorCode#NODE_EXISTS} when the id is taken (deleted
     * ids included). {@code gateway} names the owner of a node mirrored from another gateway.
     */
    static void insertNode(Statements s, dev.parley.core.Node node, String tokenHash, Optional<String> gateway)
            throws SQLException {
        var exists = s.get("SELECT 1 FROM nodes WHERE id = ?");
        exists.setString(1, node.id().value());
        try (var rs = exists.executeQuery()) {
            if (rs.next()) {
                throw new ParleyException(ErrorCode.NODE_EXISTS, "node " + node.id() + " already exists");
            }
        }
        var insert = s.get("INSERT INTO nodes (id, kind, parent, depth, labels, token_hash, created_at, gateway) "
                + "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
        insert.setString(1, node.id().value());
        insert.setString(2, node.kind().wire());
        Rows.setNullable(insert, 3, node.parent());
        insert.setInt(4, node.depth());
        String labels = Rows.json(node.labels());
        insert.setString(5, labels == null ? "{}" : labels);
        insert.setString(6, tokenHash);
        insert.setLong(7, node.createdAt().toEpochMilli());
        Rows.setNullable(insert, 8, gateway);
        insert.executeUpdate();
    }

    /** Inserts a grant; one already there (same id: the same grant) is left as it is. */
    static void insertGrant(Statements s, Grant grant) throws SQLException {
        var insert = s.get("INSERT OR IGNORE INTO grants (id, from_node, to_node, expires_at, note, created_at) VALUES (?, ?, ?, ?, ?, ?)");
        insert.setString(1, grant.id());
        insert.setString(2, grant.from().value());
        insert.setString(3, grant.to().wire());
        Rows.setNullableMillis(insert, 4, grant.expiresAt());
        insert.setString(5, grant.note());
        insert.setLong(6, grant.createdAt().toEpochMilli());
        insert.executeUpdate();
    }

    /** The audit log's columns, in the order {@link SqliteStore#audit} reads them. */
    static final String AUDIT_COLUMNS = "id, at, actor, action, target, decision, reason, envelope_id, policy_version, rule";

    /**
     * The entries of allowed sends not copied into the audit table yet, as audit rows: those of
     * the envelopes past the fold's mark. Few (what came in since the last fold), and found
     * by position, the envelopes' rowid.
     */
    static final String UNCOPIED_AUDIT = "SELECT audit_id AS id, audit_at AS at, audit_actor AS actor,"
            + " audit_action AS action, audit_target AS target, 'allow' AS decision, audit_reason AS reason,"
            + " id AS envelope_id, audit_policy_version AS policy_version, audit_rule AS rule FROM envelopes"
            + " WHERE pos > (SELECT pos FROM envelopes_folded) AND audit_id IS NOT NULL";

    /** Writes an entry unfolded: outside the by-node and by-rule indexes until {@link #fold} takes it in. */
    static void insertAudit(Writer.Tx tx, AuditEntry a) throws SQLException {
        var insert = tx.statements().get("INSERT INTO audit (" + AUDIT_COLUMNS + ", folded)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)");
        insert.setLong(1, tx.nextAuditId());
        insert.setLong(2, a.at().toEpochMilli());
        insert.setString(3, a.actor());
        insert.setString(4, a.action());
        insert.setString(5, a.target());
        insert.setString(6, a.decision().wire());
        insert.setString(7, a.reason());
        Rows.setNullable(insert, 8, a.envelopeId());
        insert.setString(9, a.policyVersion());
        Rows.setNullable(insert, 10, a.rule());
        insert.executeUpdate();
    }

    /** The end of a fold: the mark of the copied audit entries moves past every envelope written. */
    static final String MOVE_FOLD_MARK = "UPDATE envelopes_folded SET pos = (SELECT coalesce(max(pos), 0) FROM envelopes)";

    /**
     * The writer's fold, in bulk: copies the entries of allowed sends from their envelopes' rows
     * into the audit table, already folded, moves the mark past them, and takes every unfolded
     * audit entry into the by-rule index and the side indexes' by-node index ({@link SideIndexes}).
     * A page of the by-rule index is written once per fold, not once per commit that touched it.
     *
     * <p>The entries are copied in their envelopes' order, which is their ids' (the writer draws
     * both in step), so each goes in at the audit table's end; asking for id order made SQLite
     * sort the rows first, a fifth of the copy's time.
     */
    static Void fold(Writer.Tx tx) throws SQLException {
        var s = tx.statements();
        s.get("INSERT INTO audit (" + AUDIT_COLUMNS + ", folded) SELECT " + AUDIT_COLUMNS + ", 1 FROM ("
                + UNCOPIED_AUDIT + ")").executeUpdate();
        s.get(MOVE_FOLD_MARK).executeUpdate();
        s.get("UPDATE audit SET folded = 1 WHERE folded = 0").executeUpdate();
        return null;
    }
}
