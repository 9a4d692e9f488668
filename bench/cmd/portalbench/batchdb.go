package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"time"

	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// The bytes a batch writes to the state database (issue 31): batch_<lines>_db_bytes_written is the
// PostgreSQL WAL written from the draft's creation to the batch's end (nothing else writes to the
// throwaway cluster meanwhile), for a 1,000- and a 5,000-line batch against an archiver that
// answers in batchBenchLatency. Budgets: at most 100 MiB for 5,000 lines, and the bytes per line of
// both within 20 % of each other (the single record rewritten whole wrote 1.04 GiB for 5,000).
const (
	batchBenchLatency   = 2 * time.Millisecond
	batchBytesBudget    = 100 << 20
	batchPerLineSpread  = 0.2
	batchBenchFinishing = 10 * time.Minute
)

// benchArchiver archives every contract after batchBenchLatency.
type benchArchiver struct{}

func (benchArchiver) Archive(ctx context.Context, _, number string) (string, time.Time, error) {
	select {
	case <-time.After(batchBenchLatency):
		return "ARC-" + number, time.Now(), nil
	case <-ctx.Done():
		return "", time.Time{}, ctx.Err()
	}
}

func (benchArchiver) ArchiveID(context.Context, string, string) (string, bool, error) {
	return "", false, nil
}

// measureBatchBytes adds batch_1000_db_bytes_written and batch_5000_db_bytes_written, and returns
// the budgets they exceed.
func measureBatchBytes(ctx context.Context, cluster *statedbtest.Cluster, rep *report) ([]string, error) {
	const name = "bench_batch"
	admin, err := sql.Open("pgx", cluster.URL)
	if err != nil {
		return nil, err
	}
	_, err = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	if err == nil {
		_, err = admin.ExecContext(ctx, "CREATE DATABASE "+name)
	}
	admin.Close()
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(cluster.URL)
	if err != nil {
		return nil, err
	}
	u.Path = "/" + name
	db, err := statedb.Open(ctx, statedb.Options{URL: u.String()})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	perLine := map[int]float64{}
	for _, lines := range []int{1000, 5000} {
		written, err := batchBytes(ctx, db, lines)
		if err != nil {
			return nil, fmt.Errorf("batch of %d: %w", lines, err)
		}
		rep.add(fmt.Sprintf("batch_%d_db_bytes_written", lines), written, "bytes")
		perLine[lines] = written / float64(lines)
	}
	var failures []string
	if b := perLine[5000] * 5000; b > batchBytesBudget {
		failures = append(failures, fmt.Sprintf("batch_5000_db_bytes_written %.0f > %d", b, batchBytesBudget))
	}
	if ratio := perLine[5000] / perLine[1000]; ratio > 1+batchPerLineSpread || ratio < 1-batchPerLineSpread {
		failures = append(failures, fmt.Sprintf("bytes per line of 5,000 and 1,000 lines differ by %.0f %%", (ratio-1)*100))
	}
	return failures, nil
}

// batchBytes runs one batch of lines to its end and returns the WAL bytes it wrote.
func batchBytes(ctx context.Context, db *statedb.DB, lines int) (float64, error) {
	m := jobs.NewManager(jobs.Options{DB: db, Archiver: benchArchiver{}, Concurrency: 4, MaxDrafts: 100})
	defer m.Close()
	var before string
	if err := db.SQL.QueryRowContext(ctx, `SELECT pg_current_wal_insert_lsn()::text`).Scan(&before); err != nil {
		return 0, err
	}
	items := make([]jobs.Item, lines)
	for i := range items {
		items[i] = jobs.Item{Line: i + 1, Number: fmt.Sprintf("B-%05d", i+1), Status: jobs.ItemPending}
	}
	j, err := m.Create(ctx, "bench", "Bench", items)
	if err != nil {
		return 0, err
	}
	if _, err := m.Start(ctx, j.ID, "bench", "token", time.Time{}); err != nil {
		return 0, err
	}
	for deadline := time.Now().Add(batchBenchFinishing); ; time.Sleep(100 * time.Millisecond) {
		updated, err := m.List(ctx, "bench")
		if err != nil {
			return 0, err
		}
		if i := indexOfJob(updated, j.ID); i >= 0 && updated[i].Status == jobs.StatusFinished {
			break
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("not finished within %s", batchBenchFinishing)
		}
	}
	var written float64
	err = db.SQL.QueryRowContext(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::float8`, before).Scan(&written)
	return written, err
}

func indexOfJob(list []*jobs.Job, id string) int {
	for i, j := range list {
		if j.ID == id {
			return i
		}
	}
	return -1
}
