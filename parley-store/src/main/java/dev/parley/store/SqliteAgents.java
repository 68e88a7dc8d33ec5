package dev.parley.store;

import dev.parley.core.AgentStore;
import dev.parley.core.AuditEntry;
import dev.parley.core.Node;
import dev.parley.core.NodeId;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** {@link AgentStore} on the hub's SQLite file: table {@code agents}, each row beside its node. */
public final class SqliteAgents implements AgentStore {
    private final Writer writer;
    private final ReadPool readers;

    SqliteAgents(Writer writer, ReadPool readers) {
        this.writer = writer;
        this.readers = readers;
    }

    @Override
    public void createAgent(Node node, String tokenHash, AuditEntry audit, String spec) {
        writer.submit(tx -> {
            Ledger.insertNode(tx.statements(), node, tokenHash, Optional.empty());
            var insert = tx.statements().get("INSERT INTO agents (id, spec, created_at) VALUES (?, ?, ?)");
            insert.setString(1, node.id().value());
            insert.setString(2, spec);
            insert.setLong(3, audit.at().toEpochMilli());
            insert.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public void halted(NodeId id, Optional<Instant> stoppedAt, Optional<String> failure, AuditEntry audit) {
        writer.submit(tx -> {
            var update = tx.statements().get("UPDATE agents SET stopped_at = ?, failure = ? WHERE id = ?");
            Rows.setNullableMillis(update, 1, stoppedAt);
            Rows.setNullable(update, 2, failure);
            update.setString(3, id.value());
            update.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public Optional<Stored> agent(NodeId id) {
        return Optional.ofNullable(select(Optional.of(id)).get(id));
    }

    @Override
    public Map<NodeId, Stored> agents() {
        return select(Optional.empty());
    }

    /** The agents whose nodes are not deleted: {@code only} that one, or all. */
    private Map<NodeId, Stored> select(Optional<NodeId> only) {
        return readers.read(s -> {
            var select = s.get("SELECT a.id, a.spec, a.stopped_at, a.failure FROM agents a JOIN nodes n ON n.id = a.id"
                    + " WHERE n.deleted_at IS NULL AND (?1 IS NULL OR a.id = ?1) ORDER BY a.id");
            select.setString(1, only.map(NodeId::value).orElse(null));
            Map<NodeId, Stored> out = new LinkedHashMap<>();
            try (var rs = select.executeQuery()) {
                while (rs.next()) {
                    out.put(new NodeId(rs.getString(1)), new Stored(rs.getString(2), Rows.optionalMillis(rs, 3),
                            Optional.ofNullable(rs.getString(4))));
                }
            }
            return out;
        });
    }
}
