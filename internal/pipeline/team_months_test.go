package pipeline

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/workindex"
)

// TestPipelineTeamRepMonthsEqualTheListsSumCount: one rep's signed value by month (the rep
// picker) is read from the per-viewer sums kept on write (work_viewer_rep_months, migration
// 00031) and gives, for every viewer, rep and month, what the old path counted on the rows
// (workindex.SumCount on the month's list, the rep's rows as Query.Person lists them), after a
// year of the index's own writes: contracts created, sent, signed (dated by the v2 signedAt, often
// in an earlier month), declined and archived; rows moving to another rep by a handover (the new
// rep sends them: changed last by them); two team leads who read different rows; refusals (a
// token's access revoked); and a retention purge. The sums kept on write also equal those
// computed again from the rows (RebuildTotals), and equal the rep's list walked by month.
func TestPipelineTeamRepMonthsEqualTheListsSumCount(t *testing.T) {
	t.Parallel()
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		clock := time.Date(2025, 9, 20, 9, 0, 0, 0, time.UTC)
		tick := func() time.Time { return clock }
		ix := workindex.New(db, workindex.Options{Now: tick})
		p := New(ix, Options{SignatureDays: 14, DraftDays: 30, Now: tick})
		carol := workindex.Viewer{Subject: "carol", Name: "Carol Rep"}
		boss := workindex.Viewer{Subject: "boss", Name: "Bo Boss", Team: true}
		reps := []workindex.Viewer{alice, bob, carol}
		viewers := []workindex.Viewer{alice, bob, carol, lead, boss}
		rng := rand.New(rand.NewPCG(41, 31))
		last := map[int32]workindex.ContractSighting{} // each contract as the v2 API has it now
		mustDo := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		// seen: v reads contract id as the v2 API has it (a list's re-read, a page).
		seen := func(v workindex.Viewer, id int32, act workindex.Act) {
			t.Helper()
			mustDo(ix.ObserveContract(ctx, v, last[id], act))
		}
		const contracts = 32
		checks := 0
		for step := range 360 {
			id := int32(1 + rng.IntN(contracts))
			s, exists := last[id]
			stage := workindex.StageOfContract(s.Facts)
			switch op := rng.IntN(12); {
			case !exists:
				by := reps[rng.IntN(len(reps))]
				last[id] = workindex.ContractSighting{ContractID: id, Number: fmt.Sprintf("C-%d", id), QuoteID: int64(id), CPQID: 1,
					CustomerID: 7, Customer: "Acme", Facts: workindex.ContractFacts{Status: "GENERATED"},
					OneOffCents: int64(100 * (1 + rng.IntN(9))), MonthlyCents: int64(10 * rng.IntN(3))}
				seen(by, id, workindex.ActCreated)
			case op < 2 && (stage == workindex.StageGenerated || stage == workindex.StageDeclined || stage == workindex.StageExpired):
				// Sent (again) by a rep: the creator, or another one after a handover (then changed
				// last by them: the row is theirs too), sometimes at another value.
				by := reps[rng.IntN(len(reps))]
				s.Facts = workindex.ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: append(slices.Clone(s.Facts.SignatureStatuses), "SENT")}
				s.SentAt, s.SignedAt, s.ChangedAt, s.DeclineReason = clock, time.Time{}, time.Time{}, ""
				if rng.IntN(3) == 0 {
					s.OneOffCents += 50
				}
				last[id] = s
				seen(by, id, workindex.ActChanged)
			case op < 5 && stage == workindex.StageSignature:
				// The signer answers; someone's read learns it (the v2 signedAt, up to 40 days back:
				// often last month).
				statuses := slices.Clone(s.Facts.SignatureStatuses[:len(s.Facts.SignatureStatuses)-1])
				at := clock.Add(-time.Duration(rng.IntN(40*24)) * time.Hour)
				if rng.IntN(3) == 0 {
					s.Facts = workindex.ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: append(statuses, "DECLINED")}
					s.DeclineReason = "Price"
				} else {
					s.Facts = workindex.ContractFacts{Status: "SIGNED", SignatureStatuses: append(statuses, "SIGNED")}
					s.SignedAt = at
				}
				s.AnsweredAt, s.ChangedAt = at, at
				last[id] = s
				seen(viewers[rng.IntN(len(viewers))], id, workindex.ActRefreshed)
			case op < 6 && stage != workindex.StageArchived && rng.IntN(3) == 0:
				// Archived, by a person or by nobody's action (a batch result).
				by := workindex.Viewer{}
				if rng.IntN(2) == 0 {
					by = viewers[rng.IntN(len(viewers))]
				}
				mustDo(ix.Archive(ctx, by, s.Number, clock))
				s.Facts = workindex.ContractFacts{Status: "ARCHIVED", Archived: true, SignatureStatuses: s.Facts.SignatureStatuses}
				s.ChangedAt = clock
				last[id] = s
			case op < 7:
				// A handover: every contract of one rep not yet answered is sent again by another
				// (the new owner's change: changed last by them).
				from, to := reps[rng.IntN(len(reps))], reps[rng.IntN(len(reps))]
				for cid := range int32(contracts) {
					cid++
					row, ok := ix.Peek(ctx, workindex.KindContract, int64(cid))
					if !ok || row.ChangedBy != from.Key() || from.Key() == to.Key() {
						continue
					}
					if st := workindex.StageOfContract(last[cid].Facts); st == workindex.StageGenerated || st == workindex.StageSignature {
						seen(to, cid, workindex.ActChanged)
					}
				}
			case op < 8:
				// A token's access revoked: the v2 API refuses the row to this viewer.
				mustDo(ix.Forget(ctx, viewers[rng.IntN(len(viewers))], workindex.KindContract, int64(id)))
			case op < 9 && step > 250 && rng.IntN(6) == 0:
				_, err := workindex.New(db, workindex.Options{Now: tick, Retention: 60 * 24 * time.Hour}).Purge(ctx)
				mustDo(err)
			default:
				// A read as it stands: a lead's list re-read (lead more often than boss), or the
				// rep's own page.
				v := viewers[rng.IntN(len(viewers))]
				if rng.IntN(3) > 0 {
					v = lead
				}
				act := workindex.ActRefreshed
				if rng.IntN(2) == 0 {
					act = workindex.ActOpened
				}
				seen(v, id, act)
			}
			clock = clock.Add(time.Duration(rng.IntN(36)) * time.Hour)
			if step%90 == 89 {
				checks += checkRepMonths(t, db, ix, p, viewers, reps)
			}
		}
		checks += checkRepMonths(t, db, ix, p, viewers, reps)
		if checks == 0 {
			t.Fatal("no rep had a signed contract revealed to a lead: the scenario checks nothing")
		}
	})
}

// checkRepMonths compares, for each viewer and rep, the rep picker's twelve months with what
// SumCount counts on each month's list, the viewer's whole sums by rep and month with the rep's
// list walked, and the sums kept on write with those computed again; it returns how many
// non-empty months a team role's rep picker showed.
func checkRepMonths(t *testing.T, db *statedb.DB, ix *workindex.Index, p *Pipeline, viewers, reps []workindex.Viewer) int {
	t.Helper()
	ctx := context.Background()
	shown := 0
	for _, v := range viewers {
		for _, rep := range reps {
			months, err := p.SignedByMonth(ctx, v, rep.Key())
			if err != nil {
				t.Fatal(err)
			}
			if len(months) != SignedMonthsBack {
				t.Fatalf("%s's months of %s: %d", v.Name, rep.Name, len(months))
			}
			for _, m := range months {
				want, capped, err := ix.SumCount(ctx, v, m.Query)
				if err != nil {
					t.Fatal(err)
				}
				if int64(m.N) != want.N || m.Capped != capped || m.ValueCents != want.ValueCents {
					t.Fatalf("%s's %s of %s: %d (capped %v) / %d cents from the sums, SumCount counts %d (capped %v) / %d cents",
						v.Name, m.Start.Format("2006-01"), rep.Name, m.N, m.Capped, m.ValueCents, want.N, capped, want.ValueCents)
				}
				if m.Query.Person != rep.Key() || !m.Query.SignedTo.Equal(m.Start.AddDate(0, 1, 0)) {
					t.Fatalf("%s's %s of %s links to %+v", v.Name, m.Start.Format("2006-01"), rep.Name, m.Query)
				}
				if v.Team && m.N > 0 {
					shown++
				}
			}
			// Every month, those before the chart's too: the rep's list of signed contracts, walked.
			got, err := ix.RepSignedByMonth(ctx, v, rep.Key(), 0)
			if err != nil {
				t.Fatal(err)
			}
			if !v.Team {
				if got != nil {
					t.Fatalf("%s (no team role) reads %s's sums: %v", v.Name, rep.Name, got)
				}
				continue
			}
			walked := map[int]workindex.Total{}
			err = ix.Walk(ctx, v, workindex.Query{Kind: workindex.KindContract, Scope: workindex.ScopeAll, Person: rep.Key(), Signed: true},
				func(r workindex.Row) error {
					m := workindex.SignedMonth(r.SignedAt)
					walked[m] = workindex.Total{N: walked[m].N + 1, ValueCents: walked[m].ValueCents + r.ValueCents()}
					return nil
				})
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, walked) {
				t.Fatalf("%s's sums of %s by month %v, the list walks %v", v.Name, rep.Name, got, walked)
			}
		}
	}
	kept := statedbtest.RepMonths(t, db)
	if err := db.Tx(ctx, func(tx *sql.Tx) error { return workindex.RebuildTotals(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
	if rebuilt := statedbtest.RepMonths(t, db); !maps.Equal(kept, rebuilt) {
		t.Fatalf("work_viewer_rep_months kept on write %v, rebuilt %v", kept, rebuilt)
	}
	return shown
}

// TestPipelineTeamRepMonthsCapped: a rep's month with more signed contracts than a list counts
// shows the list's count (workindex.CountBound, capped, as SumCount and the list say it) and the
// value of the whole month (the sums hold every row; SumCount's value was of the rows it counted).
func TestPipelineTeamRepMonthsCapped(t *testing.T) {
	t.Parallel()
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		const n = workindex.CountBound + 3
		at := time.Date(2026, 10, 14, 9, 0, 0, 0, time.UTC)
		err := db.Tx(ctx, func(tx *sql.Tx) error {
			for id := range int64(n) {
				if _, err := tx.ExecContext(ctx, `INSERT INTO work_rows (kind, id, contract_id, contract_number, stage, one_off_cents,
					value_cents, created_by, created_by_name, changed_by, changed_by_name, changed_at, seen_at, stage_since, signed_at, signed_month)
					VALUES ('contract', $1, $6, $2, 'signed', 100, 100, $3, 'Alice Rep', $3, 'Alice Rep', $4, $4, $4, $4, $5)`,
					id+1, fmt.Sprintf("C-%d", id+1), alice.Key(), statedb.Micros(at), workindex.SignedMonth(at), int32(id+1)); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO work_viewers (person, kind, id, owner, seen_at) VALUES ($1, 'contract', $2, 0, $3)`,
					lead.Key(), id+1, statedb.Micros(at)); err != nil {
					return err
				}
			}
			return workindex.RebuildTotals(ctx, tx)
		})
		if err != nil {
			t.Fatal(err)
		}
		ix := workindex.New(db, workindex.Options{Now: func() time.Time { return now }})
		p := New(ix, Options{SignatureDays: 14, DraftDays: 30, Now: func() time.Time { return now }})
		months, err := p.SignedByMonth(ctx, lead, alice.Key())
		if err != nil {
			t.Fatal(err)
		}
		oct := months[SignedMonthsBack-2]
		if !oct.Start.Equal(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)) || oct.N != workindex.CountBound || !oct.Capped || oct.ValueCents != n*100 {
			t.Fatalf("October: %+v, want %d capped and %d cents", oct, workindex.CountBound, n*100)
		}
		sc, capped, err := ix.SumCount(ctx, lead, oct.Query)
		if err != nil {
			t.Fatal(err)
		}
		if int(sc.N) != oct.N || capped != oct.Capped || listed(t, ix, lead, oct.Query) != oct.N {
			t.Fatalf("October: figure %d (capped %v), SumCount %d (capped %v), list %d", oct.N, oct.Capped, sc.N, capped, listed(t, ix, lead, oct.Query))
		}
	})
}
