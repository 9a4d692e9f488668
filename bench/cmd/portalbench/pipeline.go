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

// homeQueries runs the queries of v's home page (role as handlers/home.go picks it).
func homeQueries(ctx context.Context, p *pipeline.Pipeline, v workindex.Viewer, backoffice bool) error {
	if backoffice {
		if _, err := p.Waiting(ctx, v); err != nil {
			return err
		}
		_, err := p.Aging(ctx, v, workindex.StageSigned, workindex.ScopeAll)
		return err
	}
	if _, err := p.Stages(ctx, v); err != nil {
		return err
	}
	if _, err := p.FollowUps(ctx, v); err != nil {
		return err
	}
	if _, err := p.Recent(ctx, v); err != nil {
		return err
	}
	if !v.Team {
		return nil
	}
	if _, err := p.Reps(ctx, v); err != nil {
		return err
	}
	if _, _, err := p.SignedMonths(ctx, v); err != nil {
		return err
	}
	if _, err := p.Conversion(ctx, v); err != nil {
		return err
	}
	if _, err := p.Aging(ctx, v, workindex.StageSignature, workindex.ScopeAll); err != nil {
		return err
	}
	// The team lead's figures by rep and signed value by month (issue 41, team.go).
	if _, err := p.TeamFigures(ctx, v); err != nil {
		return err
	}
	_, err := p.SignedByMonth(ctx, v, "")
	return err
}

// timeHomes is the slowest role's median home page database time, in ms.
func timeHomes(ctx context.Context, ix *workindex.Index, person func(n int) workindex.Viewer) (float64, error) {
	p := pipeline.New(ix, pipeline.Options{SignatureDays: pipeline.DefaultSignatureDays, DraftDays: pipeline.DefaultDraftDays})
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
			if err := homeQueries(ctx, p, r.viewer(i), r.backoffice); err != nil {
				return 0, fmt.Errorf("the %s's home: %w", r.name, err)
			}
			times = append(times, ms(time.Since(t)))
		}
		slowest = max(slowest, median(times))
	}
	return slowest, nil
}
