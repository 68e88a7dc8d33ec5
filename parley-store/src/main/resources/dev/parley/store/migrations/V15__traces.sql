-- Each envelope's place in its distributed trace: traceId:spanId[:parentSpanId] (W3C ids, hex).
-- Envelopes stored before have none; they read as a context made from their id.
ALTER TABLE envelopes ADD COLUMN trace_context TEXT;
-- A task's moves continue the trace of the envelope that handed it over: found by the task id.
CREATE INDEX envelopes_tasks ON envelopes (corr_id) WHERE kind = 'task';

-- Agent turns (one node working one envelope) and their trace events, as the trace contract wrote them.
CREATE TABLE turns (
    node        TEXT    NOT NULL,
    id          TEXT    NOT NULL,
    envelope_id TEXT    NOT NULL,
    adapter     TEXT    NOT NULL,
    trace_id    TEXT    NOT NULL,
    span_id     TEXT    NOT NULL,
    parent_span TEXT,
    started_at  INTEGER NOT NULL,
    stopped_at  INTEGER,
    events      INTEGER NOT NULL,
    chars       INTEGER NOT NULL,
    PRIMARY KEY (node, id)
) WITHOUT ROWID;
CREATE INDEX turns_by_trace ON turns (trace_id, started_at);

CREATE TABLE trace_events (
    node  TEXT    NOT NULL,
    turn  TEXT    NOT NULL,
    seq   INTEGER NOT NULL,
    id    TEXT    NOT NULL,
    type  TEXT    NOT NULL,
    at    INTEGER NOT NULL,
    body  TEXT    NOT NULL,
    PRIMARY KEY (node, turn, seq),
    UNIQUE (node, turn, id)
) WITHOUT ROWID;
