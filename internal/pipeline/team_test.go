package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/workindex"
)

// TestPipelineTeamFiguresByRep: the team lead's table names each rep with their open pipeline,
// signed (archived wins included) and declined contracts and win rate; every figure equals the count of the list it
// links to; a rep sees no table; a row the lead's token was refused leaves the figures.
func TestPipelineTeamFiguresByRep(t *testing.T) {
	t.Parallel()
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ix, p := world(t, db)
		ctx := context.Background()
		if reps, err := p.TeamFigures(ctx, alice); err != nil || reps != nil {
			t.Fatalf("a rep sees the team's figures: %+v %v", reps, err)
		}
		reps, err := p.TeamFigures(ctx, lead)
		if err != nil {
			t.Fatal(err)
		}
		if len(reps) != 2 || reps[0].Name != "Alice Rep" || reps[1].Name != "Bob Rep" {
			t.Fatalf("reps: %+v", reps)
		}
		a, b := reps[0], reps[1]
		if a.Open.Count != 3 || a.Open.ValueCents != 100_00+12*10_00+50_00+1000_00+12*100_00 || a.Signed.N != 3 ||
			a.SignedValueCents != 4_00 || a.Declined.Count != 1 || !a.HasRate || a.WinRate != 0.75 {
			t.Errorf("Alice: %+v", a)
		}
		if b.Open.Count != 1 || b.Signed.N != 0 || b.Declined.Count != 0 || b.HasRate {
			t.Errorf("Bob: %+v", b)
		}
		for _, r := range reps {
			if r.Signed.Query.Person != r.Person || !r.Signed.Query.Signed {
				t.Errorf("%s's signed list: %+v", r.Name, r.Signed.Query)
			}
			if n := listed(t, ix, lead, r.Signed.Query); n != r.Signed.N {
				t.Errorf("%s's signed: figure %d, list %d", r.Name, r.Signed.N, n)
			}
			for name, f := range map[string]Figure{"open": r.Open, "declined": r.Declined} {
				if f.Query.Person != r.Person {
					t.Errorf("%s's %s list is not theirs: %+v", r.Name, name, f.Query)
				}
				if n := listed(t, ix, lead, f.Query); int64(n) != f.Count {
					t.Errorf("%s's %s: figure %d, list %d", r.Name, name, f.Count, n)
				}
			}
		}
		// Refused: Alice's signed contract 13 leaves the lead's figures (and the rate with it).
		if err := ix.Forget(ctx, lead, workindex.KindContract, 13); err != nil {
			t.Fatal(err)
		}
		reps, _ = p.TeamFigures(ctx, lead)
		if reps[0].Signed.N != 2 || reps[0].WinRate < 0.66 || reps[0].WinRate > 0.67 {
			t.Errorf("after a refusal Alice's figures still count it: %+v", reps[0])
		}
	})
}

// TestPipelineTeamFiguresSignedByMonth: the signed contracts of the last 12 months by month,
// each month's count equal to its list's, the team's or one rep's.
func TestPipelineTeamFiguresSignedByMonth(t *testing.T) {
	t.Parallel()
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ix, p := world(t, db)
		ctx := context.Background()
		months, err := p.SignedByMonth(ctx, lead, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(months) != SignedMonthsBack || !months[11].Start.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) ||
			!months[0].Start.Equal(time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("months: %+v", months)
		}
		for i, m := range months {
			// Contract 14 was signed in October; 13 in November, and 17, archived since (a win
			// that stays counted: signed_at).
			want, value := 0, int64(0)
			switch i {
			case 10:
				want, value = 1, 1_00
			case 11:
				want, value = 2, 3_00
			}
			if m.N != want || m.ValueCents != value {
				t.Errorf("%s: %d signed, %d cents, want %d and %d", m.Start.Format("2006-01"), m.N, m.ValueCents, want, value)
			}
			if n := listed(t, ix, lead, m.Query); n != m.N {
				t.Errorf("%s: figure %d, list %d", m.Start.Format("2006-01"), m.N, n)
			}
		}
		bobs, err := p.SignedByMonth(ctx, lead, bob.Key())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range bobs {
			if m.N != 0 {
				t.Errorf("Bob signed %d in %s", m.N, m.Start.Format("2006-01"))
			}
		}
		// One rep's months are counted on their rows: Alice's equal the team's here, and their lists.
		alices, err := p.SignedByMonth(ctx, lead, alice.Key())
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range alices {
			if m.N != months[i].N || m.ValueCents != months[i].ValueCents {
				t.Errorf("Alice's %s: %d / %d cents, the team's %d / %d", m.Start.Format("2006-01"), m.N, m.ValueCents, months[i].N, months[i].ValueCents)
			}
			if n := listed(t, ix, lead, m.Query); n != m.N {
				t.Errorf("Alice's %s: figure %d, list %d", m.Start.Format("2006-01"), m.N, n)
			}
		}
	})
}
