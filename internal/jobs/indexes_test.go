package jobs

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestQueriesUseTheirIndexes: with many ended batches and a few active ones, the replicas' scan
// reads the partial index of active jobs, a page's lines come by the primary key and a user's list
// by the owner index, a quota by the owner index or the small index of active jobs (EXPLAIN on
// each engine), so none of them reads every job or every line.
func TestQueriesUseTheirIndexes(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		m := NewManager(Options{DB: db})
		err := db.Tx(ctx, func(tx *sql.Tx) error { // one commit: SQLite syncs each
			for i := range 3000 {
				status := StatusFinished
				if i%1000 == 0 {
					status = StatusQueued
				}
				j := &Job{ID: statedb.NewID(), Owner: fmt.Sprintf("user-%d", i%300), Status: status, CreatedAt: time.Now(), UpdatedAt: time.Now()}
				if err := insertJob(ctx, tx, j); err != nil {
					return err
				}
				if err := insertLines(ctx, tx, j.ID, items(2)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL.ExecContext(ctx, "ANALYZE"); err != nil {
			t.Fatal(err)
		}
		explain := func(query string, args ...any) string {
			prefix := "EXPLAIN QUERY PLAN "
			if db.Engine() == statedb.Postgres {
				prefix = "EXPLAIN "
			}
			rows, err := db.SQL.QueryContext(ctx, prefix+query, args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			cols, _ := rows.Columns()
			var plan []string
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, fmt.Sprint(vals...))
			}
			return strings.Join(plan, "\n")
		}
		for _, c := range []struct {
			name, query string
			indexes     []string // any of them
			args        []any
		}{
			{"scan", `SELECT id FROM jobs WHERE status IN ('queued', 'running')
				AND (lease_holder = '' OR lease_holder = $1 OR lease_expires < ` + db.NowMicros() + `)
				ORDER BY lease_expires, id LIMIT 100`, []string{"jobs_active_lease"}, []any{m.replicaID}},
			{"lines", `SELECT ` + lineColumns + ` FROM job_lines WHERE job_id = $1 ORDER BY position`, []string{"job_lines"}, []any{statedb.NewID()}},
			{"list", `SELECT ` + jobColumns + ` FROM jobs WHERE owner = $1 ORDER BY created_at DESC, id`, []string{"jobs_owner"}, []any{"user-7"}},
			{"quota", `SELECT COUNT(*) FROM jobs WHERE owner = $1 AND status IN ('queued', 'running')`, []string{"jobs_owner", "jobs_active_lease"}, []any{"user-7"}},
		} {
			plan := explain(c.query, c.args...)
			if !slices.ContainsFunc(c.indexes, func(index string) bool { return strings.Contains(plan, index) }) {
				t.Errorf("%s uses none of %v:\n%s", c.name, c.indexes, plan)
			}
		}
	})
}
