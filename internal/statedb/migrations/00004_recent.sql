-- +goose Up
-- recent_items are each user's recent quotes and contracts (internal/recent): the newest 50 of a
-- kind per user, kept 90 days after they were last opened. user_key is a hash of the user's
-- subject (the subject itself is not kept).
CREATE TABLE recent_items (
    user_key      TEXT NOT NULL,
    kind          TEXT NOT NULL,
    item_id       BIGINT NOT NULL,
    number        TEXT NOT NULL,
    quote_id      BIGINT NOT NULL,
    cpq_id        INTEGER NOT NULL,
    customer_id   INTEGER NOT NULL,
    customer      TEXT NOT NULL,
    total         TEXT NOT NULL,
    has_totals    INTEGER NOT NULL,  -- 0/1: the amounts below were known
    oneoff_cents  BIGINT NOT NULL,
    monthly_cents BIGINT NOT NULL,
    status        TEXT NOT NULL,
    at            BIGINT NOT NULL,   -- last opened or changed, unix microseconds
    PRIMARY KEY (user_key, kind, item_id)
);
-- A user's list, newest first; and the expiry.
CREATE INDEX recent_items_user_at ON recent_items (user_key, kind, at);
CREATE INDEX recent_items_at ON recent_items (at);

-- +goose Down
DROP TABLE recent_items;
