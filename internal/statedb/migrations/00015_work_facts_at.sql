-- +goose Up
-- When a row's facts (customer, stage, totals, contract, configurator, who changed it and when)
-- last changed in the index: a viewer is shown a row only when their own token read it at or
-- after this (work_viewers.seen_at >= facts_at, docs/work-index.md "Visibility rule"), so a
-- colleague's read that changed a row hides it from everyone else until their token reads it
-- again, and a colleague's read that changed nothing hides nothing. Rows kept from before take
-- their last sighting: a viewer who read them since sees them as before, the others re-read them.
ALTER TABLE work_rows ADD COLUMN facts_at BIGINT NOT NULL DEFAULT 0;
UPDATE work_rows SET facts_at = seen_at;

-- +goose Down
ALTER TABLE work_rows DROP COLUMN facts_at;
