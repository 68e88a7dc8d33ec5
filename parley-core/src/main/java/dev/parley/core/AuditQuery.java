package dev.parley.core;

import java.time.Instant;
import java.util.Optional;

/**
 * A filter over the audit log, newest first: entries whose actor or target is {@code node},
 * with that decision, decided by that policy rule, of that action, at or after {@code since}
 * and before {@code until}, with an id below {@code before} (paging); at most {@code limit}.
 */
public record AuditQuery(Optional<String> node, Optional<AuditEntry.Decision> decision, Optional<String> rule,
                         Optional<String> action, Optional<Instant> since, Optional<Instant> until,
                         Optional<Long> before, int limit) {

    public AuditQuery(Optional<String> node, Optional<AuditEntry.Decision> decision, int limit) {
        this(node, decision, Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                limit);
    }

    /** The same filter for the page of entries older than {@code id}. */
    public AuditQuery before(long id) {
        return new AuditQuery(node, decision, rule, action, since, until, Optional.of(id), limit);
    }

    /** The same filter with another page size. */
    public AuditQuery limit(int newLimit) {
        return new AuditQuery(node, decision, rule, action, since, until, before, newLimit);
    }
}
