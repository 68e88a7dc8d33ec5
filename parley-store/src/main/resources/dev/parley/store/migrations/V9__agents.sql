-- Managed agents: the spec of each managed node, as its creator wrote it (YAML). Secrets are
-- never in it: a spec names them by file. Written with its node, in one transaction.
-- stopped_at: stopped by its parent or the admin; failure: why its command could not be
-- started. Either keeps it from running, across hub restarts, until it is restarted.
CREATE TABLE agents (
    id         TEXT PRIMARY KEY REFERENCES nodes (id),
    spec       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    stopped_at INTEGER,
    failure    TEXT
);
