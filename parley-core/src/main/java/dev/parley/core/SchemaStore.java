package dev.parley.core;

import java.util.List;

/** The durable side of payload schemas: one JSON Schema per envelope kind. */
public interface SchemaStore {

    /** Sets (or replaces) the schema of its kind, with its audit entry, in one transaction. */
    void putSchema(StoredSchema schema, AuditEntry audit);

    /** Removes the kind's schema; {@link ErrorCode#SCHEMA_NOT_FOUND} when there is none, and nothing is written. */
    void deleteSchema(String kind, AuditEntry audit);

    /** Every stored schema, by kind. */
    List<StoredSchema> schemas();
}
