-- +goose Up
-- meta holds facts about the database itself: which engine made it and, once done, that the
-- one-time import of an older portal's state ran (internal/stateimport).
CREATE TABLE portal_meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- +goose Down
DROP TABLE portal_meta;
