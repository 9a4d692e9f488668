-- +goose Up
-- The home page (internal/pipeline, docs/home.md) asks how long a row has been in its stage and
-- adds up counts and values by stage, for a person and for the team.
--
-- stage_since: when the row entered its stage (unix microseconds), set by the index when the
-- stage changes; rows indexed before this migration take their last change.
ALTER TABLE work_rows ADD COLUMN stage_since BIGINT NOT NULL DEFAULT 0;
UPDATE work_rows SET stage_since = changed_at;
-- Follow-ups, aging and "signed this month" are ranges of stage_since within a stage: for the
-- team (every row of a kind) and for one person (created by or last changed by them, the two
-- halves of My quotes), each an index range (EXPLAIN at 1M rows per kind on both engines).
CREATE INDEX work_rows_stage_since      ON work_rows (kind, stage, stage_since, id);
CREATE INDEX work_rows_created_by_stage ON work_rows (kind, created_by, stage, stage_since);
CREATE INDEX work_rows_changed_by_stage ON work_rows (kind, changed_by, stage, stage_since);

-- work_totals: how many rows and how much value (one-off + 12 x monthly) each stage holds, for
-- everyone (person '') and for each person (the rows they created or changed last: their My
-- quotes), kept by every sighting in the same transaction (internal/workindex/totals.go), so the
-- home page reads a few small rows instead of adding up a million.
CREATE TABLE work_totals (
    kind        TEXT   NOT NULL,
    person      TEXT   NOT NULL,
    stage       TEXT   NOT NULL,
    name        TEXT   NOT NULL DEFAULT '',
    n           BIGINT NOT NULL DEFAULT 0,
    value_cents BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, person, stage)
);
INSERT INTO work_totals (kind, person, stage, name, n, value_cents)
    SELECT kind, '', stage, '', COUNT(*), SUM(value_cents) FROM work_rows GROUP BY kind, stage;
INSERT INTO work_totals (kind, person, stage, name, n, value_cents)
    SELECT kind, created_by, stage, MAX(created_by_name), COUNT(*), SUM(value_cents) FROM work_rows
    WHERE created_by <> '' GROUP BY kind, created_by, stage;
INSERT INTO work_totals (kind, person, stage, name, n, value_cents)
    SELECT kind, changed_by, stage, MAX(changed_by_name), COUNT(*), SUM(value_cents) FROM work_rows
    WHERE changed_by <> '' AND changed_by <> created_by GROUP BY kind, changed_by, stage
    ON CONFLICT (kind, person, stage) DO UPDATE SET n = work_totals.n + excluded.n,
    value_cents = work_totals.value_cents + excluded.value_cents;

-- +goose Down
DROP TABLE work_totals;
DROP INDEX work_rows_changed_by_stage;
DROP INDEX work_rows_created_by_stage;
DROP INDEX work_rows_stage_since;
ALTER TABLE work_rows DROP COLUMN stage_since;
