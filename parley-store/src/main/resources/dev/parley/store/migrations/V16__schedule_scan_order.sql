-- The dispatcher pages through due work in (due_at, envelope_id, purpose) order, resuming
-- after the last entry it read: this index serves that order and seek, which due_at alone
-- could not (every page would sort all of its due entries).
DROP INDEX schedule_by_due;
CREATE INDEX schedule_by_due ON schedule (due_at, envelope_id, purpose);
