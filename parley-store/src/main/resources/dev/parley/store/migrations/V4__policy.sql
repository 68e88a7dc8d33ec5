-- Policy rules and payload schemas. The policy rule that decided (when one did) is kept
-- with the audit entry and with the envelope it let through (trace.rule).
ALTER TABLE audit ADD COLUMN rule TEXT;
ALTER TABLE envelopes ADD COLUMN rule TEXT;

-- Time filters and retention pruning walk the log by time; rule filters by rule.
CREATE INDEX audit_by_at ON audit (at);
CREATE INDEX audit_by_rule ON audit (rule, id) WHERE rule IS NOT NULL;

-- One JSON Schema (2020-12) per envelope kind, for the data of that kind.
CREATE TABLE payload_schemas (
    kind        TEXT PRIMARY KEY,
    schema      TEXT NOT NULL,
    version     TEXT NOT NULL,
    updated_at  INTEGER NOT NULL
);
