-- An inbox's order was the envelopes' UNIQUE (to_node, seq) index, keyed by inbox first: every
-- send put its entry on a page of its own inbox, so each commit wrote about one page of that
-- index to the WAL for every send in it, 11 of a commit's 25 pages with 64 busy inboxes
-- (BENCHMARKS.md, "Issue 15, stop 44"). The order now lives in inbox_order, which the writer's
-- fold fills in bulk every 100 ms, touching each inbox's page once a fold; reads take the
-- envelopes past the fold's mark by position (SqliteStore, InboxOrder). The mark, which said
-- how far the audit entries in envelope rows were copied, now says how far both were folded.
-- SQLite cannot drop a table's constraint, so the table is built again without it (the
-- procedure of "Making Other Kinds Of Table Schema Changes"; no foreign key is enforced here).
CREATE TABLE envelopes_v20 (
    pos                  INTEGER PRIMARY KEY,
    id                   TEXT NOT NULL UNIQUE,
    to_node              TEXT NOT NULL,
    seq                  INTEGER NOT NULL,
    from_node            TEXT NOT NULL,
    kind                 TEXT NOT NULL,
    text                 TEXT,
    data                 TEXT,
    corr_id              TEXT,
    thread_id            TEXT,
    message_id           TEXT,
    meta                 TEXT,
    created_at           INTEGER NOT NULL,
    attempt              INTEGER NOT NULL,
    route                TEXT NOT NULL,
    policy_version       TEXT NOT NULL,
    state                TEXT NOT NULL,
    delivered_at         INTEGER,
    topic                TEXT,
    rule                 TEXT,
    trace_context        TEXT,
    audit_id             INTEGER,
    audit_at             INTEGER,
    audit_actor          TEXT,
    audit_action         TEXT,
    audit_target         TEXT,
    audit_reason         TEXT,
    audit_policy_version TEXT,
    audit_rule           TEXT
);
INSERT INTO envelopes_v20 (pos, id, to_node, seq, from_node, kind, text, data, corr_id, thread_id, message_id, meta,
        created_at, attempt, route, policy_version, state, delivered_at, topic, rule, trace_context, audit_id, audit_at,
        audit_actor, audit_action, audit_target, audit_reason, audit_policy_version, audit_rule)
    SELECT pos, id, to_node, seq, from_node, kind, text, data, corr_id, thread_id, message_id, meta,
        created_at, attempt, route, policy_version, state, delivered_at, topic, rule, trace_context, audit_id, audit_at,
        audit_actor, audit_action, audit_target, audit_reason, audit_policy_version, audit_rule
    FROM envelopes ORDER BY pos;
DROP TABLE envelopes;
ALTER TABLE envelopes_v20 RENAME TO envelopes;
CREATE UNIQUE INDEX envelopes_by_message_id ON envelopes (from_node, message_id) WHERE message_id IS NOT NULL;
CREATE INDEX envelopes_undelivered ON envelopes (to_node, seq) WHERE delivered_at IS NULL;
CREATE INDEX envelopes_replies ON envelopes (corr_id) WHERE kind = 'reply';
CREATE INDEX envelopes_tasks ON envelopes (corr_id) WHERE kind = 'task';
ALTER TABLE audit_copied RENAME TO envelopes_folded;
CREATE TABLE inbox_order (
    to_node TEXT NOT NULL,
    seq     INTEGER NOT NULL,
    pos     INTEGER NOT NULL,
    PRIMARY KEY (to_node, seq)
) WITHOUT ROWID;
INSERT INTO inbox_order (to_node, seq, pos)
    SELECT to_node, seq, pos FROM envelopes WHERE pos <= (SELECT pos FROM envelopes_folded) ORDER BY to_node, seq;
