-- +goose Up
-- jobs holds one row per batch archive job (internal/jobs): its state, its owner's sealed token
-- and the lease of the replica running it. Lease times are the database's clock (unix
-- microseconds), so replicas whose clocks disagree still agree on who holds a lease; every write
-- of a runner names the lease_version it claimed, and a claim by anyone else raises it (fencing).
CREATE TABLE jobs (
    id                  TEXT PRIMARY KEY,
    owner               TEXT NOT NULL,
    owner_name          TEXT NOT NULL DEFAULT '',
    status              TEXT NOT NULL,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL,
    started_at          BIGINT NOT NULL DEFAULT 0,
    ended_at            BIGINT NOT NULL DEFAULT 0,
    cancel_requested    INTEGER NOT NULL DEFAULT 0,
    waiting_for_sign_in INTEGER NOT NULL DEFAULT 0,
    interrupted         INTEGER NOT NULL DEFAULT 0,
    resumes             INTEGER NOT NULL DEFAULT 0,
    stop_reason         TEXT NOT NULL DEFAULT '',
    -- token is the owner's access token sealed with keys derived from the session keys; NULL
    -- once the batch ended or the owner signed out.
    token               BYTEA,
    token_id            TEXT NOT NULL DEFAULT '',
    token_expiry        BIGINT NOT NULL DEFAULT 0,
    lease_holder        TEXT NOT NULL DEFAULT '',
    lease_expires       BIGINT NOT NULL DEFAULT 0,
    lease_version       BIGINT NOT NULL DEFAULT 0,
    -- check_after: lines that may have been sent by a holder whose lease was taken over are read
    -- back only from this moment (its lease's end plus the v2 timeout: its last call can no
    -- longer be answered).
    check_after         BIGINT NOT NULL DEFAULT 0
);
-- A user's list (newest first) and quotas.
CREATE INDEX jobs_owner_created ON jobs (owner, created_at);
CREATE INDEX jobs_owner_status ON jobs (owner, status);
-- Work for the replicas' scans: active jobs by lease end (small: only active jobs are in it).
CREATE INDEX jobs_active_lease ON jobs (lease_expires) WHERE status IN ('queued', 'running');
-- Retention of ended jobs.
CREATE INDEX jobs_updated ON jobs (updated_at);

-- job_lines holds one row per line of a job's list, written on its own when it changes.
-- position is the line's place in the list (from 0): a line of the input may hold several
-- contract numbers, so line is not unique.
CREATE TABLE job_lines (
    job_id     TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    line       INTEGER NOT NULL,
    number     TEXT NOT NULL,
    status     TEXT NOT NULL,
    archive_id TEXT NOT NULL DEFAULT '',
    error      TEXT NOT NULL DEFAULT '',
    -- problem is the i18n.Message in JSON ('' when none).
    problem    TEXT NOT NULL DEFAULT '',
    note       TEXT NOT NULL DEFAULT '',
    customer   TEXT NOT NULL DEFAULT '',
    stage      TEXT NOT NULL DEFAULT '',
    attempts   INTEGER NOT NULL DEFAULT 0,
    -- maybe_sent is committed (with status running) before the line's archive call is sent.
    maybe_sent INTEGER NOT NULL DEFAULT 0,
    verified   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (job_id, position)
);
-- Counts by status for a user's list of batches.
CREATE INDEX job_lines_status ON job_lines (job_id, status);

-- +goose Down
DROP TABLE job_lines;
DROP TABLE jobs;
