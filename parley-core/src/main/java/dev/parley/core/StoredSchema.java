package dev.parley.core;

import java.time.Instant;

/** A kind's payload schema as stored; {@code version} names this exact document. */
public record StoredSchema(String kind, JsonText schema, String version, Instant updatedAt) {
}
