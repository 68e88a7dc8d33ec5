package dev.parley.core;

/** An audit entry as stored, with its position in the log. */
public record AuditRecord(long id, AuditEntry entry) {
}
