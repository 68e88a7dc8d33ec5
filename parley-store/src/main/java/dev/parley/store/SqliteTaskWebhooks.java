package dev.parley.store;

import dev.parley.core.AuditEntry;
import dev.parley.core.NodeId;
import dev.parley.core.Sealer;
import dev.parley.core.TaskWebhook;
import dev.parley.core.TaskWebhookStore;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The webhooks that follow tasks, on the hub's SQLite file. */
public final class SqliteTaskWebhooks implements TaskWebhookStore {
    private static final String COLUMNS = "task_id, id, owner, relay, url, token, auth_scheme, auth_credentials, format,"
            + " created_at";

    private final Writer writer;
    private final ReadPool readers;
    private final Sealer sealer;

    SqliteTaskWebhooks(Writer writer, ReadPool readers, Sealer sealer) {
        this.writer = writer;
        this.readers = readers;
        this.sealer = sealer;
    }

    @Override
    public void put(TaskWebhook w, AuditEntry audit) {
        writer.submit(tx -> {
            var upsert = tx.statements().get("INSERT OR REPLACE INTO task_webhooks (" + COLUMNS
                    + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
            upsert.setString(1, w.taskId());
            upsert.setString(2, w.id());
            upsert.setString(3, w.owner().value());
            upsert.setString(4, w.relay().value());
            upsert.setString(5, w.url());
            Rows.setNullable(upsert, 6, w.token().map(sealer::seal));
            Rows.setNullable(upsert, 7, w.authScheme());
            Rows.setNullable(upsert, 8, w.authCredentials().map(sealer::seal));
            upsert.setString(9, w.format());
            upsert.setLong(10, w.createdAt().toEpochMilli());
            upsert.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public boolean remove(String taskId, String id, AuditEntry audit) {
        return writer.submit(tx -> {
            var delete = tx.statements().get("DELETE FROM task_webhooks WHERE task_id = ? AND id = ?");
            delete.setString(1, taskId);
            delete.setString(2, id);
            boolean removed = delete.executeUpdate() == 1;
            if (removed) {
                Ledger.insertAudit(tx, audit);
            }
            return removed;
        });
    }

    @Override
    public Optional<TaskWebhook> webhook(String taskId, String id) {
        return readers.read(s -> {
            var select = s.get("SELECT " + COLUMNS + " FROM task_webhooks WHERE task_id = ? AND id = ?");
            select.setString(1, taskId);
            select.setString(2, id);
            List<TaskWebhook> found = rows(select.executeQuery());
            return found.stream().findFirst();
        });
    }

    @Override
    public List<TaskWebhook> webhooks(String taskId) {
        return readers.read(s -> {
            var select = s.get("SELECT " + COLUMNS + " FROM task_webhooks WHERE task_id = ? ORDER BY created_at, id");
            select.setString(1, taskId);
            return rows(select.executeQuery());
        });
    }

    @Override
    public List<TaskWebhook> all() {
        return readers.read(s -> rows(s.get("SELECT " + COLUMNS + " FROM task_webhooks ORDER BY created_at, id")
                .executeQuery()));
    }

    private List<TaskWebhook> rows(ResultSet rs) throws SQLException {
        try (rs) {
            List<TaskWebhook> out = new ArrayList<>();
            while (rs.next()) {
                out.add(new TaskWebhook(rs.getString(1), rs.getString(2), new NodeId(rs.getString(3)),
                        new NodeId(rs.getString(4)), rs.getString(5), Optional.ofNullable(rs.getString(6)).map(sealer::open),
                        Optional.ofNullable(rs.getString(7)), Optional.ofNullable(rs.getString(8)).map(sealer::open),
                        rs.getString(9), Instant.ofEpochMilli(rs.getLong(10))));
            }
            return out;
        }
    }
}
