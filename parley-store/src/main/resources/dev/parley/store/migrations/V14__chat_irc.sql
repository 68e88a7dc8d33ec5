-- IRC platforms: the hub connects to each network itself (no bridge, no signing secret).
-- One id is one platform: registering it as the other kind deletes it from the other table.
-- channels: the channel names the bot joins, one per line, in lower case.
-- password: the server's connection password, sealed like a bridge's secret.
CREATE TABLE chat_irc (
    id         TEXT PRIMARY KEY,
    host       TEXT NOT NULL,
    port       INTEGER NOT NULL,
    tls        INTEGER NOT NULL,
    nick       TEXT NOT NULL,
    channels   TEXT NOT NULL,
    password   TEXT,
    created_at INTEGER NOT NULL
);
