package pipeline

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/workindex"
)

// TestPipelineTeamFiguresMedianDaysAndDeclineReasons: through the index's own writes (sightings,
// a refusal, a new send), the team lead's table gives each rep's wins in one read, the median days
// from send to signature (the v2 request's sentAt, else when the portal first saw it sent), and
// the declines by reason; each count equals its list's; a refused row leaves the figures; and the
// sums kept on write equal those computed again from the rows (RebuildTotals).
func TestPipelineTeamFiguresMedianDaysAndDeclineReasons(t *testing.T) {
	t.Parallel()
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		clock := now.AddDate(0, 0, -8)
		ix := workindex.New(db, workindex.Options{Now: func() time.Time { return clock }})
		p := New(ix, Options{SignatureDays: 14, DraftDays: 30, Now: func() time.Time { return now }})
		sight := func(id int32, facts workindex.ContractFacts, mod func(s *workindex.ContractSighting)) {
			t.Helper()
			s := workindex.ContractSighting{ContractID: id, Number: fmt.Sprintf("C-%d", id), CPQID: 1, CustomerID: 7, Customer: "Acme",
				Facts: facts, OneOffCents: int64(id) * 100}
			if mod != nil {
				mod(&s)
			}
			if err := ix.ObserveContract(ctx, alice, s, workindex.ActCreated); err != nil {
				t.Fatal(err)
			}
			// The lead's token reads it as it stands (a list's re-read).
			if err := ix.ObserveContract(ctx, lead, s, workindex.ActRefreshed); err != nil {
				t.Fatal(err)
			}
		}
		signed := workindex.ContractFacts{Status: "SIGNED", SignatureStatuses: []string{"SIGNED"}}
		declined := workindex.ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: []string{"DECLINED"}}
		// 23 is seen out for signature with no request listed (no sentAt): sent when first seen.
		sight(23, workindex.ContractFacts{Status: "SIGNATURE_REQUESTED"}, nil)
		clock = now
		sight(21, signed, func(s *workindex.ContractSighting) { s.SentAt, s.SignedAt = daysBefore(10), daysBefore(6) }) // 4 days
		sight(22, signed, func(s *workindex.ContractSighting) { s.SentAt, s.SignedAt = daysBefore(3), daysBefore(1) })  // 2 days
		sight(23, signed, func(s *workindex.ContractSighting) { s.SignedAt = daysBefore(1) })                           // 7 days
		for id, reason := range map[int32]string{24: "Price  too\nhigh", 25: "Price too high", 26: "Chose <b>another</b> supplier", 27: ""} {
			sight(id, declined, func(s *workindex.ContractSighting) { s.DeclineReason, s.AnsweredAt = reason, daysBefore(2) })
		}

		table := func() RepFigures {
			t.Helper()
			reps, err := p.TeamFigures(ctx, lead)
			if err != nil || len(reps) != 1 || reps[0].Name != "Alice Rep" {
				t.Fatalf("reps: %+v %v", reps, err)
			}
			r := reps[0]
			if n := listed(t, ix, lead, r.Signed.Query); n != r.Signed.N {
				t.Errorf("signed: figure %d, list %d", r.Signed.N, n)
			}
			if n := listed(t, ix, lead, r.Declined.Query); int64(n) != r.Declined.Count {
				t.Errorf("declined: figure %d, list %d", r.Declined.Count, n)
			}
			for _, reason := range r.Reasons {
				if reason.Query.DeclineReason != reason.Reason || reason.Query.Person != r.Person {
					t.Errorf("the list of %q: %+v", reason.Reason, reason.Query)
				}
				page, err := ix.List(ctx, lead, reason.Query)
				if err != nil {
					t.Fatal(err)
				}
				if int64(page.Total) != reason.Count {
					t.Errorf("%q: figure %d, list %d", reason.Reason, reason.Count, page.Total)
				}
				for _, row := range page.Rows {
					if row.DeclineReason != reason.Reason || row.Stage != workindex.StageDeclined {
						t.Errorf("%q lists %+v", reason.Reason, row)
					}
				}
			}
			return r
		}
		reasons := func(r RepFigures) map[string]int64 {
			out := map[string]int64{}
			for _, x := range r.Reasons {
				out[x.Reason] = x.Count
			}
			return out
		}
		r := table()
		if r.Signed.N != 3 || r.SignedValueCents != 21_00+22_00+23_00 || !r.HasMedian || r.MedianDays != 4 || r.DaysKnown != 3 {
			t.Errorf("signed and median: %+v", r)
		}
		if want := map[string]int64{"Price too high": 2, "Chose <b>another</b> supplier": 1}; r.Declined.Count != 4 || !maps.Equal(reasons(r), want) {
			t.Errorf("declines %d, reasons %v, want 4 and %v", r.Declined.Count, reasons(r), want)
		}
		if reps, err := p.TeamFigures(ctx, alice); err != nil || reps != nil {
			t.Errorf("a rep sees the team's table: %+v %v", reps, err)
		}

		// Refused: 24 and 22 leave the lead's figures; 26 sent again leaves the declines.
		for _, id := range []int64{24, 22} {
			if err := ix.Forget(ctx, lead, workindex.KindContract, id); err != nil {
				t.Fatal(err)
			}
		}
		sight(26, workindex.ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: []string{"DECLINED", "SENT"}},
			func(s *workindex.ContractSighting) { s.SentAt = now })
		r = table()
		// The median of 4 and 7 days.
		if r.Signed.N != 2 || r.MedianDays != 5.5 || r.DaysKnown != 2 {
			t.Errorf("after a refusal, signed and median: %+v", r)
		}
		if want := map[string]int64{"Price too high": 1}; r.Declined.Count != 2 || !maps.Equal(reasons(r), want) {
			t.Errorf("after a refusal and a new send, declines %d, reasons %v, want 2 and %v", r.Declined.Count, reasons(r), want)
		}

		// The sums kept by the writes are those computed again from the rows and the reads.
		kept := repSums(t, db)
		if err := db.Tx(ctx, func(tx *sql.Tx) error { return workindex.RebuildTotals(ctx, tx) }); err != nil {
			t.Fatal(err)
		}
		if rebuilt := repSums(t, db); !maps.Equal(kept, rebuilt) {
			t.Errorf("kept on write %v, rebuilt %v", kept, rebuilt)
		}
	})
}

// repSums are the non-zero rows of work_viewer_rep_signed and work_viewer_rep_declines.
func repSums(t *testing.T, db *statedb.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, q := range []string{
		`SELECT 'signed ' || person || ' ' || rep || ' ' || CAST(days AS TEXT), CAST(n AS TEXT) || ' ' || CAST(value_cents AS TEXT) FROM work_viewer_rep_signed WHERE n <> 0 OR value_cents <> 0`,
		`SELECT 'declined ' || person || ' ' || rep || ' ' || reason, CAST(n AS TEXT) FROM work_viewer_rep_declines WHERE n <> 0`,
	} {
		rows, err := db.SQL.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			out[k] = v
		}
		rows.Close()
	}
	if len(out) == 0 {
		t.Fatal("no sums by rep")
	}
	return out
}
