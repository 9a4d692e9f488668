-- +goose Up
-- The outbox's retention (PORTAL_MAIL_RETENTION, internal/outbox Purge): the rows that ended,
-- oldest first, without reading the table. Its predicate is the purge's own, word for word.
CREATE INDEX mail_outbox_ended ON mail_outbox (updated_at) WHERE status IN ('sent', 'refused', 'failed', 'unknown');

-- +goose Down
DROP INDEX mail_outbox_ended;
