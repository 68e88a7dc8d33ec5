package dev.parley.store;

import dev.parley.core.Appended;
import dev.parley.core.AuditEntry;
import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.JsonText;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Payload;
import dev.parley.core.Schedule;
import dev.parley.core.ScheduleStore;
import dev.parley.core.Schedules;
import dev.parley.core.Timing;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@link ScheduleStore} on the hub's SQLite file: table {@code schedules}. A firing is one
 * writer job that moves the schedule on only from the occurrence it was asked to fire, and
 * appends the envelope through the same {@link Ledger#send} as every send: one transaction,
 * so an occurrence is delivered at most once and never lost between the two.
 */
public final class SqliteSchedules implements ScheduleStore {
    private static final String COLUMNS = "id, sender, recipient, kind, text, data, corr_id, thread_id, message_id, meta,"
            + " reply_within_ms, deliver_at, cron, time_zone, next_at, created_at, ended_at, last_fired_at, fired, skipped,"
            + " state, detail";

    private final Writer writer;
    private final ReadPool readers;

    SqliteSchedules(Writer writer, ReadPool readers) {
        this.writer = writer;
        this.readers = readers;
    }

    @Override
    public Schedules.Created create(Schedule schedule, int maxActive, AuditEntry audit) {
        return writer.submit(tx -> {
            var s = tx.statements();
            if (schedule.payload().messageId().isPresent()) {
                Optional<Schedule> earlier = scheduled(s, schedule.from(), schedule.payload().messageId().get());
                if (earlier.isPresent()) {
                    return new Schedules.Created(earlier.get(), true);
                }
            }
            var active = s.get("SELECT count(*) FROM schedules WHERE sender = ? AND state = 'active'");
            active.setString(1, schedule.from().value());
            try (var rs = active.executeQuery()) {
                if (rs.next() && rs.getInt(1) >= maxActive) {
                    throw new ParleyException(ErrorCode.SCHEDULE_LIMIT, schedule.from() + " already has " + maxActive
                            + " active schedules, the most one sender may have; cancel one first");
                }
            }
            insert(s, schedule);
            Ledger.insertAudit(tx, audit);
            return new Schedules.Created(schedule, false);
        });
    }

    @Override
    public Optional<Schedule> schedule(String id) {
        return readers.read(s -> {
            var select = s.get("SELECT " + COLUMNS + " FROM schedules WHERE id = ?");
            select.setString(1, id);
            return first(select.executeQuery());
        });
    }

    @Override
    public Optional<Schedule> scheduled(NodeId sender, String messageId) {
        return readers.read(s -> scheduled(s, sender, messageId));
    }

    @Override
    public List<Schedule> schedules(Optional<NodeId> sender, Optional<Schedule.State> state, int limit) {
        // Only the filters given take part, so each shape stays an indexed lookup.
        StringBuilder sql = new StringBuilder("SELECT " + COLUMNS + " FROM schedules WHERE 1 = 1");
        List<String> args = new ArrayList<>();
        sender.ifPresent(n -> {
            sql.append(" AND sender = ?");
            args.add(n.value());
        });
        state.ifPresent(st -> {
            sql.append(" AND state = ?");
            args.add(st.wire());
        });
        sql.append(" ORDER BY created_at DESC, id DESC LIMIT ?");
        return readers.read(s -> {
            var select = s.get(sql.toString());
            for (int i = 0; i < args.size(); i++) {
                select.setString(i + 1, args.get(i));
            }
            select.setInt(args.size() + 1, limit);
            return all(select.executeQuery());
        });
    }

    @Override
    public List<Schedule> due(Instant now, int limit) {
        return readers.read(s -> {
            var select = s.get("SELECT " + COLUMNS + " FROM schedules INDEXED BY schedules_due"
                    + " WHERE state = 'active' AND next_at <= ? ORDER BY next_at LIMIT ?");
            select.setLong(1, now.toEpochMilli());
            select.setInt(2, limit);
            return all(select.executeQuery());
        });
    }

    @Override
    public Optional<Instant> nextDue() {
        return readers.read(s -> {
            try (var rs = s.get("SELECT min(next_at) FROM schedules WHERE state = 'active'").executeQuery()) {
                return rs.next() ? Rows.optionalMillis(rs, 1) : Optional.<Instant>empty();
            }
        });
    }

    @Override
    public boolean cancel(String id, Instant at, AuditEntry audit) {
        return writer.submit(tx -> {
            var update = tx.statements().get("UPDATE schedules SET state = 'canceled', next_at = NULL, ended_at = ?"
                    + " WHERE id = ? AND state = 'active'");
            update.setLong(1, at.toEpochMilli());
            update.setString(2, id);
            if (update.executeUpdate() == 0) {
                return false;
            }
            Ledger.insertAudit(tx, audit);
            return true;
        });
    }

    @Override
    public Optional<Appended> fire(String id, Instant due, Optional<Instant> next, Envelope envelope, AuditEntry audit,
                                   Optional<Instant> replyBy) {
        return writer.submit(tx -> {
            if (!moveOn(tx.statements(), id, due, next, Schedule.State.DONE, envelope.createdAt(), true, Optional.empty())) {
                return Optional.empty();
            }
            return Optional.of(Ledger.send(tx, envelope, audit, Optional.empty(), replyBy));
        });
    }

    @Override
    public boolean skip(String id, Instant due, Optional<Instant> next, String why, AuditEntry audit) {
        return writer.submit(tx -> {
            if (!moveOn(tx.statements(), id, due, next, Schedule.State.FAILED, audit.at(), false, Optional.of(why))) {
                return false;
            }
            Ledger.insertAudit(tx, audit);
            return true;
        });
    }

    /**
     * Moves an active schedule's next firing from {@code due} to {@code next}, or ends it in
     * {@code end} when there is none, counting a firing or a skip; false when it is no longer
     * active or no longer due then.
     */
    private static boolean moveOn(Statements s, String id, Instant due, Optional<Instant> next, Schedule.State end,
                                  Instant at, boolean fired, Optional<String> why) throws SQLException {
        var update = s.get("UPDATE schedules SET next_at = ?, state = ?, ended_at = ?, fired = fired + ?,"
                + " skipped = skipped + ?, last_fired_at = coalesce(?, last_fired_at), detail = coalesce(?, detail)"
                + " WHERE id = ? AND state = 'active' AND next_at = ?");
        Rows.setNullableMillis(update, 1, next);
        update.setString(2, (next.isPresent() ? Schedule.State.ACTIVE : end).wire());
        Rows.setNullableMillis(update, 3, next.isPresent() ? Optional.empty() : Optional.of(at));
        update.setInt(4, fired ? 1 : 0);
        update.setInt(5, fired ? 0 : 1);
        Rows.setNullableMillis(update, 6, fired ? Optional.of(at) : Optional.empty());
        Rows.setNullable(update, 7, why);
        update.setString(8, id);
        update.setLong(9, due.toEpochMilli());
        return update.executeUpdate() == 1;
    }

    private static Optional<Schedule> scheduled(Statements s, NodeId sender, String messageId) throws SQLException {
        var select = s.get("SELECT " + COLUMNS + " FROM schedules WHERE sender = ? AND message_id = ?");
        select.setString(1, sender.value());
        select.setString(2, messageId);
        return first(select.executeQuery());
    }

    private static void insert(Statements s, Schedule schedule) throws SQLException {
        var insert = s.get("INSERT INTO schedules (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                + " ?, ?, ?, ?, ?, ?)");
        Payload payload = schedule.payload();
        insert.setString(1, schedule.id());
        insert.setString(2, schedule.from().value());
        insert.setString(3, schedule.to().value());
        insert.setString(4, schedule.kind());
        Rows.setNullable(insert, 5, payload.text());
        Rows.setNullable(insert, 6, payload.data().map(JsonText::json));
        Rows.setNullable(insert, 7, payload.corrId());
        Rows.setNullable(insert, 8, payload.threadId());
        Rows.setNullable(insert, 9, payload.messageId());
        insert.setString(10, Rows.json(payload.meta()));
        Rows.setNullable(insert, 11, schedule.replyWithin().map(Duration::toMillis));
        Rows.setNullable(insert, 12, schedule.timing() instanceof Timing.Once once ? Optional.of(once.deliverAt())
                : Optional.empty());
        Rows.setNullable(insert, 13, schedule.timing() instanceof Timing.Cron cron ? Optional.of(cron.expression())
                : Optional.empty());
        insert.setString(14, schedule.zone().getId());
        Rows.setNullableMillis(insert, 15, schedule.nextAt());
        insert.setLong(16, schedule.createdAt().toEpochMilli());
        Rows.setNullableMillis(insert, 17, schedule.endedAt());
        Rows.setNullableMillis(insert, 18, schedule.lastFiredAt());
        insert.setInt(19, schedule.fired());
        insert.setInt(20, schedule.skipped());
        insert.setString(21, schedule.state().wire());
        Rows.setNullable(insert, 22, schedule.detail());
        insert.executeUpdate();
    }

    private static Optional<Schedule> first(ResultSet rs) throws SQLException {
        try (rs) {
            return rs.next() ? Optional.of(schedule(rs)) : Optional.empty();
        }
    }

    private static List<Schedule> all(ResultSet rs) throws SQLException {
        List<Schedule> out = new ArrayList<>();
        try (rs) {
            while (rs.next()) {
                out.add(schedule(rs));
            }
        }
        return out;
    }

    private static Schedule schedule(ResultSet rs) throws SQLException {
        Payload payload = new Payload(Optional.ofNullable(rs.getString(5)),
                Optional.ofNullable(rs.getString(6)).map(JsonText::new), Optional.ofNullable(rs.getString(7)),
                Optional.ofNullable(rs.getString(8)), Optional.ofNullable(rs.getString(9)), Rows.stringMap(rs.getString(10)));
        long replyWithinMs = rs.getLong(11);
        Optional<Duration> replyWithin = rs.wasNull() ? Optional.empty() : Optional.of(Duration.ofMillis(replyWithinMs));
        String deliverAt = rs.getString(12);
        Timing timing = deliverAt != null ? new Timing.Once(deliverAt) : new Timing.Cron(rs.getString(13));
        return new Schedule(rs.getString(1), new NodeId(rs.getString(2)), new NodeId(rs.getString(3)), rs.getString(4),
                payload, replyWithin, timing, ZoneId.of(rs.getString(14)), Instant.ofEpochMilli(rs.getLong(16)),
                Schedule.State.parse(rs.getString(21)), Rows.optionalMillis(rs, 15), rs.getInt(19), rs.getInt(20),
                Rows.optionalMillis(rs, 18), Rows.optionalMillis(rs, 17), Optional.ofNullable(rs.getString(22)));
    }
}
