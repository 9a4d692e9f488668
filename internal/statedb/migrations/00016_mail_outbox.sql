-- +goose Up
-- mail_outbox holds one row per e-mail to one recipient (internal/outbox, docs/mail.md): written
-- before anything is sent, claimed by one replica with a lease on the database's clock, and moved
-- to "sending" (committed) before the SMTP conversation starts. A row that reached "sending" is
-- never sent again by anyone but its holder's own answer: a holder that vanished leaves it
-- "unknown" (at most once; the person is told to check).
CREATE TABLE mail_outbox (
    id              TEXT PRIMARY KEY,
    -- owner is the subject of the person who sent it; topic what it is about ("quote:123");
    -- batch the one send (one click) it belongs to, with one row per recipient.
    owner           TEXT NOT NULL,
    topic           TEXT NOT NULL,
    batch           TEXT NOT NULL,
    recipient       TEXT NOT NULL,
    lang            TEXT NOT NULL DEFAULT '',
    -- message_id is the Message-ID header, fixed when the row is written (a copy a server kept
    -- is recognisable by it).
    message_id      TEXT NOT NULL,
    from_name       TEXT NOT NULL DEFAULT '',
    reply_to        TEXT NOT NULL DEFAULT '',
    subject         TEXT NOT NULL,
    text_body       TEXT NOT NULL,
    html_body       TEXT NOT NULL,
    attachment_name TEXT NOT NULL DEFAULT '',
    attachment_type TEXT NOT NULL DEFAULT '',
    -- attachment is dropped (NULL) once the row ends (sent, refused, failed, unknown).
    attachment      BYTEA,
    -- version is the topic's state the mail shows (the offer's quote fingerprint), so a later
    -- send can say what changed since.
    version         TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt    BIGINT NOT NULL DEFAULT 0,
    lease_holder    TEXT NOT NULL DEFAULT '',
    lease_expires   BIGINT NOT NULL DEFAULT 0,
    -- error is the server's answer of the last failed attempt (refused, failed, retrying).
    error           TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    sent_at         BIGINT NOT NULL DEFAULT 0
);
-- The worker's scans: rows due, and rows whose holder's lease ran out (both small).
CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt) WHERE status = 'queued';
CREATE INDEX mail_outbox_sending ON mail_outbox (lease_expires) WHERE status = 'sending';
-- A topic's mails (the quote page), newest first.
CREATE INDEX mail_outbox_topic ON mail_outbox (topic, created_at);

-- +goose Down
DROP TABLE mail_outbox;
