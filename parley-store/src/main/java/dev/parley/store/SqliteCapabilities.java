package dev.parley.store;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.core.AuditEntry;
import dev.parley.core.Capability;
import dev.parley.core.CapabilityStore;
import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.JsonText;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.SkillReview;
import dev.parley.core.TaskState;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/** {@link CapabilityStore} on the hub's SQLite file: tables {@code capabilities}, {@code capability_tasks}, {@code skill_reviews}. */
public final class SqliteCapabilities implements CapabilityStore {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<List<String>> STRINGS = new TypeReference<>() { };
    private static final String COLUMNS = "id, owner, delegation_ref, delegation_version, executor_ref,"
            + " executor_version, contract, eta_ms, published_at, unpublished_at";
    /** Task states after which a routed task needs no ETA review. */
    private static final String ENDED = Arrays.stream(TaskState.values()).filter(TaskState::terminal)
            .map(state -> "'" + state.wire() + "'").collect(Collectors.joining(", "));

    private final Writer writer;
    private final ReadPool readers;

    SqliteCapabilities(Writer writer, ReadPool readers) {
        this.writer = writer;
        this.readers = readers;
    }

    @Override
    public void publish(Capability c, AuditEntry audit) {
        writer.submit(tx -> {
            var upsert = tx.statements().get("INSERT INTO capabilities (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?,"
                    + " ?, ?, NULL) ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, delegation_ref ="
                    + " excluded.delegation_ref, delegation_version = excluded.delegation_version, executor_ref ="
                    + " excluded.executor_ref, executor_version = excluded.executor_version, contract = excluded.contract,"
                    + " eta_ms = excluded.eta_ms, published_at = excluded.published_at, unpublished_at = NULL"
                    + " WHERE capabilities.unpublished_at IS NOT NULL OR capabilities.owner = excluded.owner");
            upsert.setString(1, c.id());
            upsert.setString(2, c.owner().value());
            upsert.setString(3, c.delegation().ref());
            upsert.setString(4, c.delegation().version());
            upsert.setString(5, c.executor().ref());
            upsert.setString(6, c.executor().version());
            Rows.setNullable(upsert, 7, c.contract().map(JsonText::json));
            upsert.setLong(8, c.eta().toMillis());
            upsert.setLong(9, c.publishedAt().toEpochMilli());
            if (upsert.executeUpdate() == 0) { // published by another owner meanwhile: checked here, in the one writer
                throw new ParleyException(ErrorCode.CAPABILITY_TAKEN, c.id() + " is published by another node; it"
                        + " must be unpublished before " + c.owner() + " publishes it");
            }
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public void unpublish(String id, Instant at, AuditEntry audit) {
        writer.submit(tx -> {
            var update = tx.statements().get("UPDATE capabilities SET unpublished_at = ? WHERE id = ?"
                    + " AND unpublished_at IS NULL");
            update.setLong(1, at.toEpochMilli());
            update.setString(2, id);
            update.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public Optional<Stored> capability(String id) {
        return readers.read(s -> {
            var select = s.get("SELECT " + COLUMNS + " FROM capabilities WHERE id = ?");
            select.setString(1, id);
            try (var rs = select.executeQuery()) {
                return rs.next() ? Optional.of(stored(rs)) : Optional.empty();
            }
        });
    }

    @Override
    public List<Capability> published() {
        return readers.read(s -> {
            var select = s.get("SELECT " + COLUMNS + " FROM capabilities WHERE unpublished_at IS NULL ORDER BY id");
            List<Capability> out = new ArrayList<>();
            try (var rs = select.executeQuery()) {
                while (rs.next()) {
                    out.add(stored(rs).capability());
                }
            }
            return out;
        });
    }

    @Override
    public Optional<Routed> routed(String taskId) {
        return readers.read(s -> {
            var select = s.get("SELECT task_id, capability, owner, due_at FROM capability_tasks WHERE task_id = ?");
            select.setString(1, taskId);
            try (var rs = select.executeQuery()) {
                return rs.next() ? Optional.of(routed(rs)) : Optional.empty();
            }
        });
    }

    @Override
    public void due(String taskId, Instant at) {
        writer.submit(tx -> {
            var update = tx.statements().get("UPDATE capability_tasks SET due_at = ? WHERE task_id = ?");
            update.setLong(1, at.toEpochMilli());
            update.setString(2, taskId);
            update.executeUpdate();
            return null;
        });
    }

    @Override
    public List<Routed> overdue(Instant now, int limit) {
        return readers.read(s -> {
            var select = s.get("SELECT c.task_id, c.capability, c.owner, c.due_at FROM capability_tasks c"
                    + " JOIN tasks t ON t.id = c.task_id WHERE c.eta_reviewed = 0 AND c.due_at < ?"
                    + " AND t.state NOT IN (" + ENDED + ") ORDER BY c.due_at LIMIT ?");
            select.setLong(1, now.toEpochMilli());
            select.setInt(2, limit);
            List<Routed> out = new ArrayList<>();
            try (var rs = select.executeQuery()) {
                while (rs.next()) {
                    out.add(routed(rs));
                }
            }
            return out;
        });
    }

    private static Routed routed(ResultSet rs) throws SQLException {
        return new Routed(rs.getString(1), rs.getString(2), new NodeId(rs.getString(3)),
                Instant.ofEpochMilli(rs.getLong(4)));
    }

    @Override
    public void raise(SkillReview r, Envelope notice, AuditEntry audit, Optional<String> overdue) {
        writer.submit(tx -> {
            var insert = tx.statements().get("INSERT INTO skill_reviews (id, capability, owner, delegation_ref,"
                    + " delegation_version, executor_ref, executor_version, failure, detail, sample_ids, raised_at)"
                    + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
            insert.setString(1, r.id());
            insert.setString(2, r.capabilityId());
            insert.setString(3, r.owner().value());
            insert.setString(4, r.delegation().ref());
            insert.setString(5, r.delegation().version());
            insert.setString(6, r.executor().ref());
            insert.setString(7, r.executor().version());
            insert.setString(8, r.failure().wire());
            insert.setString(9, r.detail());
            insert.setString(10, json(r.sampleIds()));
            insert.setLong(11, r.raisedAt().toEpochMilli());
            insert.executeUpdate();
            if (overdue.isPresent()) {
                var mark = tx.statements().get("UPDATE capability_tasks SET eta_reviewed = 1 WHERE task_id = ?");
                mark.setString(1, overdue.get());
                mark.executeUpdate();
            }
            Ledger.append(tx, notice);
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public List<SkillReview> reviews(String id, int limit) {
        return readers.read(s -> {
            var select = s.get("SELECT id, capability, owner, delegation_ref, delegation_version, executor_ref,"
                    + " executor_version, failure, detail, sample_ids, raised_at FROM skill_reviews WHERE capability = ?"
                    + " ORDER BY raised_at DESC, id DESC LIMIT ?");
            select.setString(1, id);
            select.setInt(2, limit);
            List<SkillReview> out = new ArrayList<>();
            try (var rs = select.executeQuery()) {
                while (rs.next()) {
                    out.add(new SkillReview(rs.getString(1), rs.getString(2), new NodeId(rs.getString(3)),
                            new Capability.SkillRef(rs.getString(4), rs.getString(5)),
                            new Capability.SkillRef(rs.getString(6), rs.getString(7)),
                            SkillReview.Failure.valueOf(rs.getString(8).toUpperCase(Locale.ROOT)), rs.getString(9),
                            strings(rs.getString(10)), Instant.ofEpochMilli(rs.getLong(11))));
                }
            }
            return out;
        });
    }

    private static Stored stored(ResultSet rs) throws SQLException {
        return new Stored(new Capability(rs.getString(1), new NodeId(rs.getString(2)),
                new Capability.SkillRef(rs.getString(3), rs.getString(4)),
                new Capability.SkillRef(rs.getString(5), rs.getString(6)),
                Optional.ofNullable(rs.getString(7)).map(JsonText::new), Duration.ofMillis(rs.getLong(8)),
                Instant.ofEpochMilli(rs.getLong(9))), Rows.optionalMillis(rs, 10));
    }

    private static String json(List<String> ids) {
        try {
            return JSON.writeValueAsString(ids);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a list of strings always serializes", e);
        }
    }

    private static List<String> strings(String json) throws SQLException {
        try {
            return JSON.readValue(json, STRINGS);
        } catch (JsonProcessingException e) {
            throw new SQLException("sample_ids does not read: " + e.getOriginalMessage(), e);
        }
    }
}
