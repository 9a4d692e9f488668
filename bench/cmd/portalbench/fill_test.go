package main

import (
	"context"
	"database/sql"
	"maps"
	"strings"
	"testing"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/workindex"
)

// TestFillsAreTheSameOnBothEngines: the state fill writes the same rows on both engines (the
// numbers it inserts from come from generate_series on PostgreSQL and a recursive CTE on SQLite),
// so the figures of the two engines measure the same table.
func TestFillsAreTheSameOnBothEngines(t *testing.T) {
	ctx := context.Background()
	const rows = 120
	counts := map[statedb.Engine][4]int64{}
	digests := map[statedb.Engine][totalsItems]int64{}
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		var series [4]int64
		if err := db.SQL.QueryRowContext(ctx, seriesCTE(db.Engine(), rows)+`SELECT COUNT(*), MIN(i), MAX(i), SUM(i) FROM s`).
			Scan(&series[0], &series[1], &series[2], &series[3]); err != nil {
			t.Fatal(err)
		}
		if series != [4]int64{rows, 1, rows, rows * (rows + 1) / 2} {
			t.Fatalf("the series 1 to %d: count, min, max, sum %v", rows, series)
		}
		indexes := map[string]map[string]string{}
		for _, table := range []string{"work_rows", "work_viewers"} {
			ix, err := secondaryIndexes(ctx, db.SQL, db.Engine(), table)
			if err != nil {
				t.Fatal(err)
			}
			indexes[table] = ix
		}
		if err := fillState(ctx, db, rows); err != nil {
			t.Fatal(err)
		}
		// The indexes the fill dropped are back as the migrations made them.
		for table, want := range indexes {
			got, err := secondaryIndexes(ctx, db.SQL, db.Engine(), table)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, want) {
				t.Errorf("%s: %s's indexes after the fill %v, before %v", db.Engine(), table, got, want)
			}
		}
		// The totals are what a rebuild from the rows and reads makes (as the portal's own writes
		// keep them), and not empty.
		filled := totalsDigest(ctx, t, db)
		if err := db.Tx(ctx, func(tx *sql.Tx) error { return workindex.RebuildTotals(ctx, tx) }); err != nil {
			t.Fatal(err)
		}
		if rebuilt := totalsDigest(ctx, t, db); filled != rebuilt {
			t.Errorf("%s: the fill's totals %v, rebuilt %v", db.Engine(), filled, rebuilt)
		}
		for i, v := range filled {
			if v == 0 {
				t.Errorf("%s: totals digest %v: item %d is 0", db.Engine(), filled, i)
			}
		}
		digests[db.Engine()] = filled
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
	if digests[statedb.SQLite] != digests[statedb.Postgres] {
		t.Errorf("the engines' totals differ: SQLite %v, PostgreSQL %v", digests[statedb.SQLite], digests[statedb.Postgres])
	}
}

// totalsTables are the totals workindex.RebuildTotals makes, each with its figures and a
// checksum of its keys weighted by its counts (a count moved to another key changes it).
var totalsTables = []struct{ table, figures string }{
	{"work_totals", "SUM(n), SUM(value_cents), SUM(n * LENGTH(kind || person || stage))"},
	{"work_viewer_totals", "SUM(n), SUM(value_cents), SUM(n * (LENGTH(person || kind || stage) + 3 * owner + 7 * mine))"},
	{"work_viewer_reps", "SUM(n), SUM(value_cents), SUM(n * LENGTH(person || kind || stage || rep))"},
	{"work_viewer_signed", "SUM(n), SUM(value_cents), SUM(n * (LENGTH(person || kind) + month % 97 + 3 * owner + 7 * mine))"},
	{"work_viewer_rep_signed", "SUM(n), SUM(value_cents), SUM(n * (LENGTH(person || rep) + days))"},
	{"work_viewer_rep_declines", "SUM(n), SUM(n * LENGTH(reason)), SUM(n * LENGTH(person || rep))"},
	{"work_viewer_rep_months", "SUM(n), SUM(value_cents), SUM(n * (LENGTH(person || rep) + month % 97))"},
}

const totalsItems = 28 // 4 a table

// totalsDigest is each totals table's row count and figures.
func totalsDigest(ctx context.Context, t *testing.T, db *statedb.DB) [totalsItems]int64 {
	t.Helper()
	var d [totalsItems]int64
	for i, tt := range totalsTables {
		figures := strings.Split(tt.figures, ", ")
		for j := range figures {
			figures[j] = "CAST(COALESCE(" + figures[j] + ", 0) AS BIGINT)"
		}
		if err := db.SQL.QueryRowContext(ctx, `SELECT COUNT(*), `+strings.Join(figures, ", ")+` FROM `+tt.table).
			Scan(&d[4*i], &d[4*i+1], &d[4*i+2], &d[4*i+3]); err != nil {
			t.Fatalf("%s: %v", tt.table, err)
		}
	}
	return d
}
