-- Relay positions are never reused. The relay reads on after the last position the outbox
-- stream acknowledged while the clearing of those marks commits behind it; a plain rowid
-- could hand a cleared position to a new mark, which the relay would then never read.
CREATE TABLE relay_positions (
    pos          INTEGER PRIMARY KEY AUTOINCREMENT,
    gateway      TEXT NOT NULL,
    kind         TEXT NOT NULL,
    envelope_id  TEXT NOT NULL,
    state        TEXT,
    at           INTEGER NOT NULL,
    detail       TEXT
);
INSERT INTO relay_positions (pos, gateway, kind, envelope_id, state, at, detail)
    SELECT pos, gateway, kind, envelope_id, state, at, detail FROM relay;
DROP TABLE relay;
ALTER TABLE relay_positions RENAME TO relay;
