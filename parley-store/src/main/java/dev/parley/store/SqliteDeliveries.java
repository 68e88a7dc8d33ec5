package dev.parley.store;

import dev.parley.core.AuditEntry;
import dev.parley.core.DeadLetter;
import dev.parley.core.DeliveryEvent;
import dev.parley.core.DeliveryPolicy;
import dev.parley.core.DeliveryState;
import dev.parley.core.DeliveryStore;
import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.EventStore;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.RetryPolicy;
import dev.parley.core.Sealer;
import dev.parley.core.Transition;
import dev.parley.core.Webhook;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import java.util.logging.Logger;

/** Delivery policies, the persisted schedule and the dead-letter queue, on the hub's SQLite file. */
public final class SqliteDeliveries implements DeliveryStore {
    private static final Logger LOG = Logger.getLogger(SqliteDeliveries.class.getName());
    /** Unreadable entries said once each, up to this many (a damaged file could hold any number). */
    private static final int MAX_UNREADABLE_SEEN = 10_000;
    private final Set<String> unreadableSeen = ConcurrentHashMap.newKeySet();
    private final Writer writer;
    private final ReadPool readers;
    private final Sealer sealer;

    SqliteDeliveries(Writer writer, ReadPool readers, Sealer sealer) {
        this.writer = writer;
        this.readers = readers;
        this.sealer = sealer;
    }

    @Override
    public Map<NodeId, DeliveryPolicy> policies() {
        return readers.read(s -> {
            Map<NodeId, DeliveryPolicy> out = new HashMap<>();
            try (var rs = s.get("SELECT node_id, webhook_url, webhook_secret, max_attempts, base_ms, cap_ms,"
                    + " redeliver_after_ms FROM delivery_policies").executeQuery()) {
                while (rs.next()) {
                    String url = rs.getString(2);
                    Optional<Webhook> webhook = url == null ? Optional.empty()
                            : Optional.of(Webhook.of(url, sealer.open(rs.getString(3))));
                    long redeliver = rs.getLong(7);
                    Optional<Duration> redeliverAfter = rs.wasNull() ? Optional.empty() : Optional.of(Duration.ofMillis(redeliver));
                    out.put(new NodeId(rs.getString(1)), new DeliveryPolicy(webhook,
                            new RetryPolicy(rs.getInt(4), rs.getLong(5), rs.getLong(6)), redeliverAfter));
                }
            }
            return out;
        });
    }

    @Override
    public void putPolicy(NodeId node, DeliveryPolicy policy, AuditEntry audit) {
        writer.submit(tx -> {
            var upsert = tx.statements().get("INSERT OR REPLACE INTO delivery_policies (node_id, webhook_url,"
                    + " webhook_secret, max_attempts, base_ms, cap_ms, redeliver_after_ms, updated_at)"
                    + " VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
            upsert.setString(1, node.value());
            Rows.setNullable(upsert, 2, policy.webhook().map(w -> w.url().toString()));
            Rows.setNullable(upsert, 3, policy.webhook().map(w -> sealer.seal(w.secret())));
            upsert.setInt(4, policy.retry().maxAttempts());
            upsert.setLong(5, policy.retry().baseMs());
            upsert.setLong(6, policy.retry().capMs());
            if (policy.redeliverAfter().isPresent()) {
                upsert.setLong(7, policy.redeliverAfter().get().toMillis());
            } else {
                upsert.setNull(7, Types.INTEGER);
            }
            upsert.setLong(8, audit.at().toEpochMilli());
            upsert.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public void removePolicy(NodeId node, AuditEntry audit) {
        writer.submit(tx -> {
            var delete = tx.statements().get("DELETE FROM delivery_policies WHERE node_id = ?");
            delete.setString(1, node.value());
            delete.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public PushesWaiting pushesWaiting(NodeId node) {
        return readers.read(s -> {
            var select = s.get("SELECT count(*), min(w.due_at) FROM envelopes e INDEXED BY envelopes_undelivered"
                    + " JOIN schedule w ON w.envelope_id = e.id AND w.purpose = 'push'"
                    + " WHERE e.to_node = ? AND e.delivered_at IS NULL");
            select.setString(1, node.value());
            try (ResultSet rs = select.executeQuery()) {
                rs.next();
                return new PushesWaiting(rs.getLong(1), Rows.optionalMillis(rs, 2));
            }
        });
    }

    @Override
    public DuePage due(Instant now, Optional<DueKey> after, int limit) {
        return readers.read(s -> {
            // a first page starts below every real entry: no due time is negative
            var select = s.get("SELECT " + Rows.ENVELOPE_COLUMNS_OF_E + ", e.state, w.purpose, w.attempt, w.due_at FROM schedule w"
                    + " JOIN envelopes e ON e.id = w.envelope_id WHERE w.due_at <= ?"
                    + " AND (w.due_at, w.envelope_id, w.purpose) > (?, ?, ?)"
                    + " ORDER BY w.due_at, w.envelope_id, w.purpose LIMIT ?");
            select.setLong(1, now.toEpochMilli());
            select.setLong(2, after.map(k -> k.dueAt().toEpochMilli()).orElse(Long.MIN_VALUE));
            select.setString(3, after.map(DueKey::envelopeId).orElse(""));
            select.setString(4, after.map(k -> Ledger.purpose(k.purpose())).orElse(""));
            select.setInt(5, limit);
            DueRows rows = dueRows(select, limit);
            return new DuePage(rows.items(), rows.read(), rows.full() ? Optional.of(rows.last()) : Optional.empty());
        });
    }

    @Override
    public DuePushes duePushes(NodeId node, Instant now, int limit) {
        return readers.read(s -> {
            var select = s.get("SELECT " + Rows.ENVELOPE_COLUMNS_OF_E + ", e.state, w.purpose, w.attempt, w.due_at FROM envelopes e"
                    + " INDEXED BY envelopes_undelivered JOIN schedule w ON w.envelope_id = e.id AND w.purpose = 'push'"
                    + " WHERE e.to_node = ? AND e.delivered_at IS NULL AND w.due_at <= ? ORDER BY e.seq LIMIT ?");
            select.setString(1, node.value());
            select.setLong(2, now.toEpochMilli());
            select.setInt(3, limit);
            DueRows rows = dueRows(select, limit);
            return new DuePushes(rows.items(), rows.full());
        });
    }

    /**
     * The entries a due read found and how many rows it read; {@code full} when it stopped at
     * its limit or at {@link EventStore#PAGE_CHARS} rather than at the end, with the key of the
     * last row read.
     */
    private record DueRows(List<Due> items, int read, boolean full, DueKey last) {
    }

    /** Reads due rows (the envelope, then state, purpose, attempt and due time) up to {@code limit} or PAGE_CHARS. */
    private DueRows dueRows(PreparedStatement select, int limit) throws SQLException {
        List<Due> out = new ArrayList<>();
        DueKey last = null;
        int read = 0;
        long chars = 0;
        try (ResultSet rs = select.executeQuery()) {
            while (chars < EventStore.PAGE_CHARS && rs.next()) {
                last = dueKey(rs);
                read++;
                Optional<Due> due = readDue(rs, last);
                if (due.isPresent()) {
                    out.add(due.get());
                    chars += due.get().envelope().contentChars();
                }
            }
        }
        return new DueRows(out, read, read == limit || chars >= EventStore.PAGE_CHARS, last);
    }

    /** The schedule key of a row that selects the envelope and then state, purpose, attempt and due time. */
    private static DueKey dueKey(ResultSet rs) throws SQLException {
        int next = Rows.AFTER_ENVELOPE;
        Purpose purpose = Purpose.valueOf(rs.getString(next + 1).toUpperCase(Locale.ROOT));
        return new DueKey(Instant.ofEpochMilli(rs.getLong(next + 3)), rs.getString(1), purpose);
    }

    /** The due entry of such a row, or nothing (and said once) when its envelope cannot be read. */
    private Optional<Due> readDue(ResultSet rs, DueKey key) throws SQLException {
        int next = Rows.AFTER_ENVELOPE;
        try {
            return Optional.of(new Due(Rows.envelope(rs), DeliveryState.parse(rs.getString(next)), key.purpose(),
                    rs.getInt(next + 2), key.dueAt()));
        } catch (RuntimeException unreadable) {
            unreadable(key, unreadable);
            return Optional.empty();
        }
    }

    /**
     * An entry whose envelope this build cannot read (a value an older or newer build wrote, a
     * damaged row) stays in the schedule and is passed by: one such row must not stop the
     * work behind it. Said once per entry, not at every pass.
     */
    private void unreadable(DueKey key, RuntimeException why) {
        if (unreadableSeen.size() < MAX_UNREADABLE_SEEN && unreadableSeen.add(key.envelopeId() + "/" + key.purpose())) {
            LOG.log(Level.WARNING, "the " + Ledger.purpose(key.purpose()) + " entry of envelope " + key.envelopeId()
                    + " cannot be read and is passed by: " + why.getMessage());
        }
    }

    @Override
    public void pushed(List<Pushed> pushes, Instant at) {
        Map<Optional<Duration>, List<Envelope>> byAckCheck = new HashMap<>();
        for (Pushed pushed : pushes) {
            byAckCheck.computeIfAbsent(pushed.redeliverAfter(), k -> new ArrayList<>()).add(pushed.envelope());
        }
        writer.submit(tx -> {
            for (Pushed pushed : pushes) {
                Ledger.unschedule(tx.statements(), pushed.envelope().id(), Purpose.PUSH);
            }
            List<Ledger.Mark> marks = byAckCheck.entrySet().stream()
                    .map(group -> new Ledger.Mark(group.getValue(), at, group.getKey())).toList();
            Ledger.markDelivered(tx.statements(), marks).forEach(marked -> tx.delivered(marked, at));
            return null;
        });
    }

    @Override
    public void pushFailed(Envelope envelope, DeliveryEvent.PushFailed event, Instant at, Instant retryAt) {
        writer.submit(tx -> {
            if (Ledger.settled(current(tx.statements(), envelope.id()))) {
                Ledger.unschedule(tx.statements(), envelope.id(), Purpose.PUSH);
                return null;
            }
            Ledger.applyEvent(tx.statements(), envelope.id(), event, at, false);
            Ledger.schedule(tx.statements(), envelope.id(), Purpose.PUSH, retryAt, event.attempt() + 1);
            return null;
        });
    }

    @Override
    public Optional<Envelope> redeliver(String envelopeId, int attempt, Instant at, String why) {
        return writer.submit(tx -> {
            var s = tx.statements();
            if (Ledger.settled(current(s, envelopeId)) || claimed(s, envelopeId)) { // a claim is the sweep's to watch
                Ledger.unschedule(s, envelopeId, Purpose.REDELIVER);
                Ledger.unschedule(s, envelopeId, Purpose.RELEASE);
                return Optional.empty();
            }
            // The envelope row keeps only the latest delivery; the earlier one moves to the timeline.
            var earlier = s.get("INSERT INTO timeline (envelope_id, at, state, detail) SELECT id, delivered_at,"
                    + " 'delivered', 'attempt ' || attempt FROM envelopes WHERE id = ? AND delivered_at IS NOT NULL");
            earlier.setString(1, envelopeId);
            earlier.executeUpdate();
            var update = s.get("UPDATE envelopes SET attempt = ?, delivered_at = NULL WHERE id = ?");
            update.setInt(1, attempt);
            update.setString(2, envelopeId);
            update.executeUpdate();
            Ledger.unschedule(s, envelopeId, Purpose.REDELIVER);
            Ledger.unschedule(s, envelopeId, Purpose.RELEASE);
            Ledger.insertTimeline(s, envelopeId, current(s, envelopeId), at, why + "; redelivering as attempt " + attempt);
            var push = s.get("INSERT OR REPLACE INTO schedule (envelope_id, purpose, due_at, attempt)"
                    + " SELECT e.id, 'push', ?, ? FROM envelopes e JOIN delivery_policies p ON p.node_id = e.to_node"
                    + " WHERE e.id = ? AND p.webhook_url IS NOT NULL");
            push.setLong(1, at.toEpochMilli());
            push.setInt(2, attempt);
            push.setString(3, envelopeId);
            push.executeUpdate();
            return Optional.of(envelope(s, envelopeId));
        });
    }

    /** Whether the envelope's receiver holds a claim on it (whatever its state: an incident keeps the claim). */
    private static boolean claimed(Statements s, String envelopeId) throws SQLException {
        var select = s.get("SELECT 1 FROM claims WHERE envelope_id = ? AND claimed_at IS NOT NULL");
        select.setString(1, envelopeId);
        try (var rs = select.executeQuery()) {
            return rs.next();
        }
    }

    @Override
    public void deadLetter(String envelopeId, String reason, int attempts, Instant at, Optional<Envelope> notice) {
        writer.submit(tx -> Ledger.deadLetter(tx, envelopeId, reason, attempts, at, notice));
    }

    @Override
    public void deadlineMissed(String envelopeId, long withinMs, Instant at, Envelope notice) {
        writer.submit(tx -> {
            Ledger.unschedule(tx.statements(), envelopeId, Purpose.DEADLINE);
            DeliveryState state = current(tx.statements(), envelopeId);
            if (state == DeliveryState.REPLIED || state == DeliveryState.PROCESSED) {
                return null;
            }
            Ledger.applyEvent(tx.statements(), envelopeId, new DeliveryEvent.SlaMissed(withinMs), at, false);
            Ledger.append(tx, notice);
            return null;
        });
    }

    @Override
    public void forget(String envelopeId, Purpose purpose) {
        writer.submit(tx -> {
            Ledger.unschedule(tx.statements(), envelopeId, purpose);
            return null;
        });
    }

    @Override
    public List<DeadLetter> deadLetters(Optional<NodeId> node, int limit) {
        return readers.read(s -> {
            var select = s.get(deadLetterQuery() + " WHERE (? IS NULL OR d.node = ?) ORDER BY d.at DESC LIMIT ?");
            String filter = node.map(NodeId::value).orElse(null);
            select.setString(1, filter);
            select.setString(2, filter);
            select.setInt(3, limit);
            return deadLetters(select.executeQuery());
        });
    }

    @Override
    public Optional<DeadLetter> deadLetter(String envelopeId) {
        return readers.read(s -> {
            var select = s.get(deadLetterQuery() + " WHERE d.envelope_id = ?");
            select.setString(1, envelopeId);
            return deadLetters(select.executeQuery()).stream().findFirst();
        });
    }

    @Override
    public Envelope redrive(String envelopeId, Instant at, AuditEntry audit) {
        return writer.submit(tx -> {
            var s = tx.statements();
            if (!removeDeadLetter(s, envelopeId)) {
                throw notFound(envelopeId);
            }
            Transition transition = Ledger.applyEvent(s, envelopeId, new DeliveryEvent.Redriven(audit.actor()), at, false);
            if (transition instanceof Transition.Refused refused) {
                throw new ParleyException(ErrorCode.INVALID_TRANSITION, refused.reason());
            }
            var reset = s.get("UPDATE envelopes SET attempt = 1, delivered_at = NULL WHERE id = ?");
            reset.setString(1, envelopeId);
            reset.executeUpdate();
            var push = s.get("INSERT OR REPLACE INTO schedule (envelope_id, purpose, due_at, attempt)"
                    + " SELECT e.id, 'push', ?, 1 FROM envelopes e JOIN delivery_policies p ON p.node_id = e.to_node"
                    + " WHERE e.id = ? AND p.webhook_url IS NOT NULL");
            push.setLong(1, at.toEpochMilli());
            push.setString(2, envelopeId);
            push.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return envelope(s, envelopeId);
        });
    }

    @Override
    public void drop(String envelopeId, Instant at, AuditEntry audit) {
        writer.submit(tx -> {
            if (!removeDeadLetter(tx.statements(), envelopeId)) {
                throw notFound(envelopeId);
            }
            Ledger.insertTimeline(tx.statements(), envelopeId, DeliveryState.DEAD_LETTERED, at,
                    "dropped from the dead-letter queue by " + audit.actor());
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public Optional<Envelope> replyTo(String requestId) {
        return readers.read(s -> {
            var select = s.get("SELECT " + Rows.ENVELOPE_COLUMNS + " FROM envelopes WHERE corr_id = ? AND kind = 'reply'"
                    + " ORDER BY pos LIMIT 1");
            select.setString(1, requestId);
            try (ResultSet rs = select.executeQuery()) {
                return rs.next() ? Optional.of(Rows.envelope(rs)) : Optional.empty();
            }
        });
    }

    private static boolean removeDeadLetter(Statements s, String envelopeId) throws SQLException {
        var delete = s.get("DELETE FROM dead_letters WHERE envelope_id = ?");
        delete.setString(1, envelopeId);
        return delete.executeUpdate() == 1;
    }

    private static DeliveryState current(Statements s, String envelopeId) throws SQLException {
        var select = s.get("SELECT state FROM envelopes WHERE id = ?");
        select.setString(1, envelopeId);
        try (ResultSet rs = select.executeQuery()) {
            if (!rs.next()) {
                throw new ParleyException(ErrorCode.MESSAGE_NOT_FOUND, "message " + envelopeId + " does not exist");
            }
            return DeliveryState.parse(rs.getString(1));
        }
    }

    private static Envelope envelope(Statements s, String envelopeId) throws SQLException {
        var select = s.get("SELECT " + Rows.ENVELOPE_COLUMNS + " FROM envelopes WHERE id = ?");
        select.setString(1, envelopeId);
        try (ResultSet rs = select.executeQuery()) {
            rs.next();
            return Rows.envelope(rs);
        }
    }

    private static String deadLetterQuery() {
        return "SELECT " + Rows.ENVELOPE_COLUMNS_OF_E + ", d.reason, d.attempts, d.at FROM dead_letters d JOIN envelopes e"
                + " ON e.id = d.envelope_id";
    }

    private static List<DeadLetter> deadLetters(ResultSet rs) throws SQLException {
        try (rs) {
            List<DeadLetter> out = new ArrayList<>();
            while (rs.next()) {
                int next = Rows.AFTER_ENVELOPE;
                out.add(new DeadLetter(Rows.envelope(rs), rs.getString(next), rs.getInt(next + 1),
                        Instant.ofEpochMilli(rs.getLong(next + 2))));
            }
            return out;
        }
    }

    private static ParleyException notFound(String envelopeId) {
        return new ParleyException(ErrorCode.DEAD_LETTER_NOT_FOUND, "no dead letter " + envelopeId);
    }
}
