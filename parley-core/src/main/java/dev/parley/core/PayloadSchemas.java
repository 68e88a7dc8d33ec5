package dev.parley.core;

import java.util.Optional;

/**
 * The schemas that {@code data} of some kinds must satisfy. Checked once per envelope a node
 * composes (a send, a reply, a topic event, a broadcast), before anything is written.
 */
public interface PayloadSchemas {

    /** No schemas: any data goes. */
    PayloadSchemas NONE = (kind, data) -> {
    };

    /**
     * Refuses {@code data} for an envelope of {@code kind} when the kind has a schema and
     * the data breaks it (or is absent): {@link ErrorCode#SCHEMA_VIOLATION} with the details
     * {@code pointer} (a JSON pointer into data, "" for data itself) and {@code detail}.
     */
    void check(String kind, Optional<JsonText> data);
}
