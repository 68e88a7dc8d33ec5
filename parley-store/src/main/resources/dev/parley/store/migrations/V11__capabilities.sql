-- Capabilities: one row per capability id ever published (unpublished ones keep theirs,
-- with unpublished_at, so their reviews still name them).
CREATE TABLE capabilities (
    id                 TEXT PRIMARY KEY,
    owner              TEXT NOT NULL,
    delegation_ref     TEXT NOT NULL,
    delegation_version TEXT NOT NULL,
    executor_ref       TEXT NOT NULL,
    executor_version   TEXT NOT NULL,
    contract           TEXT,
    eta_ms             INTEGER NOT NULL,
    published_at       INTEGER NOT NULL,
    unpublished_at     INTEGER
);

-- The tasks routed through a capability, written with the task: the owner they went to, and
-- when they are due (the capability's ETA, or the assignee's accepted one); eta_reviewed once
-- an ETA breach was raised for it, so it is raised once.
CREATE TABLE capability_tasks (
    task_id      TEXT PRIMARY KEY REFERENCES tasks (id),
    capability   TEXT NOT NULL,
    owner        TEXT NOT NULL,
    due_at       INTEGER NOT NULL,
    eta_reviewed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX capability_tasks_due ON capability_tasks (due_at) WHERE eta_reviewed = 0;

-- Reviews raised by capabilities' misfires; sample_ids is a JSON array of ids.
CREATE TABLE skill_reviews (
    id                 TEXT PRIMARY KEY,
    capability         TEXT NOT NULL,
    owner              TEXT NOT NULL,
    delegation_ref     TEXT NOT NULL,
    delegation_version TEXT NOT NULL,
    executor_ref       TEXT NOT NULL,
    executor_version   TEXT NOT NULL,
    failure            TEXT NOT NULL,
    detail             TEXT NOT NULL,
    sample_ids         TEXT NOT NULL,
    raised_at          INTEGER NOT NULL
);
CREATE INDEX skill_reviews_by_capability ON skill_reviews (capability, raised_at);
