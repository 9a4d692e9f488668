package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/workindex"
)

// The state database's figures (issue 31, docs/work-index.md, docs/performance.md "State
// database"): for each engine and size (rows per kind: as many quotes as contracts; 500 people,
// 5 viewers a row, 2,000 customers), one list page's database time for My quotes, the team's
// contracts out for signature, a customer's history, and one sighting (a write); a replica's
// heap at 10k and 1M rows; a fresh replica's first list at 1M rows; the bytes a 1,000- and a
// 5,000-line batch write (batchdb.go).
const (
	statePeople = 500
	// benchLead is the subject of the team role whose lists and figures are measured.
	benchLead      = "lead"
	stateCustomers = 2000
	stateViewers   = 5
	// stateSamples lists of each kind are timed; the median is reported.
	stateSamples = 25
)

// Budgets of issue 31's "Done when": a list page and a sighting at 1M rows per kind, the heap's
// growth from 10k to 1M rows, a fresh replica's first list at 1M rows.
const (
	stateListBudgetMS     = 10
	stateSightingBudgetMS = 3
	stateHeapGrowthMiB    = 5
	stateColdBudgetMS     = 100
)

func measureState(ctx context.Context, l *lab, rep *report) error {
	sizes := []int{100_000, 1_000_000}
	if l.opts.quick {
		sizes = []int{100_000}
	}
	var failures []string
	if !l.opts.teamOnly {
		cluster, err := statedbtest.NewCluster()
		if err != nil {
			return fmt.Errorf("state: a throwaway PostgreSQL: %w", err)
		}
		failures, err = measureBatchBytes(ctx, cluster, rep)
		_ = cluster.Remove()
		if err != nil {
			return fmt.Errorf("state: batch bytes: %w", err)
		}
	}
	teamSlowest := -1.0 // the slower engine's team figures at 1M rows (none measured: -1)
	measured := 0       // engines whose team figures at 1M rows were measured
	for _, engine := range []statedb.Engine{statedb.SQLite, statedb.Postgres} {
		if !l.opts.stateEngines[string(engine)] {
			continue
		}
		heaps := map[int]float64{}
		// 10k rows only on PostgreSQL: the replica heap's baseline (state_replica_heap_mib_10k), the one
		// figure of that size; SQLite's 10k was filled and listed for nothing.
		all := sizes
		if engine == statedb.Postgres {
			all = append([]int{10_000}, sizes...)
		}
		if l.opts.teamOnly {
			all = sizes[len(sizes)-1:] // the largest size, and only the team figures there
		}
		for _, rows := range all {
			fig, err := measureStateAt(ctx, l, engine, rows)
			if err != nil {
				return fmt.Errorf("state %s %d: %w", engine, rows, err)
			}
			heaps[rows] = fig.heapMiB
			if l.opts.teamOnly {
				rep.add(fmt.Sprintf("team_figures_%s_%s_ms", engine, sizeName(rows)), fig.team, "ms")
				if rows == 1_000_000 {
					teamSlowest, measured = max(teamSlowest, fig.team), measured+1
				}
				continue
			}
			if rows == 10_000 {
				continue
			}
			name := fmt.Sprintf("state_%s_%s_", engine, sizeName(rows))
			rep.add(name+"my_quotes_ms", fig.myQuotes, "ms")
			rep.add(name+"team_stage_ms", fig.teamStage, "ms")
			rep.add(name+"customer_history_ms", fig.history, "ms")
			rep.add(name+"sighting_ms", fig.sighting, "ms")
			homeKey := fmt.Sprintf("pipeline_%s_%s_home_ms", engine, sizeName(rows))
			rep.add(homeKey, fig.home, "ms")
			if rows == 1_000_000 && fig.home > pipelineHomeBudgetMS {
				failures = append(failures, fmt.Sprintf("%s %.2f > %d", homeKey, fig.home, pipelineHomeBudgetMS))
			}
			// The team lead's figures by rep (team.go), next to the home page's figure.
			rep.add(fmt.Sprintf("team_figures_%s_%s_ms", engine, sizeName(rows)), fig.team, "ms")
			if rows == 1_000_000 {
				teamSlowest, measured = max(teamSlowest, fig.team), measured+1
			}
			if rows == 1_000_000 {
				for what, v := range map[string]float64{"my_quotes": fig.myQuotes, "team_stage": fig.teamStage, "customer_history": fig.history} {
					if v > stateListBudgetMS {
						failures = append(failures, fmt.Sprintf("%s%s_ms %.2f > %d", name, what, v, stateListBudgetMS))
					}
				}
				if fig.sighting > stateSightingBudgetMS {
					failures = append(failures, fmt.Sprintf("%ssighting_ms %.2f > %d", name, fig.sighting, stateSightingBudgetMS))
				}
				if engine == statedb.Postgres {
					rep.add("state_cold_first_list_ms_1m", fig.cold, "ms")
					if fig.cold > stateColdBudgetMS {
						failures = append(failures, fmt.Sprintf("state_cold_first_list_ms_1m %.1f > %d", fig.cold, stateColdBudgetMS))
					}
				}
			}
		}
		if engine == statedb.Postgres && !l.opts.teamOnly {
			rep.add("state_replica_heap_mib_10k", heaps[10_000], "MiB")
			if h, ok := heaps[1_000_000]; ok {
				rep.add("state_replica_heap_mib_1m", h, "MiB")
				if h-heaps[10_000] > stateHeapGrowthMiB {
					failures = append(failures, fmt.Sprintf("replica heap grew %.1f MiB from 10k to 1M rows (> %d)", h-heaps[10_000], stateHeapGrowthMiB))
				}
			}
		}
	}
	if measured == 2 { // both engines: the slower one's
		rep.add("team_figures_1m_ms", teamSlowest, "ms")
		if teamSlowest > teamFiguresBudgetMS {
			failures = append(failures, fmt.Sprintf("team_figures_1m_ms %.2f > %d", teamSlowest, teamFiguresBudgetMS))
		}
	}
	if len(failures) > 0 {
		return fmt.Errorf("over budget: %v", failures)
	}
	return nil
}

func sizeName(rows int) string {
	if rows >= 1_000_000 {
		return strconv.Itoa(rows/1_000_000) + "m"
	}
	return strconv.Itoa(rows/1000) + "k"
}

type stateFigures struct {
	myQuotes, teamStage, history, sighting, cold, heapMiB, home, team float64
}

// measureStateAt fills a fresh database with rows quotes and rows contracts and times the lists.
func measureStateAt(ctx context.Context, l *lab, engine statedb.Engine, rows int) (stateFigures, error) {
	var fig stateFigures
	opts := statedb.Options{}
	// The fill (fill.go) on one connection, a copy of the cached fill (fillcache.go): an SQLite
	// file in the run's directory, or a throwaway PostgreSQL cluster of its own started on a copy
	// of the cached data directory. Each is removed after its figures (gigabytes at 1M rows).
	t0 := time.Now()
	fill := func(ctx context.Context, db *statedb.DB) error { return fillState(ctx, db, rows) }
	switch engine {
	case statedb.SQLite:
		opts.Dir = l.dir + "/state-" + strconv.Itoa(rows)
		defer os.RemoveAll(opts.Dir)
		if err := l.fills.sqlite(ctx, "state-"+sizeName(rows), opts.Dir, fill); err != nil {
			return fig, err
		}
	case statedb.Postgres:
		cluster, url, err := l.fills.postgres(ctx, "state-"+sizeName(rows), "bench_"+strconv.Itoa(rows), fill)
		if err != nil {
			return fig, err
		}
		defer cluster.Remove()
		opts.URL = url
	}
	fmt.Fprintf(l.stderr, "portalbench: state: %s filled with %d rows per kind in %s\n", engine, rows, time.Since(t0).Round(time.Millisecond))

	// A fresh replica: a new pool, its first list timed.
	db, err := statedb.Open(ctx, opts)
	if err != nil {
		return fig, err
	}
	defer db.Close()
	ix, clock := benchIndex(db, time.Now)
	person := func(n int) workindex.Viewer { return workindex.Viewer{Subject: "p" + strconv.Itoa(n%statePeople)} }
	if l.opts.teamOnly {
		fig.team, err = timeTeamFigures(ctx, ix, person, clock)
		return fig, err
	}
	t0 = time.Now()
	if _, err := ix.List(ctx, person(1), workindex.Query{Kind: workindex.KindQuote, Scope: workindex.ScopeMine}); err != nil {
		return fig, err
	}
	fig.cold = ms(time.Since(t0))

	timeLists := func(q func(i int) (workindex.Viewer, workindex.Query)) (float64, error) {
		var times []float64
		for i := range stateSamples {
			v, query := q(i)
			t := time.Now()
			p, err := ix.List(ctx, v, query)
			if err != nil {
				return 0, err
			}
			if len(p.Rows) == 0 {
				return 0, fmt.Errorf("an empty page for %+v", query)
			}
			times = append(times, ms(time.Since(t)))
		}
		return median(times), nil
	}
	if fig.myQuotes, err = timeLists(func(i int) (workindex.Viewer, workindex.Query) {
		return person(7 * i), workindex.Query{Kind: workindex.KindQuote, Scope: workindex.ScopeMine}
	}); err != nil {
		return fig, err
	}
	if fig.teamStage, err = timeLists(func(i int) (workindex.Viewer, workindex.Query) {
		v := person(i)
		v.Team = true
		return v, workindex.Query{Kind: workindex.KindContract, Scope: workindex.ScopeAll, Stages: []workindex.Stage{workindex.StageSignature}}
	}); err != nil {
		return fig, err
	}
	if fig.history, err = timeLists(func(i int) (workindex.Viewer, workindex.Query) {
		// A customer's history as one of the people who worked on it sees it.
		customer := 1 + (13*i)%stateCustomers
		return person(customer - 1), workindex.Query{Kind: workindex.KindQuote, Scope: workindex.ScopeAll, CustomerID: int32(customer)}
	}); err != nil {
		return fig, err
	}
	// The oldest quote of someone who made one long ago is still in their My quotes and in its
	// customer's history after all the others (nothing leaves silently).
	oldest := workindex.Viewer{Subject: "oldest"}
	team := workindex.Viewer{Subject: benchLead, Team: true}
	oldestQuote := workindex.QuoteSighting{QuoteID: int64(rows + 1), CPQID: 1, CustomerID: 1, Customer: "Customer 1"}
	if err := ix.ObserveQuote(ctx, oldest, oldestQuote, workindex.ActCreated); err != nil {
		return fig, err
	}
	// The lead's token reads it too (a list's re-read): it is revealed to them.
	if err := ix.ObserveQuote(ctx, team, oldestQuote, workindex.ActRefreshed); err != nil {
		return fig, err
	}
	if _, err := db.SQL.ExecContext(ctx, `UPDATE work_rows SET changed_at = 1, seen_at = 1 WHERE kind = 'quote' AND id = $1`, rows+1); err != nil {
		return fig, err
	}
	if p, err := ix.List(ctx, oldest, workindex.Query{Kind: workindex.KindQuote, Scope: workindex.ScopeMine}); err != nil || len(p.Rows) != 1 {
		return fig, fmt.Errorf("the oldest quote is not in its creator's My quotes at %d rows: %v", rows, err)
	}
	if p, err := ix.List(ctx, team, workindex.Query{Kind: workindex.KindQuote, Scope: workindex.ScopeAll, CustomerID: 1, Asc: true}); err != nil ||
		len(p.Rows) == 0 || p.Rows[0].QuoteID != int64(rows+1) {
		return fig, fmt.Errorf("the oldest quote is not in its customer's history at %d rows: %v", rows, err)
	}

	// The home page's figures (pipeline.go) before the sightings below change rows.
	if rows != 10_000 {
		if fig.home, err = timeHomes(ctx, ix, person, clock); err != nil {
			return fig, err
		}
		if fig.team, err = timeTeamFigures(ctx, ix, person, clock); err != nil {
			return fig, err
		}
	}

	var writes []float64
	for i := range stateSamples {
		id := int64(1 + (rows/stateSamples)*i)
		t := time.Now()
		err := ix.ObserveQuote(ctx, person(int(id)), workindex.QuoteSighting{QuoteID: id, CPQID: 1, CustomerID: int32(1 + id%stateCustomers),
			OneOffCents: int64(1000 + i), MonthlyCents: 10}, workindex.ActChanged)
		if err != nil {
			return fig, err
		}
		writes = append(writes, ms(time.Since(t)))
	}
	fig.sighting = median(writes)
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	fig.heapMiB = float64(m.HeapAlloc) / (1 << 20)
	return fig, nil
}

// benchIndex is the work index the figures read db with, and its clock: the fill's (fill.go,
// fillClock over wall), so the rows are as old to the measured code on any later day as on the
// day of the fill (TestAFillMeasuredOnALaterDayReadsTheSameAsOnTheDayOfTheFill).
func benchIndex(db *statedb.DB, wall func() time.Time) (*workindex.Index, func() time.Time) {
	clock := fillClock(wall)
	return workindex.New(db, workindex.Options{Now: clock}), clock
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
