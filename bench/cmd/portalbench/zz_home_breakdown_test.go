package main

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/pipeline"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/workindex"
)

func TestZZHomeBreakdown(t *testing.T) {
	rows, _ := strconv.Atoi(os.Getenv("ZZ_ROWS"))
	if rows == 0 {
		t.Skip()
	}
	ctx := context.Background()
	var db *statedb.DB
	if os.Getenv("ZZ_PG") != "" {
		db = statedbtest.Postgres(t)
	} else {
		db = statedbtest.SQLite(t)
	}
	if err := fillState(ctx, db, rows); err != nil {
		t.Fatal(err)
	}
	ix := workindex.New(db, workindex.Options{})
	p := pipeline.New(ix, pipeline.Options{SignatureDays: 14, DraftDays: 30})
	person := func(n int) workindex.Viewer { return workindex.Viewer{Subject: "p" + strconv.Itoa(n%statePeople)} }
	for _, team := range []bool{false, true} {
		v := person(3)
		v.Team = team
		step := func(name string, fn func() error) {
			t0 := time.Now()
			if err := fn(); err != nil {
				t.Fatal(err)
			}
			t.Logf("team=%v %s: %.2f ms", team, name, ms(time.Since(t0)))
		}
		for range 4 {
			step("stages", func() error { _, err := p.Stages(ctx, v); return err })
			step("followups", func() error { _, err := p.FollowUps(ctx, v); return err })
			step("recent", func() error { _, _, err := p.Recent(ctx, v); return err })
			step("reps", func() error { _, err := p.Reps(ctx, v); return err })
			step("signed", func() error { _, _, err := p.SignedMonths(ctx, v); return err })
			step("conversion", func() error { _, err := p.Conversion(ctx, v); return err })
			step("aging", func() error { _, err := p.Aging(ctx, v, workindex.StageSignature, workindex.ScopeAll); return err })
			step("waiting", func() error { _, err := p.Waiting(ctx, v); return err })
			step("aging signed", func() error { _, err := p.Aging(ctx, v, workindex.StageSigned, workindex.ScopeAll); return err })
		}
	}
}

func TestZZExplain(t *testing.T) {
	rows, _ := strconv.Atoi(os.Getenv("ZZ_ROWS"))
	if rows == 0 {
		t.Skip()
	}
	ctx := context.Background()
	var db *statedb.DB
	pg := os.Getenv("ZZ_PG") != ""
	if pg {
		db = statedbtest.Postgres(t)
	} else {
		db = statedbtest.SQLite(t)
	}
	if err := fillState(ctx, db, rows); err != nil {
		t.Fatal(err)
	}
	ix := workindex.New(db, workindex.Options{})
	p := pipeline.New(ix, pipeline.Options{SignatureDays: 14, DraftDays: 30})
	v := workindex.Viewer{Subject: "p3", Team: os.Getenv("ZZ_TEAM") != ""}
	fs, _ := p.FollowUps(ctx, v)
	if os.Getenv("ZZ_AGING") != "" {
		fs = nil
		bs, _ := p.Aging(ctx, v, workindex.StageSignature, workindex.ScopeAll)
		for _, b := range bs {
			fs = append(fs, pipeline.FollowUp{Kind: "aging", Count: b.Count})
		}
		this, last, _ := p.SignedMonths(ctx, v)
		fs = append(fs, pipeline.FollowUp{Kind: "signed", Count: this}, pipeline.FollowUp{Kind: "signed", Count: last})
	}
	for _, f := range fs {
		for _, sqlText := range workindex.DebugSQL(f.Query, v) {
			prefix := "EXPLAIN QUERY PLAN "
			if pg {
				prefix = "EXPLAIN ANALYZE "
			}
			rs, err := db.SQL.QueryContext(ctx, prefix+sqlText.SQL, sqlText.Args...)
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rs.Columns()
			t.Logf("--- %s %s", f.Kind, sqlText.SQL[:60])
			for rs.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				rs.Scan(ptrs...)
				t.Logf("%v", vals)
			}
			rs.Close()
		}
	}
}
