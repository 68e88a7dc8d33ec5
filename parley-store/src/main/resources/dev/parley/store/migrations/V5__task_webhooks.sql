-- Webhooks that follow one task (A2A push-notification configs). Each push travels as an
-- envelope from the owner to the relay address, whose row in delivery_policies carries the
-- webhook URL, so pushes share the schedule, retries and dead letters of every webhook.
-- auth_credentials is sealed like webhook secrets.
CREATE TABLE task_webhooks (
    task_id           TEXT NOT NULL,
    id                TEXT NOT NULL,
    owner             TEXT NOT NULL,
    relay             TEXT NOT NULL,
    url               TEXT NOT NULL,
    token             TEXT,
    auth_scheme       TEXT,
    auth_credentials  TEXT,
    format            TEXT NOT NULL,
    created_at        INTEGER NOT NULL,
    PRIMARY KEY (task_id, id)
);
CREATE INDEX task_webhooks_by_relay ON task_webhooks (relay);
