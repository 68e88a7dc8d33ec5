-- Folding 2,000 entries (100 ms of 64 senders) into the two by-node indexes held the writer
-- about 9 ms ten times a second, and every send waited behind it (BENCHMARKS.md, "Issue 15,
-- stop 41"). The by-node index moves to a file of its own, audit-nodes.db, which a thread of
-- its own keeps from the folded entries (AuditNodeIndex); queries read from it what it has
-- taken in and the rest from the audit table by position. store_identity tells that file which
-- store it indexes, so that one left beside another store (a restored copy) is rebuilt.
DROP INDEX audit_by_actor;
DROP INDEX audit_by_target;
CREATE TABLE store_identity (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    id  TEXT NOT NULL
);
INSERT INTO store_identity (one, id) VALUES (1, lower(hex(randomblob(16))));
