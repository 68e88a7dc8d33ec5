package dev.parley.core;

import java.util.List;

/** Reading the audit log: the admin's alone. */
public final class AuditLog {
    private final EventStore store;

    public AuditLog(EventStore store) {
        this.store = store;
    }

    /** The entries {@code query} matches, newest first. */
    public List<AuditRecord> read(Principal caller, AuditQuery query) {
        if (!(caller instanceof Principal.Admin)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the admin may read the audit log");
        }
        return store.audit(query);
    }
}
