package main

import (
	"context"
	"fmt"
	"time"

	"github.com/cpqportal/portal/internal/pipeline"
	"github.com/cpqportal/portal/internal/workindex"
)

// The team lead's figures by rep (issue 41, docs/home.md "Team figures"): the table of reps
// (pipeline.TeamFigures) and the signed value by month (pipeline.SignedByMonth, the team's and
// one rep's, as the rep picker asks), on the state group's fixture (state.go). The figure is the
// median of stateSamples team leads. Budget: 50 ms at 1M rows per kind on both engines
// (team_figures_1m_ms is the slower engine's).
const teamFiguresBudgetMS = 50

// teamFiguresQueries runs the team figures' queries of one team lead's home and returns what
// they read.
func teamFiguresQueries(ctx context.Context, p *pipeline.Pipeline, v workindex.Viewer) ([]any, error) {
	reps, err := p.TeamFigures(ctx, v)
	if err != nil {
		return nil, err
	}
	months, err := p.SignedByMonth(ctx, v, "")
	if err != nil {
		return nil, err
	}
	read := []any{reps, months}
	if len(reps) > 0 {
		// The rep picker: the first rep's months.
		rep, err := p.SignedByMonth(ctx, v, reps[0].Person)
		if err != nil {
			return nil, err
		}
		read = append(read, rep)
	}
	return read, nil
}

// timeTeamFigures is the median team lead's team figures database time, in ms.
func timeTeamFigures(ctx context.Context, ix *workindex.Index, person func(n int) workindex.Viewer, now func() time.Time) (float64, error) {
	p := benchPipeline(ix, now)
	var times []float64
	for i := range stateSamples {
		v := person(3 * i)
		v.Team = true
		t := time.Now()
		if _, err := teamFiguresQueries(ctx, p, v); err != nil {
			return 0, fmt.Errorf("the team lead's figures by rep: %w", err)
		}
		times = append(times, ms(time.Since(t)))
	}
	return median(times), nil
}
