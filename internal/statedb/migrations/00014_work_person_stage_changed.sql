-- +goose Up
-- A rep's home page (internal/pipeline, docs/home.md) lists the oldest few of their rows in one
-- stage by last change (each follow-up), and counts their drafts untouched since a day: the two
-- halves of My quotes (created by, changed last by), one stage, in changed_at order. Without
-- these, PostgreSQL read a person's rows of every stage in changed_at order (work_rows_created_by)
-- looking for five of a rare stage, or the whole stage and sorted (work_rows_created_by_stage is
-- in stage_since order): 5 to 30 ms a list at 1M rows per kind (EXPLAIN ANALYZE,
-- docs/performance.md).
CREATE INDEX work_rows_created_by_stage_changed ON work_rows (kind, created_by, stage, changed_at, id);
CREATE INDEX work_rows_changed_by_stage_changed ON work_rows (kind, changed_by, stage, changed_at, id);

-- +goose Down
DROP INDEX work_rows_changed_by_stage_changed;
DROP INDEX work_rows_created_by_stage_changed;
