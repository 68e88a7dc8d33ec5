-- Humans in chat rooms. A messaging group is one room (or DM) on one platform.
CREATE TABLE chat_groups (
    id              TEXT PRIMARY KEY,
    platform        TEXT NOT NULL,
    room            TEXT NOT NULL,
    kind            TEXT NOT NULL,
    name            TEXT NOT NULL,
    unknown_senders TEXT NOT NULL,
    approver        TEXT,
    denied_at       INTEGER,
    created_at      INTEGER NOT NULL,
    UNIQUE (platform, room)
);

-- The agents wired to a group, and when a message engages each.
CREATE TABLE chat_wirings (
    group_id TEXT NOT NULL REFERENCES chat_groups (id),
    agent    TEXT NOT NULL,
    mode     TEXT NOT NULL,
    pattern  TEXT,
    scope    TEXT NOT NULL,
    ignored  TEXT NOT NULL,
    PRIMARY KEY (group_id, agent)
);

-- The human node that speaks for each platform user.
CREATE TABLE chat_identities (
    platform  TEXT NOT NULL,
    user_id   TEXT NOT NULL,
    node      TEXT NOT NULL,
    PRIMARY KEY (platform, user_id)
);

-- Who may speak in a group: known members (approved, added), and passers-by of public groups.
CREATE TABLE chat_members (
    group_id  TEXT NOT NULL REFERENCES chat_groups (id),
    node      TEXT NOT NULL,
    known     INTEGER NOT NULL,
    joined_at INTEGER NOT NULL,
    PRIMARY KEY (group_id, node)
);

-- Threads an agent engaged in (mention-sticky).
CREATE TABLE chat_threads (
    group_id TEXT NOT NULL,
    agent    TEXT NOT NULL,
    thread   TEXT NOT NULL,
    PRIMARY KEY (group_id, agent, thread)
);

-- Pending approval cards with the message they hold; one per group and subject (the
-- sender's user id, or '' for a room card): the unique key is the "one card" rule.
-- An answered card is deleted.
CREATE TABLE chat_cards (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    group_id    TEXT NOT NULL REFERENCES chat_groups (id),
    subject     TEXT NOT NULL,
    approver    TEXT,
    raised_at   INTEGER NOT NULL,
    platform    TEXT NOT NULL,
    room        TEXT NOT NULL,
    room_kind   TEXT NOT NULL,
    room_name   TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    user_name   TEXT NOT NULL,
    message_id  TEXT NOT NULL,
    text        TEXT NOT NULL,
    mentions    INTEGER NOT NULL,
    thread      TEXT,
    reply_id    TEXT,
    reply_from  TEXT,
    reply_text  TEXT,
    said_at     INTEGER NOT NULL,
    user_tz     TEXT,
    UNIQUE (group_id, subject)
);

-- Hub-wide chat settings (the hub's approver).
CREATE TABLE chat_settings (
    key   TEXT PRIMARY KEY,
    value TEXT
);

-- Platforms whose adapter signs what it hands in (the generic webhook): the secret, sealed;
-- the URL its bridge takes chat messages out at.
CREATE TABLE chat_platforms (
    id           TEXT PRIMARY KEY,
    secret       TEXT NOT NULL,
    outbound_url TEXT,
    created_at   INTEGER NOT NULL
);
CREATE INDEX chat_identities_by_node ON chat_identities (node);
