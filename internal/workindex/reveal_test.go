package workindex

import (
	"context"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// everything is every way a viewer can learn of rows of kind: the list with each filter and
// order, the count, the export's walk, a lookup. It returns the ids each of them gives.
func everything(t *testing.T, ix *Index, v Viewer, kind Kind, id int64) map[string][]int64 {
	t.Helper()
	ctx := context.Background()
	out := map[string][]int64{}
	queries := map[string]Query{
		"all":             {Kind: kind, Scope: ScopeAll},
		"mine":            {Kind: kind, Scope: ScopeMine},
		"find name":       {Kind: kind, Scope: ScopeAll, Find: "Lau"},
		"find other name": {Kind: kind, Scope: ScopeAll, Find: "Lb"},
		"stage declined":  {Kind: kind, Scope: ScopeAll, Stages: []Stage{StageDeclined}},
		"stage generated": {Kind: kind, Scope: ScopeAll, Stages: []Stage{StageGenerated}},
		"customer":        {Kind: kind, Scope: ScopeAll, CustomerID: 7},
		"by value":        {Kind: kind, Scope: ScopeAll, Sort: SortValue},
		"from":            {Kind: kind, Scope: ScopeAll, From: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for name, q := range queries {
		p, err := ix.List(ctx, v, q)
		must(t, err)
		out["list "+name] = ids(p)
		if p.Total != len(p.Rows) {
			t.Errorf("list %s: total %d for %d rows", name, p.Total, len(p.Rows))
		}
		n, _, err := ix.Count(ctx, v, q)
		must(t, err)
		if n != len(p.Rows) {
			t.Errorf("count %s: %d, list %d", name, n, len(p.Rows))
		}
		var walked []int64
		must(t, ix.Walk(ctx, v, q, func(r Row) error {
			if !r.Revealed() {
				t.Errorf("walk %s gave an unrevealed row %+v", name, r)
			}
			walked = append(walked, r.ID())
			return nil
		}))
		out["walk "+name] = walked
	}
	if _, ok := ix.Lookup(ctx, v, kind, id); ok {
		out["lookup"] = []int64{id}
	}
	// The customer page's section (customer 7), both kinds in one statement.
	quotes, contracts, err := ix.CustomerWork(ctx, v, 7, 10)
	must(t, err)
	rows := map[Kind][]Row{KindQuote: quotes, KindContract: contracts}
	for k, rs := range rows {
		for _, r := range rs {
			if r.Kind != k || !r.Revealed() {
				t.Errorf("customer work, %s: %+v", k, r)
			}
			if k == kind {
				out["customer work"] = append(out["customer work"], r.ID())
			}
		}
	}
	return out
}

// sees says whether every way gives the row (want) or none does (!want); "find other name" and
// "stage declined" never match the row's own facts as the viewer read them.
func sees(t *testing.T, what string, got map[string][]int64, id int64, want map[string]bool) {
	t.Helper()
	for way, rows := range got {
		has := len(rows) == 1 && rows[0] == id
		if len(rows) > 1 {
			t.Errorf("%s, %s: %v", what, way, rows)
		}
		if has != want[way] {
			t.Errorf("%s, %s: gives %v, want the row: %v", what, way, rows, want[way])
		}
	}
}

// matching is what each way gives of a contract "Laurent", generated, customer 7, as read.
func matching(name string, mine bool, extra ...string) map[string]bool {
	want := map[string]bool{"list all": true, "walk all": true, "list find name": name == "Laurent", "walk find name": name == "Laurent",
		"list stage generated": true, "walk stage generated": true, "list customer": true, "walk customer": true,
		"list by value": true, "walk by value": true, "list from": true, "walk from": true, "lookup": true,
		"list mine": mine, "walk mine": mine, "customer work": true}
	for _, e := range extra {
		want[e] = true
	}
	return want
}

// The visibility rule (docs/work-index.md): no list, filter, order, count, export or lookup gives
// a row, or matches on its facts, unless the viewer's own token read it as it stands and the v2
// API did not refuse them since.
func TestOnlyWhatTheirOwnTokenReadAsItStands(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
		ix := newIndex(db, c)
		generated := ContractSighting{ContractID: 4, Number: "C-4", QuoteID: 40, CPQID: 1, CustomerID: 7, Customer: "Laurent",
			Facts: ContractFacts{Status: "GENERATED"}, OneOffCents: 1000}
		// Alice creates it; the lead (a team role) may list it but never read it.
		must(t, ix.ObserveContract(ctx, alice, generated, ActCreated))
		none := map[string]bool{}
		sees(t, "the lead, never read", everything(t, ix, lead, KindContract, 4), 4, none)
		sees(t, "alice, her own read", everything(t, ix, alice, KindContract, 4), 4, matching("Laurent", true))

		// The lead reads it: the same facts for them.
		c.t = c.t.Add(time.Minute)
		must(t, ix.ObserveContract(ctx, lead, generated, ActRefreshed))
		sees(t, "the lead, after their read", everything(t, ix, lead, KindContract, 4), 4, matching("Laurent", false))

		// Bob re-reads it unchanged: nobody loses it.
		c.t = c.t.Add(time.Minute)
		must(t, ix.ObserveContract(ctx, bob, generated, ActOpened))
		sees(t, "alice, after bob's unchanged read", everything(t, ix, alice, KindContract, 4), 4, matching("Laurent", true))
		sees(t, "the lead, after bob's unchanged read", everything(t, ix, lead, KindContract, 4), 4, matching("Laurent", false))

		// Bob's next read finds it declined, its customer renamed, at the same clock tick as the
		// lead's read before it: nobody else sees the new facts, nor any of the old.
		c.t = c.t.Add(time.Minute)
		must(t, ix.ObserveContract(ctx, lead, generated, ActRefreshed))
		declined := generated
		declined.Customer, declined.Facts, declined.OneOffCents = "Lbc", ContractFacts{Status: "GENERATED", SignatureStatuses: []string{"DECLINED"}}, 99
		must(t, ix.ObserveContract(ctx, bob, declined, ActOpened))
		sees(t, "alice, after bob's change", everything(t, ix, alice, KindContract, 4), 4, none)
		sees(t, "the lead, after bob's change (same tick)", everything(t, ix, lead, KindContract, 4), 4, none)
		for _, v := range []Viewer{alice, lead} {
			u, err := ix.Unchecked(ctx, v, KindContract, ScopeAll, 10)
			must(t, err)
			if u.Count != 1 || len(u.Rows) != 1 || u.Rows[0].ContractID != 4 || u.Rows[0].Customer != "" || u.Rows[0].Stage != "" {
				t.Errorf("%s's unchecked: %+v", v.Name, u)
			}
		}
		declinedWays := matching("Lbc", false, "list find other name", "walk find other name", "list stage declined", "walk stage declined")
		delete(declinedWays, "list stage generated")
		delete(declinedWays, "walk stage generated")
		sees(t, "bob, who read it", everything(t, ix, bob, KindContract, 4), 4, declinedWays)

		// Alice reads it again: she has it back, as it is now.
		c.t = c.t.Add(time.Minute)
		must(t, ix.ObserveContract(ctx, alice, declined, ActRefreshed))
		declinedMine := matching("Lbc", true, "list find other name", "walk find other name", "list stage declined", "walk stage declined")
		delete(declinedMine, "list stage generated")
		delete(declinedMine, "walk stage generated")
		sees(t, "alice, after her read", everything(t, ix, alice, KindContract, 4), 4, declinedMine)

		// The v2 API refuses her now: it leaves everything of hers at once, and is not unchecked.
		must(t, ix.Forget(ctx, alice, KindContract, 4))
		sees(t, "alice, refused", everything(t, ix, alice, KindContract, 4), 4, none)
		u, err := ix.Unchecked(ctx, alice, KindContract, ScopeAll, 10)
		must(t, err)
		if u.Count != 0 || len(u.Rows) != 0 {
			t.Errorf("a refused row is unchecked for alice: %+v", u)
		}
		if stages, _ := ix.ContractStages(ctx, alice, []string{"C-4"}, time.Hour); len(stages) != 0 {
			t.Errorf("a refused contract's stage for alice: %v", stages)
		}
		if stages, _ := ix.ContractStages(ctx, lead, []string{"C-4"}, time.Hour); len(stages) != 0 {
			t.Errorf("a contract changed since the lead's read gives them its stage: %v", stages)
		}
	})
}

// A row's facts move facts_at only when they change; a write with the same facts leaves it.
func TestFactsAtMovesOnlyWithTheFacts(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
		ix := newIndex(db, c)
		s := QuoteSighting{QuoteID: 1, CPQID: 1, CustomerID: 7, Customer: "Acme", OneOffCents: 5}
		must(t, ix.ObserveQuote(ctx, alice, s, ActCreated))
		first, _ := ix.Peek(ctx, KindQuote, 1)
		c.t = c.t.Add(time.Hour)
		must(t, ix.ObserveQuote(ctx, bob, s, ActOpened))
		same, _ := ix.Peek(ctx, KindQuote, 1)
		if !same.FactsAt.Equal(first.FactsAt) || !same.SeenAt.Equal(c.t) {
			t.Errorf("an unchanged read: facts at %v (was %v), seen at %v", same.FactsAt, first.FactsAt, same.SeenAt)
		}
		c.t = c.t.Add(time.Hour)
		s.OneOffCents = 6
		must(t, ix.ObserveQuote(ctx, bob, s, ActOpened))
		moved, _ := ix.Peek(ctx, KindQuote, 1)
		if !moved.FactsAt.Equal(c.t) {
			t.Errorf("a changed read: facts at %v, want %v", moved.FactsAt, c.t)
		}
		var stored int64
		must(t, db.SQL.QueryRowContext(ctx, `SELECT facts_at FROM work_rows WHERE kind = 'quote' AND id = 1`).Scan(&stored))
		if stored != statedb.Micros(c.t) {
			t.Errorf("facts_at stored %d", stored)
		}
	})
}
