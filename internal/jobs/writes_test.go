package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestWritesGrowLinearlyWithLines: a batch writes a constant number of rows per line (the line's
// in-flight mark and its outcome, and a share of the job's row), so a 500-line batch writes five
// times what a 100-line batch does, not 25 times (a job rewritten whole on every step did). On
// PostgreSQL the WAL bytes per line are logged too.
func TestWritesGrowLinearlyWithLines(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		type figures struct{ lineRows, jobRows, walBytes float64 }
		run := func(n int) figures {
			m := NewManager(Options{DB: db, Archiver: &strictV2{archived: map[string]bool{}}, Concurrency: 4, MaxDrafts: 100})
			ctx := context.Background()
			j, err := m.Create(ctx, "alice", "", items(n))
			if err != nil {
				t.Fatal(err)
			}
			before := walPosition(t, db)
			if _, err := m.Start(ctx, j.ID, "alice", "token", time.Time{}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, m, j.ID, func(j *Job) bool { return j.Status == StatusFinished })
			m.Close()
			wal := walSince(t, db, before)
			return figures{float64(m.lineWrites.Load()) / float64(n), float64(m.jobWrites.Load()) / float64(n), wal / float64(n)}
		}
		small, large := run(100), run(500)
		t.Logf("per line: 100 lines %+v, 500 lines %+v", small, large)
		if small.lineRows > 2 || large.lineRows > 2 {
			t.Errorf("line rows written per line: %.2f and %.2f, want at most 2 (in flight, outcome)", small.lineRows, large.lineRows)
		}
		ratio := (large.lineRows + large.jobRows) / (small.lineRows + small.jobRows)
		if ratio < 0.8 || ratio > 1.2 {
			t.Errorf("rows written per line of a 500-line batch are %.2f times those of a 100-line batch, want within 20%%", ratio)
		}
	})
}

// walPosition is PostgreSQL's WAL insert position ("" on SQLite).
func walPosition(t *testing.T, db *statedb.DB) string {
	if db.Engine() != statedb.Postgres {
		return ""
	}
	var lsn string
	if err := db.SQL.QueryRow(`SELECT pg_current_wal_insert_lsn()::text`).Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	return lsn
}

// walSince is the WAL bytes written since before (the whole cluster's: other tests' writes count
// too, so it is logged, not checked).
func walSince(t *testing.T, db *statedb.DB, before string) float64 {
	if before == "" {
		return 0
	}
	var n float64
	if err := db.SQL.QueryRow(`SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::float8`, before).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
