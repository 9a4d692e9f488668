package statedbtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/cpqportal/portal/internal/statedb"
)

// RepMonths are the non-zero rows of work_viewer_rep_months (migration 00031) as
// "person rep month" -> {n, value_cents}: what the tests of the sum kept on write (pipeline) and
// of the migration that fills it (statedb) compare with what they expect.
func RepMonths(t testing.TB, db *statedb.DB) map[string][2]int64 {
	t.Helper()
	rows, err := db.SQL.QueryContext(context.Background(), `SELECT person, rep, month, n, value_cents FROM work_viewer_rep_months`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][2]int64{}
	for rows.Next() {
		var person, rep string
		var month int
		var v [2]int64
		if err := rows.Scan(&person, &rep, &month, &v[0], &v[1]); err != nil {
			t.Fatal(err)
		}
		if v != [2]int64{} {
			out[fmt.Sprintf("%s %s %d", person, rep, month)] = v
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
