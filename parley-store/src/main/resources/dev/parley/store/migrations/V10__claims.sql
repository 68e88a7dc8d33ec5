-- The agent protocol's claims: one row per envelope its receiver claimed and that is not
-- settled yet (settling deletes it). claimed_at is NULL while a taken-back claim waits:
-- not_before says from when it may be claimed again; tries counts the claims taken back.
CREATE TABLE claims (
    envelope_id     TEXT PRIMARY KEY REFERENCES envelopes (id),
    node            TEXT NOT NULL,
    claimed_at      INTEGER,
    tries           INTEGER NOT NULL DEFAULT 0,
    not_before      INTEGER,
    declared_ms     INTEGER,
    heartbeat_at    INTEGER,
    tool            TEXT,
    tool_started_at INTEGER
);
CREATE INDEX claims_held ON claims (claimed_at) WHERE claimed_at IS NOT NULL;
