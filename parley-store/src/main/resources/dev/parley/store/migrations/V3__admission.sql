-- Admission by invite and rate limits. Invite tokens are stored only as hashes, like node
-- tokens. An invite is consumed by its redeem (redeemed_at), in the same transaction that
-- creates its node and records the ticket's jti.
CREATE TABLE invites (
    id             TEXT PRIMARY KEY,
    token_hash     TEXT NOT NULL UNIQUE,
    node_id        TEXT,
    kind           TEXT NOT NULL,
    parent         TEXT,
    labels         TEXT NOT NULL,
    creator        TEXT,
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    redeemed_at    INTEGER,
    redeemed_node  TEXT
);

-- Nonces already used, per scope ('exchange:<invite id>', 'rotate:<node id>'): the replay
-- guard. keep_until (null: for good) says when a row may be forgotten.
CREATE TABLE nonces (
    scope       TEXT NOT NULL,
    nonce       TEXT NOT NULL,
    used_at     INTEGER NOT NULL,
    keep_until  INTEGER,
    PRIMARY KEY (scope, nonce)
);
CREATE INDEX nonces_by_keep_until ON nonces (keep_until) WHERE keep_until IS NOT NULL;

-- Tickets redeemed, by jti; kept past their expiry so that a replay is answered as such.
CREATE TABLE used_tickets (
    jti         TEXT PRIMARY KEY,
    invite_id   TEXT NOT NULL,
    used_at     INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
);

-- The Ed25519 public key (base64url, raw 32 bytes) a node proved at admission.
CREATE TABLE node_keys (
    node_id     TEXT PRIMARY KEY,
    public_key  TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);

-- Per-node rate overrides (token bucket); nodes without a row use the hub's default.
CREATE TABLE node_limits (
    node_id     TEXT PRIMARY KEY,
    rate        REAL NOT NULL,
    burst       INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
