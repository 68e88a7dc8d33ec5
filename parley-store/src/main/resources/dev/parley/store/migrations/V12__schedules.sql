-- Scheduled sends: one row per schedule, kept after it ends (state done, failed or canceled).
-- The content is the send's (kind, text, data, corr_id, thread_id, meta); message_id is the
-- sender's key for creating the schedule, unique per sender. deliver_at (as written, local or
-- with its offset) or cron says when it fires, read in time_zone (IANA); next_at is the next
-- firing in UTC epoch ms, NULL once the schedule ended (ended_at). Firing an occurrence appends
-- its envelope and moves next_at in one transaction.
CREATE TABLE schedules (
    id              TEXT PRIMARY KEY,
    sender          TEXT NOT NULL,
    recipient       TEXT NOT NULL,
    kind            TEXT NOT NULL,
    text            TEXT,
    data            TEXT,
    corr_id         TEXT,
    thread_id       TEXT,
    message_id      TEXT,
    meta            TEXT,
    reply_within_ms INTEGER,
    deliver_at      TEXT,
    cron            TEXT,
    time_zone       TEXT NOT NULL,
    next_at         INTEGER,
    created_at      INTEGER NOT NULL,
    ended_at        INTEGER,
    last_fired_at   INTEGER,
    fired           INTEGER NOT NULL DEFAULT 0,
    skipped         INTEGER NOT NULL DEFAULT 0,
    state           TEXT NOT NULL,
    detail          TEXT,
    CHECK ((deliver_at IS NULL) <> (cron IS NULL))
);
CREATE INDEX schedules_due ON schedules (next_at) WHERE state = 'active';
CREATE INDEX schedules_by_sender ON schedules (sender, state);
CREATE UNIQUE INDEX schedules_by_message_id ON schedules (sender, message_id) WHERE message_id IS NOT NULL;
