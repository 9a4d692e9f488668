package main

import (
	"context"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/workindex"
)

// TestAFillMeasuredOnALaterDayReadsTheSameAsOnTheDayOfTheFill (both engines): a cached fill is kept across days
// (its key has no day, fillcache.go), so what the state group's figures read from it must not
// depend on the day it is measured: the home page of each role and the team figures (what
// pipeline_*_home_ms and team_figures_*_ms time) read the same on the day of the fill and 40 days
// later through benchIndex, the state group's index. The same reads on the wall clock (the
// bench before: time.Now) differ between the two days, so the comparison sees a day's effect.
func TestAFillMeasuredOnALaterDayReadsTheSameAsOnTheDayOfTheFill(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) { readsOnALaterDay(t, db) })
}

// readsOnALaterDay is the test's body on one engine's db.
func readsOnALaterDay(t *testing.T, db *statedb.DB) {
	ctx := context.Background()
	if err := fillState(ctx, db, 240); err != nil {
		t.Fatal(err)
	}
	person := func(n int) workindex.Viewer { return workindex.Viewer{Subject: "p" + strconv.Itoa(n%statePeople)} }
	// reads is everything the home pages of a rep, a team lead and the back office and the team
	// figures read, with the index and pipeline on the clock now.
	reads := func(ix *workindex.Index, now func() time.Time) []any {
		t.Helper()
		p := benchPipeline(ix, now)
		var all []any
		for i, role := range []struct {
			viewer     workindex.Viewer
			backoffice bool
		}{{person(7), false}, {workindex.Viewer{Subject: "p3", Team: true}, false}, {workindex.Viewer{Subject: "p5", Team: true}, true}} {
			read, err := homeQueries(ctx, p, role.viewer, role.backoffice)
			if err != nil {
				t.Fatalf("role %d: %v", i, err)
			}
			all = append(all, read...)
		}
		read, err := teamFiguresQueries(ctx, p, workindex.Viewer{Subject: "p3", Team: true})
		if err != nil {
			t.Fatal(err)
		}
		return append(all, read...)
	}
	fillDay := fillAnchor().Add(time.Hour)
	later := fillDay.AddDate(0, 0, 40)
	at := func(day time.Time) func() time.Time { return func() time.Time { return day } }

	ix, clock := benchIndex(db, at(fillDay))
	onFillDay := reads(ix, clock)
	ix, clock = benchIndex(db, at(later))
	onLaterDay := reads(ix, clock)
	if !reflect.DeepEqual(onFillDay, onLaterDay) {
		t.Errorf("the fill read on the day of the fill:\n%+v\n40 days later:\n%+v", onFillDay, onLaterDay)
	}
	// The wall clock (no fill clock): the same reads change with the day.
	wallIndex := func(day time.Time) *workindex.Index { return workindex.New(db, workindex.Options{Now: at(day)}) }
	if reflect.DeepEqual(reads(wallIndex(fillAnchor()), at(fillAnchor())), reads(wallIndex(later), at(later))) {
		t.Error("on the wall clock the reads are the same 40 days later: the comparison above sees no day")
	}
}
