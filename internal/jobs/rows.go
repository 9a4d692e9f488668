package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/statedb"
)

// The rows of a job (migrations 00005_jobs.sql and 00012_job_kinds.sql): the job's header in
// jobs, one row per line in job_lines. These helpers are the only code that knows the columns.

const jobColumns = `id, owner, owner_name, status, created_at, updated_at, started_at, ended_at,
	cancel_requested, waiting_for_sign_in, interrupted, resumes, stop_reason,
	token, token_id, token_expiry, lease_holder, lease_expires, lease_version, check_after, kind`

const lineColumns = `line, number, status, archive_id, error, problem, note, customer, stage, attempts, maybe_sent, verified,
	payload, result`

// lineParams is how many parameters a line's row takes in insertLines (position and lineColumns).
const lineParams = 15

// queryer is what both *sql.DB and *sql.Tx offer.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

type scanner interface{ Scan(dest ...any) error }

// scanJob reads a row of jobColumns, followed by extra columns into extra.
func scanJob(s scanner, extra ...any) (*Job, error) {
	var j Job
	var status string
	var created, updated, started, ended, expiry, leaseExpires int64
	var token []byte
	dest := []any{&j.ID, &j.Owner, &j.OwnerName, &status, &created, &updated, &started, &ended,
		&j.CancelRequested, &j.WaitingForSignIn, &j.Interrupted, &j.Resumes, &j.StopReason,
		&token, &j.TokenID, &expiry, &j.Lease, &leaseExpires, &j.leaseVersion, &j.checkAfter, &j.Kind}
	if err := s.Scan(append(dest, extra...)...); err != nil {
		return nil, err
	}
	j.Status, j.Token = Status(status), string(token)
	j.CreatedAt, j.UpdatedAt, j.StartedAt, j.EndedAt = statedb.Time(created), statedb.Time(updated), statedb.Time(started), statedb.Time(ended)
	j.TokenExpiry, j.LeaseUntil = statedb.Time(expiry), statedb.Time(leaseExpires)
	return &j, nil
}

// insertJob writes a new job's row (its lines are insertLines').
func insertJob(ctx context.Context, q queryer, j *Job) error {
	_, err := q.ExecContext(ctx, `INSERT INTO jobs (`+jobColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`,
		j.ID, j.Owner, j.OwnerName, string(j.Status), statedb.Micros(j.CreatedAt), statedb.Micros(j.UpdatedAt),
		statedb.Micros(j.StartedAt), statedb.Micros(j.EndedAt), b2i(j.CancelRequested), b2i(j.WaitingForSignIn),
		b2i(j.Interrupted), j.Resumes, j.StopReason, tokenBytes(j.Token), j.TokenID, statedb.Micros(j.TokenExpiry),
		j.Lease, statedb.Micros(j.LeaseUntil), j.leaseVersion, j.checkAfter, kindOf(j))
	if err != nil {
		return fmt.Errorf("jobs: insert job %s: %w", j.ID, err)
	}
	return nil
}

// linesPerInsert bounds one INSERT's rows (lineParams parameters a row stay far below both
// engines' limits).
const linesPerInsert = 200

// insertLines writes the lines of a new job, a few hundred rows a statement.
func insertLines(ctx context.Context, q queryer, id string, items []Item) error {
	for start := 0; start < len(items); start += linesPerInsert {
		end := min(start+linesPerInsert, len(items))
		var b strings.Builder
		b.WriteString(`INSERT INTO job_lines (job_id, position, ` + lineColumns + `) VALUES `)
		args := []any{id}
		for i := start; i < end; i++ {
			if i > start {
				b.WriteString(", ")
			}
			b.WriteString("($1")
			for range lineParams {
				args = append(args, nil)
				b.WriteString(", $" + strconv.Itoa(len(args)))
			}
			b.WriteString(")")
			it := items[i]
			problem, err := encodeProblem(it.Problem)
			if err != nil {
				return err
			}
			copy(args[len(args)-lineParams:], []any{i, it.Line, it.Number, string(it.Status), it.ArchiveID, it.Error, problem,
				it.Note, it.Customer, it.Stage, it.Attempts, b2i(it.MaybeSent), b2i(it.Verified), it.Payload, it.Result})
		}
		if _, err := q.ExecContext(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("jobs: insert the lines of job %s: %w", id, err)
		}
	}
	return nil
}

// updateLineSQL writes what a runner changes of a line.
const updateLineSQL = `UPDATE job_lines SET status = $3, archive_id = $4, error = $5, problem = $6, note = $7,
	attempts = $8, maybe_sent = $9, verified = $10, result = $11 WHERE job_id = $1 AND position = $2`

func updateLineArgs(id string, position int, it Item) ([]any, error) {
	problem, err := encodeProblem(it.Problem)
	if err != nil {
		return nil, err
	}
	return []any{id, position, string(it.Status), it.ArchiveID, it.Error, problem, it.Note, it.Attempts,
		b2i(it.MaybeSent), b2i(it.Verified), it.Result}, nil
}

// loadLines reads a job's lines in their order.
func loadLines(ctx context.Context, q queryer, id string) ([]Item, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+lineColumns+` FROM job_lines WHERE job_id = $1 ORDER BY position`, id)
	if err != nil {
		return nil, fmt.Errorf("jobs: load the lines of job %s: %w", id, err)
	}
	defer rows.Close()
	items := []Item{}
	for rows.Next() {
		var it Item
		var status, problem string
		if err := rows.Scan(&it.Line, &it.Number, &status, &it.ArchiveID, &it.Error, &problem, &it.Note,
			&it.Customer, &it.Stage, &it.Attempts, &it.MaybeSent, &it.Verified, &it.Payload, &it.Result); err != nil {
			return nil, fmt.Errorf("jobs: read a line of job %s: %w", id, err)
		}
		it.Status = ItemStatus(status)
		if problem != "" {
			if err := json.Unmarshal([]byte(problem), &it.Problem); err != nil {
				return nil, fmt.Errorf("jobs: decode the problem of a line of job %s: %w", id, err)
			}
		}
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("jobs: load the lines of job %s: %w", id, err)
	}
	return items, nil
}

// loadJob reads a job's row (owner "" for any owner), without its lines.
func loadJob(ctx context.Context, q queryer, id, owner string) (*Job, error) {
	query := `SELECT ` + jobColumns + ` FROM jobs WHERE id = $1`
	args := []any{id}
	if owner != "" {
		query += ` AND owner = $2`
		args = append(args, owner)
	}
	j, err := scanJob(q.QueryRowContext(ctx, query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("jobs: load %s: %w", id, err)
	}
	return j, nil
}

func encodeProblem(m i18n.Message) (string, error) {
	if m.IsZero() {
		return "", nil
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("jobs: encode a line's problem: %w", err)
	}
	return string(raw), nil
}

// tokenBytes is the sealed token as stored: NULL when there is none.
func tokenBytes(sealed string) any {
	if sealed == "" {
		return nil
	}
	return []byte(sealed)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
