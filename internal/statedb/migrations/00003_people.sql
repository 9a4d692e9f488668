-- +goose Up
-- people is the directory of the people who signed in (internal/people): one row a person, keyed
-- by the lower-cased login (else the lower-cased e-mail address), written by one upsert a
-- sign-in. Audit pages look actors up by login (the key), by e-mail address and by its local part:
-- one query of three arms, each an index search on both engines (EXPLAIN at 100,000 people);
-- seen_at serves the deletion of the people past keep.
CREATE TABLE people (
    person_key  TEXT PRIMARY KEY,
    login       TEXT NOT NULL,   -- lower-cased; '' when the provider gave none
    name        TEXT NOT NULL,
    email       TEXT NOT NULL,   -- lower-cased; '' when none
    email_local TEXT NOT NULL,   -- the address's local part; '' when none
    seen_at     BIGINT NOT NULL  -- last sign-in, unix microseconds
);
CREATE INDEX people_email ON people (email);
CREATE INDEX people_email_local ON people (email_local);
CREATE INDEX people_seen_at ON people (seen_at);

-- +goose Down
DROP TABLE people;
