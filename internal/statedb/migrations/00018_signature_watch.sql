-- +goose Up
-- The signature watcher (internal/signwatch, docs/work-index.md "The signature watcher") re-reads
-- contracts out for signature with the token of a person who read them.
--
-- watch_tokens holds each signed-in person's latest access token, sealed (session.Sealer, keyed
-- by the session keys) with their subject and name: handed over when it changes (sign-in,
-- refresh), deleted when their sessions end. person is workindex.PersonKey(subject).
CREATE TABLE watch_tokens (
    person      TEXT   PRIMARY KEY,
    sealed      TEXT   NOT NULL,
    fingerprint TEXT   NOT NULL,
    expires_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);

-- watch_leases: one replica watches at a time; the lease runs out by the database's clock.
CREATE TABLE watch_leases (
    name     TEXT   PRIMARY KEY,
    holder   TEXT   NOT NULL,
    until_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE watch_leases;
DROP TABLE watch_tokens;
