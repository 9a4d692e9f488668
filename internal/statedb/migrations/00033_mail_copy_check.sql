-- +goose Up
-- The outbox's "check after" (internal/mailcopy, docs/mail.md "Exactly once: the copy check"):
-- with PORTAL_MAIL_COPY_TO each mail also goes to a copy address (an envelope recipient only, as a
-- Bcc) whose mailbox the portal reads over IMAP. The server takes a message for all its
-- recipients at once, so the copy's presence proves the mail was taken.
--
-- copy_to is the copy address a mail's last attempt carried ('' without the check): only such a
-- mail in doubt ("unknown") can be checked, and only in that address's mailbox. Its attachment is
-- kept while it is unknown, as it may be sent again.
ALTER TABLE mail_outbox ADD COLUMN copy_to TEXT NOT NULL DEFAULT '';
-- recovery is how a mail in doubt was resolved: '' never in doubt (or not resolved), 'confirmed'
-- (its copy was found: the server had taken it; sent_at is when the copy arrived), 'resent' (no
-- copy within the grace period: queued again with the same Message-ID).
ALTER TABLE mail_outbox ADD COLUMN recovery TEXT NOT NULL DEFAULT '';
-- The check's scan of the mails in doubt (few).
CREATE INDEX mail_outbox_unknown ON mail_outbox (updated_at) WHERE status = 'unknown';
-- The check of one copy mailbox: one row per mailbox, run by one replica at a time (holder and
-- lease_expires on the database's clock), due at next_run (internal/lease).
CREATE TABLE mail_copy_check (
    mailbox       TEXT PRIMARY KEY,
    holder        TEXT NOT NULL DEFAULT '',
    lease_expires BIGINT NOT NULL DEFAULT 0,
    next_run      BIGINT NOT NULL DEFAULT 0,
    runs          BIGINT NOT NULL DEFAULT 0,
    last_run      BIGINT NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE mail_copy_check;
DROP INDEX mail_outbox_unknown;
ALTER TABLE mail_outbox DROP COLUMN recovery;
ALTER TABLE mail_outbox DROP COLUMN copy_to;
