package dev.parley.core;

import java.util.Optional;

/** A filter over the audit log: entries whose actor or target is {@code node}, newest first. */
public record AuditQuery(Optional<String> node, Optional<AuditEntry.Decision> decision, int limit) {
}
