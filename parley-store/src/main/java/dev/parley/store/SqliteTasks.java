package dev.parley.store;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.core.ErrorCode;
import dev.parley.core.Envelope;
import dev.parley.core.JsonText;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Task;
import dev.parley.core.TaskEvent;
import dev.parley.core.TaskQuery;
import dev.parley.core.TaskState;
import dev.parley.core.TaskStore;
import dev.parley.core.TraceContext;
import dev.parley.core.TaskTap;
import dev.parley.core.Tasks;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/** Delegated tasks on the hub's SQLite file; each change commits with the envelope that announces it. */
public final class SqliteTasks implements TaskStore {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<List<TaskEvent.Artifact>> ARTIFACTS = new TypeReference<>() { };
    private static final String COLUMNS = "id, creator, assignee, title, input, state, ephemeral, eta_seconds, progress,"
            + " result, artifacts, reason, created_at, updated_at";

    private final Writer writer;
    private final ReadPool readers;
    private final List<TaskTap> taps;

    SqliteTasks(Writer writer, ReadPool readers, List<TaskTap> taps) {
        this.writer = writer;
        this.readers = readers;
        this.taps = taps;
    }

    @Override
    public Task create(TaskChange created) {
        return writer.submit(tx -> {
            Task t = created.task();
            if (created.notice().messageId().isPresent()) {
                Optional<Envelope> first = Ledger.byMessageId(tx.statements(), created.notice());
                if (first.isPresent() && !first.get().kind().equals(Tasks.KIND)) {
                    throw new ParleyException(ErrorCode.INVALID_REQUEST, "messageId " + first.get().messageId()
                            .orElseThrow() + " is already used by envelope " + first.get().id() + ", which is no task");
                }
                if (first.isPresent()) { // the creator sent this request before: answer the task it made
                    String taskId = first.get().corrId().orElseThrow(() -> new IllegalStateException(
                            "envelope " + first.get().id() + " reuses a task messageId but names no task"));
                    return read(tx.statements(), taskId).orElseThrow(() -> Tasks.notFound(taskId));
                }
            }
            insert(tx.statements(), t);
            if (created.capability().isPresent()) {
                // due by the capability's ETA, read in this transaction, from the task's creation
                var routed = tx.statements().get("INSERT INTO capability_tasks (task_id, capability, owner, due_at)"
                        + " SELECT ?, id, owner, ? + eta_ms FROM capabilities WHERE id = ?");
                routed.setString(1, t.id());
                routed.setLong(2, t.createdAt().toEpochMilli());
                routed.setString(3, created.capability().get());
                routed.executeUpdate();
            }
            record(tx, created);
            return t;
        });
    }

    @Override
    public Task change(String taskId, Function<Task, TaskChange> change) {
        return writer.submit(tx -> {
            Task current = read(tx.statements(), taskId).orElseThrow(() -> Tasks.notFound(taskId));
            TaskChange changed = change.apply(current);
            update(tx.statements(), changed.task());
            record(tx, changed);
            return changed.task();
        });
    }

    @Override
    public Optional<TraceContext> conversation(String id) {
        return readers.read(s -> {
            var select = s.get("SELECT id, trace_context FROM envelopes WHERE corr_id = ? AND kind = 'task'"
                    + " ORDER BY created_at LIMIT 1");
            select.setString(1, id);
            try (var rs = select.executeQuery()) {
                return rs.next() ? Optional.of(TraceContext.fromStored(rs.getString(2), rs.getString(1)))
                        : Optional.empty();
            }
        });
    }

    @Override
    public Optional<Task> task(String id) {
        return readers.read(s -> read(s, id));
    }

    @Override
    public List<Task> tasks(TaskQuery query) {
        return readers.read(s -> {
            var select = s.get("SELECT " + COLUMNS + " FROM tasks WHERE (?1 IS NULL OR creator = ?1 OR assignee = ?1)"
                    + " AND (?2 IS NULL OR assignee = ?2) AND (?3 IS NULL OR state = ?3) ORDER BY created_at DESC, id DESC"
                    + " LIMIT ?4");
            select.setString(1, query.involving().map(NodeId::value).orElse(null));
            select.setString(2, query.assignee().map(NodeId::value).orElse(null));
            select.setString(3, query.state().map(TaskState::wire).orElse(null));
            select.setInt(4, query.limit());
            List<Task> out = new ArrayList<>();
            try (var rs = select.executeQuery()) {
                while (rs.next()) {
                    out.add(task(rs));
                }
            }
            return out;
        });
    }

    private void record(Writer.Tx tx, TaskChange change) throws SQLException {
        Ledger.append(tx, change.notice());
        Ledger.insertAudit(tx, change.audit());
        tap(tx, taps, change.task(), change.notice());
    }

    /** Appends what the taps owe {@code task} as it now stands, {@code notice} the change's own. */
    static void tap(Writer.Tx tx, List<TaskTap> taps, Task task, Envelope notice) throws SQLException {
        for (TaskTap tap : taps) {
            for (Envelope follower : tap.after(task, notice)) {
                Ledger.append(tx, follower);
            }
        }
    }

    static void insert(Statements s, Task t) throws SQLException {
        var insert = s.get("INSERT INTO tasks (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        insert.setString(1, t.id());
        insert.setString(2, t.creator().value());
        insert.setString(3, t.assignee().value());
        insert.setString(4, t.title());
        Rows.setNullable(insert, 5, t.input().map(JsonText::json));
        insert.setString(6, t.state().wire());
        insert.setInt(7, t.ephemeral() ? 1 : 0);
        setMutable(insert, 8, t);
        insert.setLong(13, t.createdAt().toEpochMilli());
        insert.setLong(14, t.updatedAt().toEpochMilli());
        insert.executeUpdate();
    }

    /** Writes what a change may change of {@code t}: its state, the five mutable columns, its time. */
    static void update(Statements s, Task t) throws SQLException {
        var update = s.get("UPDATE tasks SET eta_seconds = ?, progress = ?, result = ?, artifacts = ?,"
                + " reason = ?, state = ?, updated_at = ? WHERE id = ?");
        setMutable(update, 1, t);
        update.setString(6, t.state().wire());
        update.setLong(7, t.updatedAt().toEpochMilli());
        update.setString(8, t.id());
        update.executeUpdate();
    }

    /** The five columns a task's changes write, from {@code first} on. */
    private static void setMutable(PreparedStatement statement, int first, Task t) throws SQLException {
        if (t.etaSeconds().isPresent()) {
            statement.setLong(first, t.etaSeconds().get());
        } else {
            statement.setNull(first, Types.INTEGER);
        }
        Rows.setNullable(statement, first + 1, t.progress().map(JsonText::json));
        Rows.setNullable(statement, first + 2, t.result().map(JsonText::json));
        statement.setString(first + 3, artifacts(t.artifacts()));
        Rows.setNullable(statement, first + 4, t.reason());
    }

    static Optional<Task> read(Statements s, String id) throws SQLException {
        var select = s.get("SELECT " + COLUMNS + " FROM tasks WHERE id = ?");
        select.setString(1, id);
        try (var rs = select.executeQuery()) {
            return rs.next() ? Optional.of(task(rs)) : Optional.empty();
        }
    }

    private static Task task(ResultSet rs) throws SQLException {
        long eta = rs.getLong(8);
        Optional<Long> etaSeconds = rs.wasNull() ? Optional.empty() : Optional.of(eta);
        return new Task(rs.getString(1), new NodeId(rs.getString(2)), new NodeId(rs.getString(3)), rs.getString(4),
                json(rs.getString(5)), TaskState.parse(rs.getString(6)), rs.getInt(7) == 1, etaSeconds,
                json(rs.getString(9)), json(rs.getString(10)), artifacts(rs.getString(11)),
                Optional.ofNullable(rs.getString(12)), Instant.ofEpochMilli(rs.getLong(13)),
                Instant.ofEpochMilli(rs.getLong(14)));
    }

    private static Optional<JsonText> json(String text) {
        return Optional.ofNullable(text).map(JsonText::new);
    }

    private static String artifacts(List<TaskEvent.Artifact> artifacts) {
        try {
            return JSON.writeValueAsString(artifacts);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("artifacts always serialize", e);
        }
    }

    private static List<TaskEvent.Artifact> artifacts(String json) throws SQLException {
        try {
            return JSON.readValue(json, ARTIFACTS);
        } catch (JsonProcessingException e) {
            throw new SQLException("stored artifacts are not JSON: " + e.getMessage(), e);
        }
    }
}
