package pipeline

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/workindex"
)

var now = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func daysBefore(n int) time.Time { return now.AddDate(0, 0, -n) }

var (
	alice = workindex.Viewer{Subject: "alice", Name: "Alice Rep"}
	bob   = workindex.Viewer{Subject: "bob", Name: "Bob Rep"}
	lead  = workindex.Viewer{Subject: "lead", Name: "Lea Lead", Team: true}
)

// row is one row of the fixture, inserted directly (the stages Signed, Declined and Expired come
// from rules another change brings), owned by its creator.
type row struct {
	kind            workindex.Kind
	id              int64
	stage           workindex.Stage
	by              workindex.Viewer
	oneOff, monthly int64
	since, changed  time.Time
}

// world is a rep Alice, a rep Bob and a team lead: Alice has two drafts (one untouched for 40
// days), a generated quote, a contract out for signature for 20 days, one declined and two
// signed (this month and last); Bob a quote and a contract out for signature for 2 days and an
// expired contract.
func world(t *testing.T, db *statedb.DB) (*workindex.Index, *Pipeline) {
	t.Helper()
	ctx := context.Background()
	rows := []row{
		{workindex.KindQuote, 1, workindex.StageDraft, alice, 100_00, 10_00, daysBefore(40), daysBefore(40)},
		{workindex.KindQuote, 2, workindex.StageDraft, alice, 50_00, 0, daysBefore(1), daysBefore(1)},
		{workindex.KindQuote, 3, workindex.StageGenerated, alice, 1000_00, 100_00, daysBefore(3), daysBefore(3)},
		{workindex.KindQuote, 4, workindex.StageSignature, bob, 200_00, 0, daysBefore(2), daysBefore(2)},
		{workindex.KindContract, 11, workindex.StageSignature, alice, 300_00, 0, daysBefore(20), daysBefore(20)},
		{workindex.KindContract, 12, workindex.StageDeclined, alice, 1_00, 0, daysBefore(5), daysBefore(5)},
		{workindex.KindContract, 13, workindex.StageSigned, alice, 1_00, 0, daysBefore(10), daysBefore(10)},
		{workindex.KindContract, 14, workindex.StageSigned, alice, 1_00, 0, daysBefore(40), daysBefore(40)},
		{workindex.KindContract, 15, workindex.StageSignature, bob, 1_00, 0, daysBefore(2), daysBefore(2)},
		{workindex.KindContract, 16, workindex.StageExpired, bob, 1_00, 0, daysBefore(8), daysBefore(8)},
		// Archived: one signed this month first (a win that stays), one never seen signed.
		{workindex.KindContract, 17, workindex.StageArchived, alice, 2_00, 0, daysBefore(1), daysBefore(1)},
		{workindex.KindContract, 18, workindex.StageArchived, alice, 3_00, 0, daysBefore(1), daysBefore(1)},
	}
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		for _, r := range rows {
			number := ""
			contractID := int64(0)
			if r.kind == workindex.KindContract {
				number, contractID = "C-2026-"+string(rune('0'+r.id%10)), r.id
			}
			var signed time.Time
			switch {
			case r.kind == workindex.KindContract && r.stage == workindex.StageSigned:
				signed = r.since
			case r.id == 17:
				signed = daysBefore(3)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO work_rows (kind, id, quote_id, cpq_id, customer_id, customer, contract_id,
				contract_number, stage, one_off_cents, monthly_cents, value_cents, created_by, created_by_name, changed_by, changed_by_name,
				changed_at, seen_at, stage_since, signed_at, signed_month)
				VALUES ($1, $2, $3, 1, 7, 'Acme', $4, $5, $6, $7, $8, $9, $10, $11, $10, $11, $12, $12, $13, $14, $15)`,
				string(r.kind), r.id, r.id, contractID, number, string(r.stage), r.oneOff, r.monthly, r.oneOff+12*r.monthly,
				r.by.Key(), r.by.Name, statedb.Micros(r.changed), statedb.Micros(r.since), statedb.Micros(signed), workindex.SignedMonth(signed)); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO work_viewers (person, kind, id, owner, seen_at) VALUES ($1, $2, $3, 1, $4)`,
				r.by.Key(), string(r.kind), r.id, statedb.Micros(r.changed)); err != nil {
				return err
			}
			// The lead's token read every row as it stands (a list's re-read).
			if _, err := tx.ExecContext(ctx, `INSERT INTO work_viewers (person, kind, id, owner, seen_at) VALUES ($1, $2, $3, 0, $4)`,
				lead.Key(), string(r.kind), r.id, statedb.Micros(r.changed)); err != nil {
				return err
			}
		}
		return workindex.RebuildTotals(ctx, tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	ix := workindex.New(db, workindex.Options{Now: func() time.Time { return now }})
	return ix, New(ix, Options{SignatureDays: 14, DraftDays: 30, Now: func() time.Time { return now }})
}

func figures(t *testing.T, p *Pipeline, v workindex.Viewer) map[workindex.Stage]Figure {
	t.Helper()
	fs, err := p.Stages(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	out := map[workindex.Stage]Figure{}
	for _, f := range fs {
		out[f.Stage] = f
	}
	return out
}

// listed is how many rows the list a figure links to shows: every figure must match it.
func listed(t *testing.T, ix *workindex.Index, v workindex.Viewer, q workindex.Query) int {
	t.Helper()
	page, err := ix.List(context.Background(), v, q)
	if err != nil {
		t.Fatal(err)
	}
	return page.Total
}

func TestPipelineStagesMineAndTeam(t *testing.T) {
	t.Parallel()
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ix, p := world(t, db)
		mine := figures(t, p, alice)
		if f := mine[workindex.StageDraft]; f.Count != 2 || f.ValueCents != 100_00+12*10_00+50_00 {
			t.Errorf("Alice's drafts: %+v", f)
		}
		if f := mine[workindex.StageSignature]; f.Count != 0 || f.ValueCents != 0 {
			t.Errorf("Alice sees Bob's quote out for signature: %+v", f)
		}
		team := figures(t, p, lead)
		if f := team[workindex.StageSignature]; f.Count != 1 || f.ValueCents != 200_00 {
			t.Errorf("the team's quotes out for signature: %+v", f)
		}
		if f := team[workindex.StageDraft]; f.Count != 2 {
			t.Errorf("the team's drafts: %+v", f)
		}
		for _, v := range []workindex.Viewer{alice, bob, lead} {
			for st, f := range figures(t, p, v) {
				if n := listed(t, ix, v, f.Query); int64(n) != f.Count {
					t.Errorf("%s's %s figure %d, its list %d", v.Subject, st, f.Count, n)
				}
			}
		}
		// Recent work: the viewer's own quotes, newest first (a team lead's too: their own).
		recent, err := p.Recent(context.Background(), alice)
		if err != nil || len(recent) != 3 || recent[0].QuoteID != 2 || recent[1].QuoteID != 3 || recent[2].QuoteID != 1 {
			t.Errorf("Alice's recent work: %+v %v", recent, err)
		}
		if recent, err := p.Recent(context.Background(), lead); err != nil || len(recent) != 0 {
			t.Errorf("the lead's recent work lists others' quotes: %d %v", len(recent), err)
		}
		// A row the v2 API refused the lead leaves their figures, as it leaves their lists.
		if err := ix.Forget(context.Background(), lead, workindex.KindQuote, 4); err != nil {
			t.Fatal(err)
		}
		if f := figures(t, p, lead)[workindex.StageSignature]; f.Count != 0 || f.ValueCents != 0 {
			t.Errorf("a refused row still counts for the lead: %+v", f)
		}
	})
}

func TestPipelineRepsOnlyForTheTeam(t *testing.T) {
	t.Parallel()
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ix, p := world(t, db)
		if reps, err := p.Reps(context.Background(), alice); err != nil || reps != nil {
			t.Fatalf("a rep sees figures by rep: %v %v", reps, err)
		}
		reps, err := p.Reps(context.Background(), lead)
		if err != nil {
			t.Fatal(err)
		}
		if len(reps) != 2 || reps[0].Name != "Alice Rep" || reps[0].Count != 3 || reps[1].Name != "Bob Rep" || reps[1].Count != 1 {
			t.Fatalf("reps: %+v", reps)
		}
		for _, r := range reps {
			if n := listed(t, ix, lead, r.Query); int64(n) != r.Count {
				t.Errorf("%s: figure %d, list %d", r.Name, r.Count, n)
			}
		}
		// The Person filter is a team role's: a rep asking for Bob's rows gets their own.
		q := reps[1].Query
		if n := listed(t, ix, alice, q); n != 3 {
			t.Errorf("a rep listed another person's rows: %d", n)
		}
	})
}

func TestPipelineFollowUps(t *testing.T) {
	t.Parallel()
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ix, p := world(t, db)
		want := map[workindex.Viewer]map[FollowUpKind][]int64{
			alice: {FollowUpSignature: {11}, FollowUpDeclined: {12}, FollowUpExpired: nil, FollowUpDraft: {1}, FollowUpArchive: {14, 13}},
			bob:   {FollowUpSignature: nil, FollowUpDeclined: nil, FollowUpExpired: {16}, FollowUpDraft: nil, FollowUpArchive: nil},
			lead:  {FollowUpSignature: {11}, FollowUpDeclined: {12}, FollowUpExpired: {16}, FollowUpDraft: {1}, FollowUpArchive: {14, 13}},
		}
		for v, kinds := range want {
			fs, err := p.FollowUps(context.Background(), v)
			if err != nil {
				t.Fatal(err)
			}
			if len(fs) != len(kinds) {
				t.Fatalf("%s: %d follow-ups", v.Subject, len(fs))
			}
			for _, f := range fs {
				var ids []int64
				for _, r := range f.Rows {
					ids = append(ids, r.ID())
				}
				if f.N != len(kinds[f.Kind]) || len(ids) != len(kinds[f.Kind]) {
					t.Errorf("%s %s: %d (%v), want %v", v.Subject, f.Kind, f.N, ids, kinds[f.Kind])
					continue
				}
				for i := range ids {
					if ids[i] != kinds[f.Kind][i] {
						t.Errorf("%s %s: %v, want %v (oldest first)", v.Subject, f.Kind, ids, kinds[f.Kind])
					}
				}
				if n := listed(t, ix, v, f.Query); n != f.N {
					t.Errorf("%s %s: figure %d, list %d", v.Subject, f.Kind, f.N, n)
				}
			}
		}
	})
}

func TestPipelineSignedMonthsConversionAging(t *testing.T) {
	t.Parallel()
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ix, p := world(t, db)
		ctx := context.Background()
		this, last, err := p.SignedMonths(ctx, alice)
		if err != nil || this.N != 2 || last.N != 1 {
			t.Errorf("Alice signed this month %d, last month %d (%v); want 2 (one since archived) and 1", this.N, last.N, err)
		}
		for _, c := range []Count{this, last} {
			if n := listed(t, ix, alice, c.Query); n != c.N {
				t.Errorf("signed in a month: figure %d, its list %d (%+v)", c.N, n, c.Query)
			}
		}
		this, last, err = p.SignedMonths(ctx, bob)
		if err != nil || this.N != 0 || last.N != 0 {
			t.Errorf("Bob signed this month %d, last month %d (%v)", this.N, last.N, err)
		}
		// Signed: 13, 14 and the archived 17; generated: those, 11 out for signature and 12 declined
		// (18, archived never seen signed, counts in neither).
		conv, err := p.Conversion(ctx, alice)
		if err != nil || conv.Signed.Count != 3 || conv.Generated.Count != 5 || conv.Signed.ValueCents != 4_00 {
			t.Errorf("Alice's conversion %d of %d, signed value %d (%v)", conv.Signed.Count, conv.Generated.Count, conv.Signed.ValueCents, err)
		}
		conv, err = p.Conversion(ctx, lead)
		if err != nil || conv.Signed.Count != 3 || conv.Generated.Count != 7 {
			t.Errorf("the team's conversion %d of %d (%v)", conv.Signed.Count, conv.Generated.Count, err)
		}
		if n := listed(t, ix, lead, conv.Signed.Query); int64(n) != conv.Signed.Count {
			t.Errorf("conversion's signed: figure %d, list %d", conv.Signed.Count, n)
		}
		// Generated is its list plus the signed contracts archived since.
		archivedWins := listed(t, ix, lead, workindex.Query{Kind: workindex.KindContract, Scope: workindex.ScopeAll, Signed: true,
			Stages: []workindex.Stage{workindex.StageArchived}})
		if n := listed(t, ix, lead, conv.Generated.Query) + archivedWins; int64(n) != conv.Generated.Count || archivedWins != 1 {
			t.Errorf("conversion: figure %d, list %d (archived wins %d)", conv.Generated.Count, n, archivedWins)
		}
		buckets, err := p.Aging(ctx, lead, workindex.StageSignature, workindex.ScopeAll)
		if err != nil {
			t.Fatal(err)
		}
		got := []int{}
		for _, b := range buckets {
			got = append(got, b.N)
			if n := listed(t, ix, lead, b.Query); n != b.N {
				t.Errorf("aging %d-%d: figure %d, list %d", b.MinDays, b.MaxDays, b.N, n)
			}
		}
		if len(got) != 4 || got[0] != 1 || got[1] != 0 || got[2] != 1 || got[3] != 0 {
			t.Errorf("aging of what is out for signature: %v, want [1 0 1 0]", got)
		}
		buckets, err = p.Aging(ctx, alice, workindex.StageSignature, workindex.ScopeMine)
		if err != nil || buckets[0].N != 0 || buckets[2].N != 1 {
			t.Errorf("Alice's aging: %+v %v", buckets, err)
		}
		waiting, err := p.Waiting(ctx, lead)
		if err != nil || waiting.N != 2 || len(waiting.Rows) != 2 {
			t.Errorf("signed waiting for the archive: %+v %v", waiting, err)
		}
	})
}

// The index keeps work_totals and stage_since as it writes: the totals equal the ones computed
// from the rows, and a row's stage_since moves only when its stage changes.
func TestPipelineTotalsFollowSightings(t *testing.T) {
	t.Parallel()
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		clock := now
		ix := workindex.New(db, workindex.Options{Now: func() time.Time { return clock }})
		p := New(ix, Options{Now: func() time.Time { return clock }})
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(ix.ObserveQuote(ctx, alice, workindex.QuoteSighting{QuoteID: 1, CPQID: 1, CustomerID: 7, OneOffCents: 100, MonthlyCents: 10}, workindex.ActCreated))
		must(ix.ObserveQuote(ctx, alice, workindex.QuoteSighting{QuoteID: 2, CPQID: 1, CustomerID: 7, OneOffCents: 5}, workindex.ActCreated))
		clock = clock.Add(time.Hour)
		must(ix.ObserveQuote(ctx, bob, workindex.QuoteSighting{QuoteID: 1, CPQID: 1, CustomerID: 7, OneOffCents: 300, MonthlyCents: 10}, workindex.ActChanged))
		clock = clock.Add(time.Hour)
		must(ix.ObserveContract(ctx, bob, workindex.ContractSighting{ContractID: 9, Number: "C-9", QuoteID: 1, CPQID: 1, CustomerID: 7,
			Facts: workindex.ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: []string{"SENT"}}, OneOffCents: 300, MonthlyCents: 10}, workindex.ActCreated))
		sinceOf := func(id int64) time.Time {
			var us int64
			must(db.SQL.QueryRowContext(ctx, `SELECT stage_since FROM work_rows WHERE kind = 'quote' AND id = $1`, id).Scan(&us))
			return statedb.Time(us)
		}
		if got := sinceOf(1); !got.Equal(clock) {
			t.Errorf("quote 1 went out for signature at %v, stage_since %v", clock, got)
		}
		if got := sinceOf(2); !got.Equal(now) {
			t.Errorf("quote 2 is a draft since %v, stage_since %v", now, got)
		}
		clock = clock.Add(time.Hour)
		must(ix.ObserveQuote(ctx, alice, workindex.QuoteSighting{QuoteID: 2, CPQID: 1, CustomerID: 7, OneOffCents: 6}, workindex.ActChanged))
		if got := sinceOf(2); !got.Equal(now) {
			t.Errorf("a change within the stage moved stage_since to %v", got)
		}

		before := readTotals(t, db)
		must(db.Tx(ctx, func(tx *sql.Tx) error { return workindex.RebuildTotals(ctx, tx) }))
		after := readTotals(t, db)
		for k, v := range after {
			if before[k] != v {
				t.Errorf("totals %v: kept %v, computed %v", k, before[k], v)
			}
		}
		for k, v := range before {
			if _, ok := after[k]; !ok && v != [2]int64{} {
				t.Errorf("totals %v: kept %v, none computed", k, v)
			}
		}
		// Quote 1 counts for Alice (created) and Bob (changed last), each in their pipeline; for
		// Alice once her token read it as Bob left it.
		if f := figures(t, p, alice)[workindex.StageSignature]; f.Count != 0 || f.ValueCents != 0 {
			t.Errorf("Alice's quotes out for signature count Bob's change she never read: %+v", f)
		}
		must(ix.ObserveQuote(ctx, alice, workindex.QuoteSighting{QuoteID: 1, CPQID: 1, CustomerID: 7, ContractID: 9, ContractNumber: "C-9",
			OneOffCents: 300, MonthlyCents: 10}, workindex.ActOpened))
		if f := figures(t, p, alice)[workindex.StageSignature]; f.Count != 1 || f.ValueCents != 420 {
			t.Errorf("Alice's quotes out for signature: %+v", f)
		}
		if f := figures(t, p, bob)[workindex.StageSignature]; f.Count != 1 {
			t.Errorf("Bob's quotes out for signature: %+v", f)
		}
		if f := figures(t, p, alice)[workindex.StageDraft]; f.Count != 1 || f.ValueCents != 6 {
			t.Errorf("Alice's drafts: %+v", f)
		}
	})
}

func readTotals(t *testing.T, db *statedb.DB) map[[3]string][2]int64 {
	t.Helper()
	rows, err := db.SQL.Query(`SELECT kind, person, stage, n, value_cents FROM work_totals`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[[3]string][2]int64{}
	for rows.Next() {
		var k [3]string
		var v [2]int64
		if err := rows.Scan(&k[0], &k[1], &k[2], &v[0], &v[1]); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

// No figure of the home page adds a row the viewer's token did not read as it stands: a row
// changed by a colleague's read since leaves every figure, follow-up and aging bar of the lead's
// (and its rep's name with it), is counted apart as unchecked, and comes back when the lead's
// token reads it; a row the v2 API refused leaves them all for good.
func TestPipelineFiguresOnlyOfRevealedRows(t *testing.T) {
	t.Parallel()
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ix, p := world(t, db)
		ctx := context.Background()
		// Bob's contract 16 (expired) and quote 4 (out for signature) change after the lead's read.
		later := workindex.New(db, workindex.Options{Now: func() time.Time { return now.Add(time.Hour) }})
		if err := later.ObserveQuote(ctx, bob, workindex.QuoteSighting{QuoteID: 4, CPQID: 1, CustomerID: 7, OneOffCents: 999_00}, workindex.ActChanged); err != nil {
			t.Fatal(err)
		}
		if err := later.ObserveContract(ctx, bob, workindex.ContractSighting{ContractID: 16, Number: "C-2026-6", CPQID: 1, CustomerID: 7,
			Facts: workindex.ContractFacts{Status: "GENERATED", SignatureStatuses: []string{"DECLINED"}}}, workindex.ActOpened); err != nil {
			t.Fatal(err)
		}
		team := figures(t, p, lead)
		if f := team[workindex.StageDraft]; f.Count != 2 || f.ValueCents != 100_00+12*10_00+50_00 {
			t.Errorf("the team's drafts count a row the lead did not read as it is: %+v", f)
		}
		reps, err := p.Reps(ctx, lead)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reps {
			if r.Name == "Bob Rep" {
				t.Errorf("Bob's open pipeline from a row the lead did not read as it is: %+v", r)
			}
		}
		fs, err := p.FollowUps(ctx, lead)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			for _, r := range f.Rows {
				if r.ID() == 16 || r.ID() == 4 {
					t.Errorf("follow-up %s shows row %d", f.Kind, r.ID())
				}
			}
			if (f.Kind == FollowUpDeclined && f.N != 1) || (f.Kind == FollowUpExpired && f.N != 0) {
				t.Errorf("follow-up %s: %d", f.Kind, f.N)
			}
		}
		conv, err := p.Conversion(ctx, lead)
		if err != nil || conv.Generated.Count != 6 {
			t.Errorf("the team's conversion counts what the lead did not read: %+v %v", conv, err)
		}
		buckets, err := p.Aging(ctx, lead, workindex.StageSignature, workindex.ScopeAll)
		if err != nil || buckets[0].N != 1 {
			t.Errorf("aging: %+v %v", buckets, err)
		}
		u, err := p.Unchecked(ctx, lead)
		if err != nil || u.N != 2 {
			t.Errorf("the lead's unchecked: %+v %v, want 2", u, err)
		}
		// The lead's token reads both: the figures take them in as they are now.
		if err := later.ObserveQuote(ctx, lead, workindex.QuoteSighting{QuoteID: 4, CPQID: 1, CustomerID: 7, OneOffCents: 999_00}, workindex.ActRefreshed); err != nil {
			t.Fatal(err)
		}
		reps, _ = p.Reps(ctx, lead)
		if len(reps) != 2 || reps[1].Name != "Bob Rep" || reps[1].ValueCents != 999_00 {
			t.Errorf("reps after the lead's read: %+v", reps)
		}
		if u, _ := p.Unchecked(ctx, lead); u.N != 1 {
			t.Errorf("unchecked after one read: %d", u.N)
		}
		// Refused: gone from every figure, and not unchecked either.
		if err := ix.Forget(ctx, lead, workindex.KindQuote, 4); err != nil {
			t.Fatal(err)
		}
		reps, _ = p.Reps(ctx, lead)
		if len(reps) != 1 {
			t.Errorf("reps after a refusal: %+v", reps)
		}
		if u, _ := p.Unchecked(ctx, lead); u.N != 1 {
			t.Errorf("unchecked after a refusal: %d", u.N)
		}
	})
}

// TestPipelineArchiveKeepsTheWin: a contract signed and then archived by the back office's batch
// stays in "signed this month" and the conversion of the rep and the team lead once their tokens
// read it as it stands (their home re-reads it), and until then it is only unchecked, never a
// figure of facts they did not read.
func TestPipelineArchiveKeepsTheWin(t *testing.T) {
	t.Parallel()
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		clock := now
		ix := workindex.New(db, workindex.Options{Now: func() time.Time { return clock }})
		p := New(ix, Options{SignatureDays: 14, DraftDays: 30, Now: func() time.Time { return clock }})
		doc := workindex.ContractSighting{ContractID: 21, Number: "C-2026-000021", QuoteID: 21, CPQID: 1, CustomerID: 7, Customer: "Acme",
			Facts: workindex.ContractFacts{Status: "GENERATED"}, OneOffCents: 407_80}
		if err := ix.ObserveContract(ctx, alice, doc, workindex.ActCreated); err != nil {
			t.Fatal(err)
		}
		signedAt := now.Add(-2 * time.Hour)
		doc.Facts = workindex.ContractFacts{Status: "SIGNED", SignatureStatuses: []string{"SIGNED"}}
		doc.SignedAt, doc.ChangedAt = signedAt, signedAt
		clock = clock.Add(time.Minute)
		for _, v := range []workindex.Viewer{alice, lead} {
			if err := ix.ObserveContract(ctx, v, doc, workindex.ActRefreshed); err != nil {
				t.Fatal(err)
			}
		}
		type seen struct {
			this     int
			signed   int64
			generate int64
		}
		look := func(v workindex.Viewer) seen {
			this, _, err := p.SignedMonths(ctx, v)
			if err != nil {
				t.Fatal(err)
			}
			conv, err := p.Conversion(ctx, v)
			if err != nil {
				t.Fatal(err)
			}
			return seen{this.N, conv.Signed.Count, conv.Generated.Count}
		}
		before := map[string]seen{alice.Name: look(alice), lead.Name: look(lead)}
		if before[alice.Name] != (seen{1, 1, 1}) || before[lead.Name] != (seen{1, 1, 1}) {
			t.Fatalf("before the archive: %+v", before)
		}
		bea := workindex.Viewer{Subject: "bea", Name: "Bea Backoffice", Team: true}
		clock = clock.Add(time.Hour)
		if err := ix.Archive(ctx, bea, doc.Number, clock.Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		if got := look(alice); got != (seen{}) {
			t.Fatalf("Alice's figures count an archive her token has not read: %+v", got)
		}
		if u, err := p.Unchecked(ctx, alice); err != nil || u.N != 1 {
			t.Fatalf("Alice's unchecked after the archive: %+v %v", u, err)
		}
		// Their homes re-read it with their tokens: the win is still there.
		doc.Facts = workindex.ContractFacts{Status: "ARCHIVED", Archived: true, SignatureStatuses: []string{"SIGNED"}}
		doc.ChangedAt = clock.Add(-time.Second)
		clock = clock.Add(time.Minute)
		for _, v := range []workindex.Viewer{alice, lead} {
			if err := ix.ObserveContract(ctx, v, doc, workindex.ActRefreshed); err != nil {
				t.Fatal(err)
			}
			if got := look(v); got != before[v.Name] {
				t.Errorf("%s's figures after the archive: %+v, before %+v", v.Name, got, before[v.Name])
			}
		}
		if got := look(bea); got != (seen{1, 1, 1}) {
			t.Errorf("the back office's figures: %+v", got)
		}
	})
}
