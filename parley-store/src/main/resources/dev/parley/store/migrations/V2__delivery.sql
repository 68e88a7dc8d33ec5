-- Delivery semantics: topics on envelopes, per-node delivery settings, the persisted
-- schedule of pushes, redeliveries and reply deadlines, dead letters, subscriptions, tasks.
ALTER TABLE envelopes ADD COLUMN topic TEXT;
CREATE INDEX envelopes_replies ON envelopes (corr_id) WHERE kind = 'reply';

-- The webhook secret signs pushes, so it is kept sealed (AES-GCM under the hub's key),
-- not hashed: the hub must be able to use it.
CREATE TABLE delivery_policies (
    node_id             TEXT PRIMARY KEY,
    webhook_url         TEXT,
    webhook_secret      TEXT,
    max_attempts        INTEGER NOT NULL,
    base_ms             INTEGER NOT NULL,
    cap_ms              INTEGER NOT NULL,
    redeliver_after_ms  INTEGER,
    updated_at          INTEGER NOT NULL
);

-- Work the hub owes an envelope at a time. purpose: push (a webhook attempt),
-- redeliver (an ack deadline), deadline (a reply deadline). Rows survive restarts, so a
-- restarted hub resumes the schedule where it stood.
CREATE TABLE schedule (
    envelope_id  TEXT NOT NULL,
    purpose      TEXT NOT NULL,
    due_at       INTEGER NOT NULL,
    attempt      INTEGER NOT NULL,
    PRIMARY KEY (envelope_id, purpose)
);
CREATE INDEX schedule_by_due ON schedule (due_at);

CREATE TABLE dead_letters (
    envelope_id  TEXT PRIMARY KEY,
    node         TEXT NOT NULL,
    reason       TEXT NOT NULL,
    attempts     INTEGER NOT NULL,
    at           INTEGER NOT NULL
);
CREATE INDEX dead_letters_by_node ON dead_letters (node, at);

CREATE TABLE subscriptions (
    topic       TEXT NOT NULL,
    node        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (topic, node)
);

CREATE TABLE tasks (
    id           TEXT PRIMARY KEY,
    creator      TEXT NOT NULL,
    assignee     TEXT NOT NULL,
    title        TEXT NOT NULL,
    input        TEXT,
    state        TEXT NOT NULL,
    ephemeral    INTEGER NOT NULL,
    eta_seconds  INTEGER,
    progress     TEXT,
    result       TEXT,
    artifacts    TEXT NOT NULL,
    reason       TEXT,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE INDEX tasks_by_assignee ON tasks (assignee, state);
CREATE INDEX tasks_by_creator ON tasks (creator, state);
