-- +goose Up
-- The inbox's retention (internal/inbox Store.Purge, PORTAL_INBOX_READ_RETENTION and
-- PORTAL_INBOX_UNREAD_RETENTION): the items older than a day, oldest first, without reading every
-- person's inbox.
CREATE INDEX inbox_items_age ON inbox_items (created_at);

-- +goose Down
DROP INDEX inbox_items_age;
