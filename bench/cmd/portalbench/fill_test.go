package main

import (
	"context"
	"testing"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestFillsAreTheSameOnBothEngines: the state fill writes the same rows on both engines (the
// numbers it inserts from come from generate_series on PostgreSQL and a recursive CTE on SQLite),
// so the figures of the two engines measure the same table.
func TestFillsAreTheSameOnBothEngines(t *testing.T) {
	ctx := context.Background()
	const rows = 120
	counts := map[statedb.Engine][4]int64{}
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		var series [4]int64
		if err := db.SQL.QueryRowContext(ctx, seriesCTE(db.Engine(), rows)+`SELECT COUNT(*), MIN(i), MAX(i), SUM(i) FROM s`).
			Scan(&series[0], &series[1], &series[2], &series[3]); err != nil {
			t.Fatal(err)
		}
		if series != [4]int64{rows, 1, rows, rows * (rows + 1) / 2} {
			t.Fatalf("the series 1 to %d: count, min, max, sum %v", rows, series)
		}
		if err := fillState(ctx, db, rows); err != nil {
			t.Fatal(err)
		}
		var c [4]int64
		if err := db.SQL.QueryRowContext(ctx, `SELECT
			(SELECT COUNT(*) FROM work_rows WHERE kind = 'quote'), (SELECT COUNT(*) FROM work_rows WHERE kind = 'contract'),
			(SELECT COUNT(*) FROM work_viewers), (SELECT COUNT(*) FROM work_rows WHERE stage = 'signature')`).Scan(&c[0], &c[1], &c[2], &c[3]); err != nil {
			t.Fatal(err)
		}
		// Each row has its five viewers and the lead's read.
		if c[0] != rows || c[1] != rows || c[2] != 2*6*rows {
			t.Errorf("%s: %d quotes, %d contracts, %d reads, want %d, %d, %d", db.Engine(), c[0], c[1], c[2], rows, rows, 2*6*rows)
		}
		counts[db.Engine()] = c
	})
	if counts[statedb.SQLite] != counts[statedb.Postgres] {
		t.Errorf("the engines' fills differ: SQLite %v, PostgreSQL %v", counts[statedb.SQLite], counts[statedb.Postgres])
	}
}
