-- +goose Up
-- The inbox (internal/inbox, docs/inbox.md): what the portal tells each person. person is the
-- person's key (workindex.PersonKey of their OpenID subject: a hash, no subject is kept); dedupe
-- makes an event one item however often its producer reports it (a reminder scan run again, a
-- job's end reported twice); mail says what the person's preference made of it: '' nothing,
-- 'queued' its mail was written to the outbox in the item's own transaction, 'digest' it waits
-- for the person's daily digest, 'digested' the digest took it.
CREATE TABLE inbox_items (
    id         TEXT PRIMARY KEY,
    person     TEXT NOT NULL,
    dedupe     TEXT NOT NULL,
    kind       TEXT NOT NULL,
    params     TEXT NOT NULL DEFAULT '{}',
    link       TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    read_at    BIGINT NOT NULL DEFAULT 0,
    mail       TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX inbox_items_dedupe ON inbox_items (person, dedupe);
-- A person's inbox, newest first.
CREATE INDEX inbox_items_person ON inbox_items (person, created_at, id);
-- The digest's scan: the items waiting for it (few).
CREATE INDEX inbox_items_digest ON inbox_items (person, created_at) WHERE mail = 'digest';

-- inbox_unread is each person's unread count, kept in the transaction that adds an item or marks
-- one read: the header's count is one primary-key read, however many items a person has.
CREATE TABLE inbox_unread (
    person TEXT PRIMARY KEY,
    n      BIGINT NOT NULL DEFAULT 0
);

-- inbox_people is what the inbox needs to reach a person: their address, name and language as
-- they last used the portal, their roles (',backoffice,team-lead,': the back office's reminders)
-- and their preference (portal, email or digest).
CREATE TABLE inbox_people (
    person   TEXT PRIMARY KEY,
    email    TEXT NOT NULL DEFAULT '',
    name     TEXT NOT NULL DEFAULT '',
    lang     TEXT NOT NULL DEFAULT '',
    roles    TEXT NOT NULL DEFAULT '',
    delivery TEXT NOT NULL DEFAULT 'portal',
    seen_at  BIGINT NOT NULL DEFAULT 0
);

-- inbox_schedule: the scheduled scans (reminders, digest), one run at a time across replicas by a
-- lease on the database's clock; next_run moves on only when a run completed, so a run cut short
-- by a crash is run again (its items are deduplicated).
CREATE TABLE inbox_schedule (
    name          TEXT PRIMARY KEY,
    next_run      BIGINT NOT NULL DEFAULT 0,
    holder        TEXT NOT NULL DEFAULT '',
    lease_expires BIGINT NOT NULL DEFAULT 0,
    last_run      BIGINT NOT NULL DEFAULT 0,
    runs          BIGINT NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE inbox_schedule;
DROP TABLE inbox_people;
DROP TABLE inbox_unread;
DROP TABLE inbox_items;
