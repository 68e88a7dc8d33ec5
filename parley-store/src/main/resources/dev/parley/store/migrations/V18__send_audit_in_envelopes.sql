-- The audit entry of an allowed send is most of what the audit log holds, and it was a row of
-- its own with two index entries in every commit, then rewritten by the fold. It is now written
-- in its envelope's row (the audit_* columns, its id drawn where every audit id is) and copied
-- into the audit table, already folded, by the writer's fold in bulk; audit_copied says up to
-- which envelope it has been copied. Queries read the entries not copied yet from the envelopes
-- past that position. Every envelope written before this migration had its entry written to
-- the audit table already.
ALTER TABLE envelopes ADD COLUMN audit_id INTEGER;
ALTER TABLE envelopes ADD COLUMN audit_at INTEGER;
ALTER TABLE envelopes ADD COLUMN audit_actor TEXT;
ALTER TABLE envelopes ADD COLUMN audit_action TEXT;
ALTER TABLE envelopes ADD COLUMN audit_target TEXT;
ALTER TABLE envelopes ADD COLUMN audit_reason TEXT;
ALTER TABLE envelopes ADD COLUMN audit_policy_version TEXT;
ALTER TABLE envelopes ADD COLUMN audit_rule TEXT;
CREATE TABLE audit_copied (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    pos INTEGER NOT NULL
);
INSERT INTO audit_copied (one, pos) SELECT 1, coalesce(max(pos), 0) FROM envelopes;
