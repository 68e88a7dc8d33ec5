package dev.parley.core;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static dev.parley.core.MemoryHub.ADMIN;
import static dev.parley.core.MemoryHub.as;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The audit log is read by the admin alone. */
class AuditLogTest {
    private final MemoryHub hub = new MemoryHub();
    private final AuditLog log = new AuditLog(hub.store);

    @Test
    void theAdminReadsTheEntriesTheQueryMatchesNewestFirst() {
        hub.node("lead", null);
        hub.node("a1", "lead");

        List<AuditRecord> created = log.read(ADMIN, new AuditQuery(Optional.empty(), Optional.empty(),
                Optional.empty(), Optional.of("node.create"), Optional.empty(), Optional.empty(), Optional.empty(), 10));
        assertEquals(List.of("a1", "lead"), created.stream().map(r -> r.entry().target()).toList());
    }

    @Test
    void aNodeMayNotReadItEvenAboutItself() {
        hub.node("lead", null);
        ParleyException e = assertThrows(ParleyException.class, () -> log.read(as("lead"),
                new AuditQuery(Optional.of("lead"), Optional.empty(), 10)));
        assertEquals(ErrorCode.FORBIDDEN, e.code());
        assertEquals("only the admin may read the audit log", e.getMessage());
    }
}
