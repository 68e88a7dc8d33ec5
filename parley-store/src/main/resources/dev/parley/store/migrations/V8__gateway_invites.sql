-- Invites of new gateways into the federation. Like node invites, the token is kept only
-- as a hash; an invite is used once (redeemed_at), by the exchange that hands out the
-- gateway's NATS credentials, in the transaction that writes its audit entry.
CREATE TABLE gateway_invites (
    id          TEXT PRIMARY KEY,
    token_hash  TEXT NOT NULL UNIQUE,
    gateway     TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    redeemed_at INTEGER
);
