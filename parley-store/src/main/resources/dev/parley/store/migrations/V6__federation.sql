-- Federation (issue 11). A node another gateway owns is mirrored here from the state room,
-- with its owner in `gateway` and no token; NULL means this hub owns the node (and always,
-- for a single-host hub).
ALTER TABLE nodes ADD COLUMN gateway TEXT;

-- The transactional outbox: what this hub still owes another gateway, marked in the same
-- transaction as the change it tells of, cleared once the gateway's outbox stream has
-- acknowledged the publication. Drained in pos order. kind: 'envelope' (the envelope
-- itself, for a node `gateway` owns) or 'ack' (a step of an envelope sent from a node
-- `gateway` owns: accepted, delivered, processed, failed, replied).
CREATE TABLE relay (
    pos          INTEGER PRIMARY KEY,
    gateway      TEXT NOT NULL,
    kind         TEXT NOT NULL,
    envelope_id  TEXT NOT NULL,
    state        TEXT,
    at           INTEGER NOT NULL,
    detail       TEXT
);

-- Per-source ingest cursors: the last stream sequence of gateway `source`'s outbox that
-- this hub has taken in (committed with what it took in).
CREATE TABLE ingest_cursors (
    source      TEXT PRIMARY KEY,
    stream_seq  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
