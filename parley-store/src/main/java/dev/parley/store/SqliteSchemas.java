package dev.parley.store;

import dev.parley.core.AuditEntry;
import dev.parley.core.ErrorCode;
import dev.parley.core.JsonText;
import dev.parley.core.ParleyException;
import dev.parley.core.SchemaStore;
import dev.parley.core.StoredSchema;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** Payload schemas on the hub's SQLite file. */
public final class SqliteSchemas implements SchemaStore {
    private final Writer writer;
    private final ReadPool readers;

    SqliteSchemas(Writer writer, ReadPool readers) {
        this.writer = writer;
        this.readers = readers;
    }

    @Override
    public void putSchema(StoredSchema schema, AuditEntry audit) {
        writer.submit(tx -> {
            var upsert = tx.statements().get("INSERT INTO payload_schemas (kind, schema, version, updated_at)"
                    + " VALUES (?, ?, ?, ?) ON CONFLICT (kind) DO UPDATE SET schema = excluded.schema,"
                    + " version = excluded.version, updated_at = excluded.updated_at");
            upsert.setString(1, schema.kind());
            upsert.setString(2, schema.schema().json());
            upsert.setString(3, schema.version());
            upsert.setLong(4, schema.updatedAt().toEpochMilli());
            upsert.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public void deleteSchema(String kind, AuditEntry audit) {
        writer.submit(tx -> {
            var delete = tx.statements().get("DELETE FROM payload_schemas WHERE kind = ?");
            delete.setString(1, kind);
            if (delete.executeUpdate() == 0) {
                throw new ParleyException(ErrorCode.SCHEMA_NOT_FOUND, "no schema is set for kind " + kind);
            }
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public List<StoredSchema> schemas() {
        return readers.read(s -> {
            List<StoredSchema> out = new ArrayList<>();
            try (var rs = s.get("SELECT kind, schema, version, updated_at FROM payload_schemas ORDER BY kind")
                    .executeQuery()) {
                while (rs.next()) {
                    out.add(new StoredSchema(rs.getString(1), new JsonText(rs.getString(2)), rs.getString(3),
                            Instant.ofEpochMilli(rs.getLong(4))));
                }
            }
            return out;
        });
    }
}
