package statedb_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestMigrationSignedAtBackfills: migration 00021 (a Go migration: the month is written per
// engine) dates the contracts signed before it by the day they entered the stage, with their UTC
// month, leaves archived and unsigned rows unsigned, and gives each viewer the signed contracts
// revealed to them; its down step removes what it added, on both engines.
func TestMigrationSignedAtBackfills(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		since := time.Date(2026, 2, 28, 23, 30, 0, 0, time.UTC).UnixMicro()
		tx := func(fn func(tx *sql.Tx) error) {
			t.Helper()
			if err := db.Tx(ctx, fn); err != nil {
				t.Fatal(err)
			}
		}
		tx(func(tx *sql.Tx) error { return statedb.SignedAtDown(ctx, tx) })
		tx(func(tx *sql.Tx) error {
			for _, q := range []string{
				`INSERT INTO work_rows (kind, id, stage, value_cents, stage_since, facts_at) VALUES ('contract', 1, 'signed', 500, $1, $1)`,
				`INSERT INTO work_rows (kind, id, stage, value_cents, stage_since, facts_at) VALUES ('contract', 2, 'archived', 700, $1, $1)`,
				`INSERT INTO work_rows (kind, id, stage, value_cents, stage_since, facts_at) VALUES ('quote', 1, 'signed', 500, $1, $1)`,
				`INSERT INTO work_viewers (person, kind, id, owner, seen_at) VALUES ('p', 'contract', 1, 1, $1)`,
				`INSERT INTO work_viewers (person, kind, id, owner, seen_at) VALUES ('late', 'contract', 1, 1, CAST($1 AS BIGINT) - 1)`,
			} {
				if _, err := tx.ExecContext(ctx, q, since); err != nil {
					return err
				}
			}
			return nil
		})
		tx(func(tx *sql.Tx) error { return statedb.SignedAtUp(db, ctx, tx) })
		rows, err := db.SQL.QueryContext(ctx, `SELECT kind, id, signed_at, signed_month FROM work_rows ORDER BY kind, id`)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][2]int64{}
		for rows.Next() {
			var kind string
			var id, at, month int64
			if err := rows.Scan(&kind, &id, &at, &month); err != nil {
				t.Fatal(err)
			}
			got[kind+string(rune('0'+id))] = [2]int64{at, month}
		}
		rows.Close()
		if got["contract1"] != [2]int64{since, 202602} || got["contract2"] != [2]int64{} || got["quote1"] != [2]int64{} {
			t.Fatalf("after the migration: %v", got)
		}
		var person string
		var month, n, value int64
		if err := db.SQL.QueryRowContext(ctx, `SELECT person, month, n, value_cents FROM work_viewer_signed`).Scan(&person, &month, &n, &value); err != nil {
			t.Fatalf("the viewers' signed sums: %v", err)
		}
		if person != "p" || month != 202602 || n != 1 || value != 500 {
			t.Fatalf("the viewers' signed sums: %s %d %d %d, want only p's read (the other is older than the facts)", person, month, n, value)
		}
	})
}
