-- +goose Up
-- Bounces (internal/bounce, docs/mail.md "Bounces"): a delivery status notification read from the
-- bounce mailbox ends a sent mail as "bounced" (dsn_status 5.x.x), or notes a delay on it
-- (dsn_status 4.x.x, the status stays "sent"). dsn_text is the reporting server's diagnostic.
ALTER TABLE mail_outbox ADD COLUMN dsn_status TEXT NOT NULL DEFAULT '';
ALTER TABLE mail_outbox ADD COLUMN dsn_text TEXT NOT NULL DEFAULT '';
ALTER TABLE mail_outbox ADD COLUMN dsn_at BIGINT NOT NULL DEFAULT 0;
-- A DSN names its mail by Message-ID.
CREATE INDEX mail_outbox_message ON mail_outbox (message_id);
-- The retention's partial index, with "bounced" among the ended statuses (word for word the
-- purge's predicate).
DROP INDEX mail_outbox_ended;
CREATE INDEX mail_outbox_ended ON mail_outbox (updated_at) WHERE status IN ('sent', 'refused', 'failed', 'unknown', 'bounced');
-- The bounce mailbox's poll: one row per mailbox, run by one replica at a time (holder and
-- lease_expires on the database's clock), due at next_run. uid_validity and last_uid are how far
-- it has read (IMAP UIDs only grow while UIDVALIDITY stays): nothing is read twice, nothing is
-- skipped over a restart.
CREATE TABLE mail_bounce_poll (
    mailbox       TEXT PRIMARY KEY,
    holder        TEXT NOT NULL DEFAULT '',
    lease_expires BIGINT NOT NULL DEFAULT 0,
    next_run      BIGINT NOT NULL DEFAULT 0,
    uid_validity  BIGINT NOT NULL DEFAULT 0,
    last_uid      BIGINT NOT NULL DEFAULT 0,
    runs          BIGINT NOT NULL DEFAULT 0,
    last_run      BIGINT NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE mail_bounce_poll;
DROP INDEX mail_outbox_ended;
CREATE INDEX mail_outbox_ended ON mail_outbox (updated_at) WHERE status IN ('sent', 'refused', 'failed', 'unknown');
DROP INDEX mail_outbox_message;
ALTER TABLE mail_outbox DROP COLUMN dsn_at;
ALTER TABLE mail_outbox DROP COLUMN dsn_text;
ALTER TABLE mail_outbox DROP COLUMN dsn_status;
