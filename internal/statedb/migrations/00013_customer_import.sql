-- +goose Up
-- customer_imports holds one row per customer import (internal/customerimport): an uploaded
-- file's dry run, owned by the person who uploaded it (owner is their subject, as for jobs). An
-- import not run is deleted after its retention (customerimport.Store.Purge); status leaves
-- 'draft' when its run starts (the run is a job of internal/jobs).
CREATE TABLE customer_imports (
    id         TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    file_name  TEXT NOT NULL,
    status     TEXT NOT NULL,
    total      INTEGER NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
-- A person's imports (newest first) and their quota.
CREATE INDEX customer_imports_owner ON customer_imports (owner, created_at);
-- Retention.
CREATE INDEX customer_imports_updated ON customer_imports (updated_at);

-- customer_import_lines holds one row per line of an import's file: the customer as read, the
-- dry run's verdict and why (problems: the customerrules.Problem list in JSON; match_*: the
-- customer or earlier row it duplicates) and whether the person includes it. The run's columns
-- (result, customer_id, error, maybe_sent, attempts) are written by the job: maybe_sent is
-- committed before a line's create is sent, so a line that may have been sent is looked up by tax
-- id before it is ever sent again (the v2 create has no idempotency key).
CREATE TABLE customer_import_lines (
    import_id   TEXT NOT NULL REFERENCES customer_imports (id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    row_number  INTEGER NOT NULL,
    name        TEXT NOT NULL,
    tax_id      TEXT NOT NULL,
    email       TEXT NOT NULL DEFAULT '',
    phone       TEXT NOT NULL DEFAULT '',
    segment     TEXT NOT NULL DEFAULT '',
    street      TEXT NOT NULL DEFAULT '',
    city        TEXT NOT NULL DEFAULT '',
    postal_code TEXT NOT NULL DEFAULT '',
    country     TEXT NOT NULL DEFAULT '',
    verdict     TEXT NOT NULL,
    problems    TEXT NOT NULL DEFAULT '',
    match_id    INTEGER NOT NULL DEFAULT 0,
    match_name  TEXT NOT NULL DEFAULT '',
    match_row   INTEGER NOT NULL DEFAULT 0,
    included    INTEGER NOT NULL DEFAULT 0,
    result      TEXT NOT NULL DEFAULT '',
    customer_id INTEGER NOT NULL DEFAULT 0,
    error       TEXT NOT NULL DEFAULT '',
    maybe_sent  INTEGER NOT NULL DEFAULT 0,
    attempts    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (import_id, position)
);
-- The preview's pages of one verdict, in file order.
CREATE INDEX customer_import_lines_verdict ON customer_import_lines (import_id, verdict, position);

-- +goose Down
DROP TABLE customer_import_lines;
DROP TABLE customer_imports;
