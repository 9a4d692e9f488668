-- +goose Up
-- Jobs of several kinds on one engine (internal/jobs, kind.go): the batch archive (every row from
-- before, hence the default), the handover of customers to another owner, and the kinds to come.
-- The engine's columns (lease, fencing, maybe_sent, token) mean the same for every kind; what a
-- line needs and what it produced are the kind's own encoding in payload and result.
ALTER TABLE jobs ADD COLUMN kind TEXT NOT NULL DEFAULT 'archive';
ALTER TABLE job_lines ADD COLUMN payload TEXT NOT NULL DEFAULT '';
ALTER TABLE job_lines ADD COLUMN result TEXT NOT NULL DEFAULT '';
-- A user's list of one kind's jobs (newest first).
CREATE INDEX jobs_owner_kind_created ON jobs (owner, kind, created_at);

-- +goose Down
DROP INDEX jobs_owner_kind_created;
ALTER TABLE job_lines DROP COLUMN result;
ALTER TABLE job_lines DROP COLUMN payload;
ALTER TABLE jobs DROP COLUMN kind;
