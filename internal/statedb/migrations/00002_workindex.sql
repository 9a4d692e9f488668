-- +goose Up
-- The work index (internal/workindex): each quote and contract the portal saw, as last seen.
-- Times are unix microseconds; value_cents is one_off_cents + 12 * monthly_cents (the "value"
-- order); customer_folded is the customer's name folded for search (customercache.Fold).
CREATE TABLE work_rows (
    kind            TEXT    NOT NULL,
    id              BIGINT  NOT NULL,
    quote_id        BIGINT  NOT NULL DEFAULT 0,
    cpq_id          INTEGER NOT NULL DEFAULT 0,
    customer_id     INTEGER NOT NULL DEFAULT 0,
    customer        TEXT    NOT NULL DEFAULT '',
    customer_folded TEXT    NOT NULL DEFAULT '',
    configurator    TEXT    NOT NULL DEFAULT '',
    contract_id     INTEGER NOT NULL DEFAULT 0,
    contract_number TEXT    NOT NULL DEFAULT '',
    stage           TEXT    NOT NULL,
    one_off_cents   BIGINT  NOT NULL DEFAULT 0,
    monthly_cents   BIGINT  NOT NULL DEFAULT 0,
    value_cents     BIGINT  NOT NULL DEFAULT 0,
    created_by      TEXT    NOT NULL DEFAULT '',
    created_by_name TEXT    NOT NULL DEFAULT '',
    changed_by      TEXT    NOT NULL DEFAULT '',
    changed_by_name TEXT    NOT NULL DEFAULT '',
    changed_at      BIGINT  NOT NULL DEFAULT 0,
    seen_at         BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, id)
);
-- Each list's order over its filter (docs/work-index.md "Indexes", chosen with EXPLAIN at 1M rows
-- per kind): the team's lists by last change or by value, My quotes as two ordered scans (created
-- by, last changed by), a customer's history, a stage.
CREATE INDEX work_rows_changed     ON work_rows (kind, changed_at, id);
CREATE INDEX work_rows_value       ON work_rows (kind, value_cents, id);
CREATE INDEX work_rows_created_by  ON work_rows (kind, created_by, changed_at, id);
CREATE INDEX work_rows_changed_by  ON work_rows (kind, changed_by, changed_at, id);
CREATE INDEX work_rows_customer    ON work_rows (kind, customer_id, changed_at, id);
CREATE INDEX work_rows_stage       ON work_rows (kind, stage, changed_at, id);
CREATE INDEX work_rows_number      ON work_rows (contract_number);
CREATE INDEX work_rows_seen        ON work_rows (seen_at);

-- Who read a row with their own token: owner = 1 when they created, changed or opened it (it is
-- in their lists), seen_at their token's last successful read, denied = 1 when the v2 API
-- answered 403 or 404 for them (it leaves their lists until they read it again).
CREATE TABLE work_viewers (
    person  TEXT    NOT NULL,
    kind    TEXT    NOT NULL,
    id      BIGINT  NOT NULL,
    owner   INTEGER NOT NULL DEFAULT 0,
    denied  INTEGER NOT NULL DEFAULT 0,
    seen_at BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (person, kind, id)
);
CREATE INDEX work_viewers_row ON work_viewers (kind, id);

-- Configurators (product catalogues) by name, for the lists' filter.
CREATE TABLE work_configurators (
    cpq_id INTEGER PRIMARY KEY,
    name   TEXT NOT NULL
);

-- +goose Down
DROP TABLE work_configurators;
DROP TABLE work_viewers;
DROP TABLE work_rows;
