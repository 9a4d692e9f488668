-- +goose Up
-- The session package's small key-value store (internal/session, sqlKV): server-side sessions
-- (sealed: the database holds no token in clear), the cookie store's revocation list of token
-- ids, and sets of session ids by subject and by provider session. A row whose expires_at
-- (unix microseconds) has passed is absent; expired rows are deleted now and then.
CREATE TABLE session_values (
    key        TEXT PRIMARY KEY,
    value      BYTEA NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX session_values_expires_at ON session_values (expires_at);

CREATE TABLE session_members (
    set_key    TEXT NOT NULL,
    member     TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (set_key, member)
);
CREATE INDEX session_members_expires_at ON session_members (expires_at);

-- +goose Down
DROP TABLE session_members;
DROP TABLE session_values;
