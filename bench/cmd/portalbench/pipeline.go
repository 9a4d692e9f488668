package main

import (
	"context"
	"fmt"
	"time"

	"github.com/cpqportal/portal/internal/pipeline"
	"github.com/cpqportal/portal/internal/workindex"
)

// The home page's database time (issue 32, docs/home.md): every query of one home page, on the
// state group's fixture (state.go), for a rep, a team lead and the back office; the figure is
// the slowest role's median. Budget: 50 ms at 1M rows per kind on both engines.
const pipelineHomeBudgetMS = 50

// homeQueries runs the queries of v's home page (role as handlers/home.go picks it) and returns
// what they read (fillclock_test.go compares them across days).
func homeQueries(ctx context.Context, p *pipeline.Pipeline, v workindex.Viewer, backoffice bool) ([]any, error) {
	var read []any
	keep := func(x any, err error) error {
		read = append(read, x)
		return err
	}
	if backoffice {
		if err := keep(p.Waiting(ctx, v)); err != nil {
			return nil, err
		}
		return read, keep(p.Aging(ctx, v, workindex.StageSigned, workindex.ScopeAll))
	}
	if err := keep(p.Stages(ctx, v)); err != nil {
		return nil, err
	}
	if err := keep(p.FollowUps(ctx, v)); err != nil {
		return nil, err
	}
	if err := keep(p.Recent(ctx, v)); err != nil {
		return nil, err
	}
	if !v.Team {
		return read, nil
	}
	if err := keep(p.Reps(ctx, v)); err != nil {
		return nil, err
	}
	this, last, err := p.SignedMonths(ctx, v)
	if err := keep([2]pipeline.Count{this, last}, err); err != nil {
		return nil, err
	}
	if err := keep(p.Conversion(ctx, v)); err != nil {
		return nil, err
	}
	if err := keep(p.Aging(ctx, v, workindex.StageSignature, workindex.ScopeAll)); err != nil {
		return nil, err
	}
	// The team lead's figures by rep and signed value by month (issue 41, team.go).
	if err := keep(p.TeamFigures(ctx, v)); err != nil {
		return nil, err
	}
	return read, keep(p.SignedByMonth(ctx, v, ""))
}

// benchPipeline is the home page's pipeline over ix with the default windows and the clock now
// (fillClock: the fill's).
func benchPipeline(ix *workindex.Index, now func() time.Time) *pipeline.Pipeline {
	return pipeline.New(ix, pipeline.Options{SignatureDays: pipeline.DefaultSignatureDays, DraftDays: pipeline.DefaultDraftDays, Now: now})
}

// timeHomes is the slowest role's median home page database time, in ms.
func timeHomes(ctx context.Context, ix *workindex.Index, person func(n int) workindex.Viewer, now func() time.Time) (float64, error) {
	p := benchPipeline(ix, now)
	roles := []struct {
		name       string
		viewer     func(i int) workindex.Viewer
		backoffice bool
	}{
		{"rep", func(i int) workindex.Viewer { return person(7 * i) }, false},
		{"team lead", func(i int) workindex.Viewer { v := person(3 * i); v.Team = true; return v }, false},
		{"back office", func(i int) workindex.Viewer { v := person(5 * i); v.Team = true; return v }, true},
	}
	slowest := 0.0
	for _, r := range roles {
		var times []float64
		for i := range stateSamples {
			t := time.Now()
			if _, err := homeQueries(ctx, p, r.viewer(i), r.backoffice); err != nil {
				return 0, fmt.Errorf("the %s's home: %w", r.name, err)
			}
			times = append(times, ms(time.Since(t)))
		}
		slowest = max(slowest, median(times))
	}
	return slowest, nil
}
