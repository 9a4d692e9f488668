package workindex

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// Walk reads every row of a list in the list's order, across batches and past the count, with
// the list's filters and visibility (an export's source).
func TestWalkReadsTheWholeListInOrder(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		at := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
		const n = 2*walkBatch + 37
		fillRows(t, db, at, 1, n, lead.Key())
		// Ties across a batch boundary: the id decides.
		_, err := db.SQL.ExecContext(ctx, `UPDATE work_rows SET changed_at = $1, value_cents = 7 WHERE id BETWEEN 495 AND 505`, statedb.Micros(at))
		must(t, err)
		ix := New(db, Options{})
		for _, q := range []Query{
			{Kind: KindQuote, Scope: ScopeAll},
			{Kind: KindQuote, Scope: ScopeAll, Asc: true},
			{Kind: KindQuote, Scope: ScopeAll, Sort: SortValue},
			{Kind: KindQuote, Scope: ScopeMine, Page: 3, PerPage: 10},
		} {
			var walked []int64
			must(t, ix.Walk(ctx, lead, q, func(r Row) error { walked = append(walked, r.ID()); return nil }))
			if len(walked) != n {
				t.Fatalf("%+v: walked %d rows, want %d", q, len(walked), n)
			}
			seen := map[int64]bool{}
			for _, id := range walked {
				if seen[id] {
					t.Fatalf("%+v: row %d twice", q, id)
				}
				seen[id] = true
			}
			// The first page of the list is the walk's beginning.
			q.Page, q.PerPage = 1, MaxPerPage
			p, err := ix.List(ctx, lead, q)
			must(t, err)
			for i, id := range ids(p) {
				if walked[i] != id {
					t.Fatalf("%+v: walk row %d is %d, the list's %d", q, i, walked[i], id)
				}
			}
		}
		// Filters apply; another person lists nothing of the lead's rows; fn's error stops the walk.
		var some int
		must(t, ix.Walk(ctx, lead, Query{Kind: KindQuote, Scope: ScopeAll, CustomerID: 107}, func(r Row) error {
			if r.CustomerID != 107 {
				t.Fatalf("row of customer %d", r.CustomerID)
			}
			some++
			return nil
		}))
		if some != 3 {
			t.Errorf("customer 107: %d rows, want 3", some)
		}
		must(t, ix.Walk(ctx, alice, Query{Kind: KindQuote, Scope: ScopeAll}, func(r Row) error {
			t.Fatalf("alice walks the lead's row %d", r.ID())
			return nil
		}))
		stop := errors.New("stop")
		calls := 0
		if err := ix.Walk(ctx, lead, Query{Kind: KindQuote, Scope: ScopeAll}, func(Row) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
			t.Errorf("walk after fn's error: %v, %d calls", err, calls)
		}
	})
}
