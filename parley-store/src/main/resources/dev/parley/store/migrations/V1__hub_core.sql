-- Nodes keep their row after deletion (deleted_at set, token cleared) so that lineage
-- stays recorded and a retired id is never handed out again.
CREATE TABLE nodes (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    parent      TEXT,
    depth       INTEGER NOT NULL,
    labels      TEXT NOT NULL,
    token_hash  TEXT,
    created_at  INTEGER NOT NULL,
    deleted_at  INTEGER
);
CREATE INDEX nodes_by_parent ON nodes (parent);
CREATE UNIQUE INDEX nodes_by_token ON nodes (token_hash) WHERE token_hash IS NOT NULL;

CREATE TABLE grants (
    id          TEXT PRIMARY KEY,
    from_node   TEXT NOT NULL,
    to_node     TEXT NOT NULL,
    expires_at  INTEGER,
    note        TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);

-- One row per envelope. (to_node, seq) is the inbox order; delivered_at is the first
-- delivery, and the partial index over undelivered rows serves cursor-less replay.
CREATE TABLE envelopes (
    pos             INTEGER PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    to_node         TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    from_node       TEXT NOT NULL,
    kind            TEXT NOT NULL,
    text            TEXT,
    data            TEXT,
    corr_id         TEXT,
    thread_id       TEXT,
    message_id      TEXT,
    meta            TEXT,
    created_at      INTEGER NOT NULL,
    attempt         INTEGER NOT NULL,
    route           TEXT NOT NULL,
    policy_version  TEXT NOT NULL,
    state           TEXT NOT NULL,
    delivered_at    INTEGER,
    UNIQUE (to_node, seq)
);
CREATE UNIQUE INDEX envelopes_by_message_id ON envelopes (from_node, message_id) WHERE message_id IS NOT NULL;
CREATE INDEX envelopes_undelivered ON envelopes (to_node, seq) WHERE delivered_at IS NULL;

-- Transitions after acceptance and first delivery (those two live on the envelope row).
CREATE TABLE timeline (
    envelope_id  TEXT NOT NULL,
    at           INTEGER NOT NULL,
    state        TEXT NOT NULL,
    detail       TEXT NOT NULL
);
CREATE INDEX timeline_by_envelope ON timeline (envelope_id);

CREATE TABLE audit (
    id              INTEGER PRIMARY KEY,
    at              INTEGER NOT NULL,
    actor           TEXT NOT NULL,
    action          TEXT NOT NULL,
    target          TEXT NOT NULL,
    decision        TEXT NOT NULL,
    reason          TEXT NOT NULL,
    envelope_id     TEXT,
    policy_version  TEXT NOT NULL
);
CREATE INDEX audit_by_actor ON audit (actor, id);
CREATE INDEX audit_by_target ON audit (target, id);
