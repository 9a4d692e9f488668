package workindex

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// The viewers' totals the writes keep (work_viewer_totals, work_viewer_reps) are what they would
// be computed from the rows and reads, after any mix of creations, changes, reads, re-reads,
// refusals, archives and retention, for several viewers on one clock tick or minutes apart; Sums
// and SumsByPerson add up exactly the rows the viewer's lists walk; a revealed read's copy of its
// row's stage and times is the row's; and a team role's list of one stage read from their own
// reads finds the rows and count the list read from every row finds; and the unchecked rows
// counted from the totals are the rows not revealed that the viewer may list.
func TestSumsKeptByWritesAreTheRevealedRows(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		c := &clock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
		ix := newIndex(db, c)
		carol := Viewer{Subject: "carol", Name: "Carol"}
		boss := Viewer{Subject: "boss", Name: "Boss", Team: true}
		viewers := []Viewer{alice, bob, carol, lead, boss}
		acts := []Act{ActOpened, ActChanged, ActCreated, ActRefreshed}
		statuses := [][]string{{"SENT"}, {"SIGNED"}, {"DECLINED"}, {"REMOVED"}, nil}
		rng := rand.New(rand.NewPCG(38, 17))
		for step := range 400 {
			v := viewers[rng.IntN(len(viewers))]
			act := acts[rng.IntN(len(acts))]
			switch op := rng.IntN(10); {
			case op < 4:
				id := int64(1 + rng.IntN(8))
				s := QuoteSighting{QuoteID: id, CPQID: 1, CustomerID: int32(1 + id%3), Customer: fmt.Sprintf("Customer %d", id%3),
					OneOffCents: int64(100 * (1 + rng.IntN(3)))}
				if id <= 4 && rng.IntN(2) == 0 {
					s.ContractID, s.ContractNumber = int32(id), fmt.Sprintf("C-%d", id)
				}
				must(t, ix.ObserveQuote(ctx, v, s, act))
			case op < 7:
				id := int32(1 + rng.IntN(4))
				must(t, ix.ObserveContract(ctx, v, ContractSighting{ContractID: id, Number: fmt.Sprintf("C-%d", id), QuoteID: int64(id),
					CPQID: 1, CustomerID: 1 + id%3, Facts: ContractFacts{Status: "GENERATED", SignatureStatuses: statuses[rng.IntN(len(statuses))]},
					OneOffCents: int64(100 * (1 + rng.IntN(3)))}, act))
			case op < 8:
				kind := KindQuote
				if rng.IntN(2) == 0 {
					kind = KindContract
				}
				must(t, ix.Forget(ctx, v, kind, int64(1+rng.IntN(8))))
			case op < 9:
				by := Viewer{}
				if rng.IntN(2) == 0 {
					by = v
				}
				must(t, ix.Archive(ctx, by, fmt.Sprintf("C-%d", 1+rng.IntN(4)), c.now().Add(-time.Duration(rng.IntN(60))*time.Second)))
			default:
				if step > 300 && rng.IntN(4) == 0 {
					_, err := New(db, Options{Now: c.now, Retention: 3 * time.Minute}).Purge(ctx)
					must(t, err)
				}
			}
			if rng.IntN(3) > 0 {
				c.t = c.t.Add(time.Duration(rng.IntN(90)) * time.Second)
			}
			if step%25 == 24 {
				checkViewerSums(t, db, ix, viewers)
			}
		}
		checkViewerSums(t, db, ix, viewers)
	})
}

func checkViewerSums(t *testing.T, db *statedb.DB, ix *Index, viewers []Viewer) {
	t.Helper()
	ctx := context.Background()
	var stale int
	must(t, db.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id
		WHERE o.seen_at >= r.facts_at AND (o.stage <> r.stage OR o.changed_at <> r.changed_at OR o.stage_since <> r.stage_since)`).Scan(&stale))
	if stale != 0 {
		t.Fatalf("%d revealed reads carry another stage or time than their row's", stale)
	}
	// Each viewer's sums are the rows their lists walk.
	for _, v := range viewers {
		for _, kind := range []Kind{KindQuote, KindContract} {
			for _, scope := range []Scope{ScopeMine, ScopeAll} {
				want := map[Stage]Total{}
				must(t, ix.Walk(ctx, v, Query{Kind: kind, Scope: scope}, func(r Row) error {
					w := want[r.Stage]
					want[r.Stage] = Total{N: w.N + 1, ValueCents: w.ValueCents + r.ValueCents()}
					return nil
				}))
				got, err := ix.Sums(ctx, v, kind, scope)
				must(t, err)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s's sums of %s %s: %v, their list walks %v", v.Name, kind, scope, got, want)
				}
				// The list's count of every stage (from the totals) is what its rows give.
				var rows int
				b := listQuery{args: []any{string(kind), v.Key()}}
				must(t, db.SQL.QueryRowContext(ctx, b.countSQL(Query{Kind: kind, Scope: scope}, v), b.args...).Scan(&rows))
				page, err := ix.List(ctx, v, Query{Kind: kind, Scope: scope, PerPage: 1})
				must(t, err)
				if page.Total != min(rows, CountBound) || page.Capped != (rows > CountBound) {
					t.Fatalf("%s's list of %s %s counts %d (capped %v), its rows give %d", v.Name, kind, scope, page.Total, page.Capped, rows)
				}
				// The signed ones by month: the signed contracts their list walks (signed, or
				// archived after their signature).
				if kind != KindContract {
					continue
				}
				signed := map[int]Total{}
				must(t, ix.Walk(ctx, v, Query{Kind: kind, Scope: scope, Signed: true}, func(r Row) error {
					m := SignedMonth(r.SignedAt)
					signed[m] = Total{N: signed[m].N + 1, ValueCents: signed[m].ValueCents + r.ValueCents()}
					return nil
				}))
				gotSigned, err := ix.SignedByMonth(ctx, v, scope)
				must(t, err)
				if fmt.Sprint(gotSigned) != fmt.Sprint(signed) {
					t.Fatalf("%s's signed sums %s: %v, their list walks %v", v.Name, scope, gotSigned, signed)
				}
			}
			// The unchecked rows counted from the totals are those the lists' own query counts.
			for _, scope := range []Scope{ScopeMine, ScopeAll} {
				u, err := ix.Unchecked(ctx, v, kind, scope, 0)
				must(t, err)
				b := listQuery{args: []any{string(kind), v.Key()}, unchecked: true}
				var want int
				must(t, db.SQL.QueryRowContext(ctx, b.countSQL(Query{Kind: kind, Scope: scope}, v), b.args...).Scan(&want))
				if u.Count != want {
					t.Fatalf("%s's unchecked %s %s: %d, the rows give %d", v.Name, kind, scope, u.Count, want)
				}
			}
			if !v.Team {
				continue
			}
			stages := []Stage{StageDraft, StageGenerated, StageSignature, StageSigned, StageDeclined, StageExpired, StageArchived}
			byRep := map[string]Total{}
			must(t, ix.Walk(ctx, v, Query{Kind: kind, Scope: ScopeAll, Stages: stages}, func(r Row) error {
				for _, p := range peopleOf(&r)[1:] {
					w := byRep[p.key]
					byRep[p.key] = Total{N: w.N + 1, ValueCents: w.ValueCents + r.ValueCents()}
				}
				return nil
			}))
			people, err := ix.SumsByPerson(ctx, v, kind, stages)
			must(t, err)
			got := map[string]Total{}
			for _, p := range people {
				got[p.Person] = p.Total
			}
			if fmt.Sprint(got) != fmt.Sprint(byRep) {
				t.Fatalf("%s's sums by rep of %s: %v, their list walks %v", v.Name, kind, got, byRep)
			}
			// One stage from their own reads, and the same rows read from every row (by value).
			for _, st := range stages {
				q := Query{Kind: kind, Scope: ScopeAll, Stages: []Stage{st}, PerPage: MaxPerPage}
				own, err := ix.List(ctx, v, q)
				must(t, err)
				q.Sort = SortValue
				every, err := ix.List(ctx, v, q)
				must(t, err)
				a, b := ids(own), ids(every)
				slices.Sort(a)
				slices.Sort(b)
				if own.Total != every.Total || !slices.Equal(a, b) {
					t.Fatalf("%s's %s in %s: %d %v from their reads, %d %v from every row", v.Name, kind, st, own.Total, a, every.Total, b)
				}
				n, _, err := ix.Count(ctx, v, Query{Kind: kind, Scope: ScopeAll, Stages: []Stage{st}})
				must(t, err)
				if n != every.Total {
					t.Fatalf("%s's count of %s in %s: %d, the list finds %d", v.Name, kind, st, n, every.Total)
				}
				// Counted as the rows are read (their own reads, every row), whole and by dates.
				mid := time.Date(2026, 3, 2, 9, 40, 0, 0, time.UTC)
				for _, q := range []Query{{Kind: kind, Scope: ScopeAll, Stages: []Stage{st}}, {Kind: kind, Scope: ScopeAll, Stages: []Stage{st}, EnteredTo: mid},
					{Kind: kind, Scope: ScopeAll, Stages: []Stage{st}, From: mid}} {
					var counts [2]int
					for i, own := range []bool{true, false} {
						b := listQuery{args: []any{string(kind), v.Key()}}
						b.filters(q, nil, false)
						b.ownReads = own
						must(t, db.SQL.QueryRowContext(ctx, b.countSQL(q, v), b.args...).Scan(&counts[i]))
					}
					if counts[0] != counts[1] || (q.EnteredTo.IsZero() && q.From.IsZero() && counts[0] != every.Total) {
						t.Fatalf("%s's count of %+v: %d from their reads, %d from every row, %d from the totals", v.Name, q, counts[0], counts[1], every.Total)
					}
				}
			}
		}
	}
	// What the writes kept is what the rows and reads give.
	kept := readViewerTotals(t, db)
	must(t, db.Tx(ctx, func(tx *sql.Tx) error { return RebuildTotals(ctx, tx) }))
	computed := readViewerTotals(t, db)
	if fmt.Sprint(kept) != fmt.Sprint(computed) {
		t.Fatalf("viewers' totals kept by the writes:\n%v\ncomputed from the rows:\n%v", kept, computed)
	}
}

// readViewerTotals are the non-zero rows of work_viewer_totals and work_viewer_reps.
func readViewerTotals(t *testing.T, db *statedb.DB) map[string][2]int64 {
	t.Helper()
	out := map[string][2]int64{}
	for _, q := range []string{
		`SELECT person || ' ' || kind || ' ' || stage || ' o' || CAST(owner AS TEXT) || ' m' || CAST(mine AS TEXT), n, value_cents FROM work_viewer_totals`,
		`SELECT person || ' ' || kind || ' ' || stage || ' rep ' || rep, n, value_cents FROM work_viewer_reps`,
		`SELECT person || ' ' || kind || ' signed ' || CAST(month AS TEXT) || ' o' || CAST(owner AS TEXT) || ' m' || CAST(mine AS TEXT), n, value_cents FROM work_viewer_signed`,
	} {
		rows, err := db.SQL.Query(q)
		must(t, err)
		for rows.Next() {
			var k string
			var v [2]int64
			must(t, rows.Scan(&k, &v[0], &v[1]))
			if v != [2]int64{} {
				out[k] = v
			}
		}
		must(t, rows.Err())
		rows.Close()
	}
	return out
}
