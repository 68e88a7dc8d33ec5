package dev.parley.store;

import dev.parley.core.NodeId;
import dev.parley.core.TraceContext;
import dev.parley.core.TraceStore;
import dev.parley.core.Turn;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** {@link TraceStore} on the hub's SQLite file: tables {@code turns} and {@code trace_events}. */
public final class SqliteTraces implements TraceStore {
    private static final String TURN_COLUMNS = "node, id, envelope_id, adapter, trace_id, span_id, parent_span,"
            + " started_at, stopped_at, events, chars";

    private final Writer writer;
    private final ReadPool readers;

    SqliteTraces(Writer writer, ReadPool readers) {
        this.writer = writer;
        this.readers = readers;
    }

    @Override
    public Optional<Turn> turn(NodeId node, String turnId) {
        return readers.read(s -> {
            var select = s.get("SELECT " + TURN_COLUMNS + " FROM turns WHERE node = ? AND id = ?");
            select.setString(1, node.value());
            select.setString(2, turnId);
            try (var rs = select.executeQuery()) {
                return rs.next() ? Optional.of(turn(rs)) : Optional.empty();
            }
        });
    }

    @Override
    public void append(Turn turn, boolean isNew, List<Turn.Event> events) {
        writer.submit(tx -> {
            var s = tx.statements();
            if (isNew) {
                var insert = s.get("INSERT INTO turns (" + TURN_COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
                insert.setString(1, turn.node().value());
                insert.setString(2, turn.id());
                insert.setString(3, turn.envelopeId());
                insert.setString(4, turn.adapter());
                insert.setString(5, turn.context().traceId());
                insert.setString(6, turn.context().spanId());
                Rows.setNullable(insert, 7, turn.context().parentSpanId());
                insert.setLong(8, turn.startedAt().toEpochMilli());
                Rows.setNullableMillis(insert, 9, turn.stoppedAt());
                insert.setInt(10, turn.events());
                insert.setLong(11, turn.chars());
                insert.executeUpdate();
            } else {
                var update = s.get("UPDATE turns SET stopped_at = ?, events = ?, chars = ? WHERE node = ? AND id = ?");
                Rows.setNullableMillis(update, 1, turn.stoppedAt());
                update.setInt(2, turn.events());
                update.setLong(3, turn.chars());
                update.setString(4, turn.node().value());
                update.setString(5, turn.id());
                update.executeUpdate();
            }
            var insert = s.get("INSERT INTO trace_events (node, turn, seq, id, type, at, body) VALUES (?, ?, ?, ?, ?, ?, ?)");
            int seq = turn.events() - events.size();
            for (Turn.Event event : events) {
                insert.setString(1, turn.node().value());
                insert.setString(2, turn.id());
                insert.setInt(3, ++seq);
                insert.setString(4, event.id());
                insert.setString(5, event.type());
                insert.setLong(6, event.at().toEpochMilli());
                insert.setString(7, event.json());
                insert.executeUpdate();
            }
            return null;
        });
    }

    @Override
    public List<Turn.Event> events(NodeId node, String turnId, List<String> ids) {
        if (ids.isEmpty()) {
            return List.of();
        }
        return readers.read(s -> {
            var select = s.get("SELECT id, type, at, body FROM trace_events WHERE node = ? AND turn = ? AND id = ?");
            List<Turn.Event> out = new ArrayList<>();
            for (String id : ids) {
                select.setString(1, node.value());
                select.setString(2, turnId);
                select.setString(3, id);
                try (var rs = select.executeQuery()) {
                    if (rs.next()) {
                        out.add(event(rs));
                    }
                }
            }
            return out;
        });
    }

    @Override
    public List<Turn.Event> events(NodeId node, String turnId) {
        return readers.read(s -> {
            var select = s.get("SELECT id, type, at, body FROM trace_events WHERE node = ? AND turn = ? ORDER BY seq");
            select.setString(1, node.value());
            select.setString(2, turnId);
            List<Turn.Event> out = new ArrayList<>();
            try (var rs = select.executeQuery()) {
                while (rs.next()) {
                    out.add(event(rs));
                }
            }
            return out;
        });
    }

    @Override
    public List<Turn> turnsOfTrace(String traceId, Optional<Set<NodeId>> owners, int limit) {
        String among = owners.map(o -> Rows.jsonArray(o, NodeId::value)).orElse(null);
        return readers.read(s -> {
            var select = s.get("SELECT " + TURN_COLUMNS + " FROM turns WHERE trace_id = ?1 AND (?2 IS NULL"
                    + " OR node IN (SELECT value FROM json_each(?2))) ORDER BY started_at, node, id LIMIT ?3");
            select.setString(1, traceId);
            select.setString(2, among);
            select.setInt(3, limit);
            List<Turn> out = new ArrayList<>();
            try (var rs = select.executeQuery()) {
                while (rs.next()) {
                    out.add(turn(rs));
                }
            }
            return out;
        });
    }

    private static Turn turn(ResultSet rs) throws SQLException {
        long stopped = rs.getLong(9);
        Optional<Instant> stoppedAt = rs.wasNull() ? Optional.empty() : Optional.of(Instant.ofEpochMilli(stopped));
        return new Turn(new NodeId(rs.getString(1)), rs.getString(2), rs.getString(3), rs.getString(4),
                new TraceContext(rs.getString(5), rs.getString(6), Optional.ofNullable(rs.getString(7))),
                Instant.ofEpochMilli(rs.getLong(8)), stoppedAt, rs.getInt(10), rs.getLong(11));
    }

    private static Turn.Event event(ResultSet rs) throws SQLException {
        return new Turn.Event(rs.getString(1), rs.getString(2), Instant.ofEpochMilli(rs.getLong(3)), rs.getString(4));
    }
}
