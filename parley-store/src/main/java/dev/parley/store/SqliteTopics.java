package dev.parley.store;

import dev.parley.core.AuditEntry;
import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Subscribed;
import dev.parley.core.Subscription;
import dev.parley.core.TopicName;
import dev.parley.core.TopicStore;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** Topic subscriptions and the fan-out of publications, on the hub's SQLite file. */
public final class SqliteTopics implements TopicStore {
    private final Writer writer;
    private final ReadPool readers;

    SqliteTopics(Writer writer, ReadPool readers) {
        this.writer = writer;
        this.readers = readers;
    }

    @Override
    public Subscribed subscribe(Subscription wanted, AuditEntry audit) {
        return writer.submit(tx -> {
            var earlier = tx.statements().get("SELECT created_at FROM subscriptions WHERE topic = ? AND node = ?");
            earlier.setString(1, wanted.topic().value());
            earlier.setString(2, wanted.node().value());
            try (var rs = earlier.executeQuery()) {
                if (rs.next()) {
                    return new Subscribed(new Subscription(wanted.topic(), wanted.node(), Instant.ofEpochMilli(rs.getLong(1))),
                            false);
                }
            }
            var insert = tx.statements().get("INSERT INTO subscriptions (topic, node, created_at) VALUES (?, ?, ?)");
            insert.setString(1, wanted.topic().value());
            insert.setString(2, wanted.node().value());
            insert.setLong(3, wanted.createdAt().toEpochMilli());
            insert.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return new Subscribed(wanted, true);
        });
    }

    @Override
    public void unsubscribe(TopicName topic, NodeId node, AuditEntry audit) {
        writer.submit(tx -> {
            var delete = tx.statements().get("DELETE FROM subscriptions WHERE topic = ? AND node = ?");
            delete.setString(1, topic.value());
            delete.setString(2, node.value());
            if (delete.executeUpdate() == 0) {
                throw new ParleyException(ErrorCode.NOT_SUBSCRIBED, node + " is not subscribed to topic " + topic);
            }
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public List<Subscription> subscribers(TopicName topic) {
        return readers.read(s -> {
            var select = s.get("SELECT node, created_at FROM subscriptions WHERE topic = ? ORDER BY created_at, node");
            select.setString(1, topic.value());
            List<Subscription> out = new ArrayList<>();
            try (var rs = select.executeQuery()) {
                while (rs.next()) {
                    out.add(new Subscription(topic, new NodeId(rs.getString(1)), Instant.ofEpochMilli(rs.getLong(2))));
                }
            }
            return out;
        });
    }

    @Override
    public List<Envelope> appendAll(List<Envelope> drafts, List<AuditEntry> audits) {
        return writer.submit(tx -> {
            List<Envelope> appended = new ArrayList<>(drafts.size());
            for (Envelope draft : drafts) {
                appended.add(Ledger.append(tx, draft));
            }
            for (AuditEntry audit : audits) {
                Ledger.insertAudit(tx, audit);
            }
            return appended;
        });
    }
}
