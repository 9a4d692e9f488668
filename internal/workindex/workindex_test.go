package workindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// clock is a settable clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newIndex(db *statedb.DB, c *clock) *Index {
	return New(db, Options{Now: c.now})
}

func TestStageOfContract(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		facts ContractFacts
		want  Stage
	}{
		{"generated: status GENERATED, no request", ContractFacts{Status: "GENERATED"}, StageGenerated},
		{"out for signature: a SENT request", ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: []string{"SENT"}}, StageSignature},
		{"out for signature: a SENT request after a removed one", ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: []string{"REMOVED", "SENT"}}, StageSignature},
		{"out for signature: status alone when no request is listed", ContractFacts{Status: "SIGNATURE_REQUESTED"}, StageSignature},
		{"removed request goes back to generated", ContractFacts{Status: "GENERATED", SignatureStatuses: []string{"REMOVED"}}, StageGenerated},
		{"removed request wins over a stale status", ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: []string{"REMOVED"}}, StageGenerated},
		{"archived by status", ContractFacts{Status: "ARCHIVED"}, StageArchived},
		{"archived by archive.archived", ContractFacts{Status: "GENERATED", Archived: true}, StageArchived},
		{"archived wins over a SENT request", ContractFacts{Status: "ARCHIVED", Archived: true, SignatureStatuses: []string{"SENT"}}, StageArchived},
		{"archived wins over a signature", ContractFacts{Status: "ARCHIVED", SignatureStatuses: []string{"SIGNED"}}, StageArchived},
		{"signed: the status SIGNED", ContractFacts{Status: "SIGNED", SignatureStatuses: []string{"SIGNED"}}, StageSigned},
		{"signed: the status SIGNED without requests", ContractFacts{Status: "SIGNED"}, StageSigned},
		{"signed: a SIGNED request under a stale status", ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: []string{"SIGNED"}}, StageSigned},
		{"signed stays signed after a later decline", ContractFacts{Status: "SIGNED", SignatureStatuses: []string{"SIGNED", "DECLINED"}}, StageSigned},
		{"declined: the latest request DECLINED", ContractFacts{Status: "GENERATED", SignatureStatuses: []string{"DECLINED"}}, StageDeclined},
		{"declined after an expired one", ContractFacts{Status: "GENERATED", SignatureStatuses: []string{"EXPIRED", "DECLINED"}}, StageDeclined},
		{"expired: the latest request EXPIRED", ContractFacts{Status: "GENERATED", SignatureStatuses: []string{"DECLINED", "EXPIRED"}}, StageExpired},
		{"sent again after a decline", ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: []string{"DECLINED", "SENT"}}, StageSignature},
		{"removed after a decline goes back to generated", ContractFacts{Status: "GENERATED", SignatureStatuses: []string{"DECLINED", "REMOVED"}}, StageGenerated},
		{"unknown status is generated", ContractFacts{Status: "SOMETHING_NEW"}, StageGenerated},
	}
	for _, tt := range tests {
		if got := StageOfContract(tt.facts); got != tt.want {
			t.Errorf("%s: StageOfContract(%+v) = %q, want %q", tt.name, tt.facts, got, tt.want)
		}
	}
}

func TestStageOfQuote(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		hasContract   bool
		contractStage Stage
		want          Stage
	}{
		{"no contract: draft", false, "", StageDraft},
		{"contract not seen yet: generated", true, "", StageGenerated},
		{"contract generated", true, StageGenerated, StageGenerated},
		{"contract out for signature", true, StageSignature, StageSignature},
		{"contract archived", true, StageArchived, StageArchived},
	}
	for _, tt := range tests {
		if got := StageOfQuote(tt.hasContract, tt.contractStage); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

var (
	alice = Viewer{Subject: "alice", Name: "Alice"}
	bob   = Viewer{Subject: "bob", Name: "Bob"}
	lead  = Viewer{Subject: "lead", Name: "Lee", Team: true}
)

func ids(p Page) []int64 {
	out := make([]int64, 0, len(p.Rows))
	for _, r := range p.Rows {
		out = append(out, r.ID())
	}
	return out
}

func TestVisibilityAndScopes(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
		ix := newIndex(db, c)
		must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 1, CPQID: 1, CustomerID: 7, Customer: "Acme"}, ActCreated))
		c.t = c.t.Add(time.Minute)
		must(t, ix.ObserveQuote(ctx, bob, QuoteSighting{QuoteID: 2, CPQID: 1, CustomerID: 7, Customer: "Acme"}, ActCreated))
		c.t = c.t.Add(time.Minute)
		// Bob opens Alice's quote: it is his to see, not "his" quote.
		must(t, ix.ObserveQuote(ctx, bob, QuoteSighting{QuoteID: 1, CPQID: 1, CustomerID: 7, Customer: "Acme"}, ActOpened))

		list := func(v Viewer, scope Scope) []int64 {
			p, err := ix.List(ctx, v, Query{Kind: KindQuote, Scope: scope})
			must(t, err)
			return ids(p)
		}
		assertIDs(t, "alice mine", list(alice, ScopeMine), 1)
		assertIDs(t, "alice all (no team role)", list(alice, ScopeAll), 1)
		assertIDs(t, "bob mine", list(bob, ScopeMine), 2)
		assertIDs(t, "bob all: created and opened", list(bob, ScopeAll), 2, 1)
		// The lead may list the team's rows but has read none of them: none is shown, both wait.
		assertIDs(t, "lead all: nothing read yet", list(lead, ScopeAll))
		if u, err := ix.Unchecked(ctx, lead, KindQuote, ScopeAll, 10); err != nil || u.Count != 2 || len(u.Rows) != 2 || u.Rows[0].QuoteID != 2 {
			t.Errorf("lead's unchecked: %+v, %v; want 2, the newest first", u, err)
		}
		for _, id := range []int64{1, 2} {
			must(t, ix.ObserveQuote(ctx, lead, QuoteSighting{QuoteID: id, CPQID: 1, CustomerID: 7, Customer: "Acme"}, ActRefreshed))
		}
		assertIDs(t, "lead all: the team, read with the lead's token", list(lead, ScopeAll), 2, 1)
		assertIDs(t, "lead mine: nothing", list(lead, ScopeMine))
		assertIDs(t, "nobody", list(Viewer{}, ScopeAll))

		// Bob changes Alice's quote: it becomes his (last changed by him) and stays hers (created).
		must(t, ix.ObserveQuote(ctx, bob, QuoteSighting{QuoteID: 1, CPQID: 1, CustomerID: 7, OneOffCents: 500}, ActChanged))
		assertIDs(t, "bob mine after his change", list(bob, ScopeMine), 1, 2)
		// Alice read it before Bob's change: it waits for her own read.
		assertIDs(t, "alice mine after bob's change", list(alice, ScopeMine))
		if _, ok := ix.Lookup(ctx, alice, KindQuote, 1); ok {
			t.Error("Lookup reveals Bob's change to Alice")
		}
		c.t = c.t.Add(time.Minute)
		must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 1, CPQID: 1, CustomerID: 7, OneOffCents: 500}, ActRefreshed))
		assertIDs(t, "alice mine after her read", list(alice, ScopeMine), 1)
		r, _ := ix.Lookup(ctx, alice, KindQuote, 1)
		if r.CreatedByName != "Alice" || r.ChangedByName != "Bob" || r.Customer != "Acme" || r.OneOffCents != 500 {
			t.Errorf("row after change = %+v", r)
		}
	})
}

func TestForgetOn404(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
		ix := newIndex(db, c)
		must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 1, CustomerID: 7}, ActCreated))
		must(t, ix.ObserveQuote(ctx, lead, QuoteSighting{QuoteID: 1, CustomerID: 7}, ActRefreshed))
		must(t, ix.Forget(ctx, alice, KindQuote, 1))
		for _, v := range []Viewer{alice, {Subject: "alice", Team: true}} {
			p, err := ix.List(ctx, v, Query{Kind: KindQuote, Scope: ScopeAll})
			must(t, err)
			assertIDs(t, "after a 404 for alice", ids(p))
		}
		p, err := ix.List(ctx, lead, Query{Kind: KindQuote, Scope: ScopeAll})
		must(t, err)
		assertIDs(t, "others keep it", ids(p), 1)
		// A later successful read by her gives it back.
		c.t = c.t.Add(time.Hour)
		must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 1, CustomerID: 7}, ActOpened))
		p, err = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeAll})
		must(t, err)
		assertIDs(t, "after she reads it again", ids(p), 1)
	})
}

func TestQuoteFollowsItsContract(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
		ix := newIndex(db, c)
		must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 10, CPQID: 1, CustomerID: 7}, ActCreated))
		stage := func(kind Kind, id int64) Stage {
			r, ok := ix.Lookup(ctx, alice, kind, id)
			if !ok {
				return ""
			}
			return r.Stage
		}
		if got := stage(KindQuote, 10); got != StageDraft {
			t.Fatalf("new quote: %q", got)
		}
		contract := ContractSighting{ContractID: 5, Number: "C-5", QuoteID: 10, CPQID: 1, CustomerID: 7, Facts: ContractFacts{Status: "GENERATED"}}
		must(t, ix.ObserveContract(ctx, alice, contract, ActCreated))
		assertStage(t, "generated", stage(KindQuote, 10), stage(KindContract, 5), StageGenerated)
		contract.Facts = ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: []string{"SENT"}}
		must(t, ix.ObserveContract(ctx, alice, contract, ActChanged))
		assertStage(t, "sent", stage(KindQuote, 10), stage(KindContract, 5), StageSignature)
		contract.Facts = ContractFacts{Status: "GENERATED", SignatureStatuses: []string{"REMOVED"}}
		must(t, ix.ObserveContract(ctx, alice, contract, ActChanged))
		assertStage(t, "removed", stage(KindQuote, 10), stage(KindContract, 5), StageGenerated)
		contract.Facts = ContractFacts{Status: "ARCHIVED", Archived: true, SignatureStatuses: []string{"REMOVED"}}
		must(t, ix.ObserveContract(ctx, bob, contract, ActRefreshed))
		// Bob's read changed them: Alice sees neither until her own token reads them.
		assertStage(t, "archived (batch), for alice", stage(KindQuote, 10), stage(KindContract, 5), "")
		c.t = c.t.Add(time.Minute)
		must(t, ix.ObserveContract(ctx, alice, contract, ActRefreshed))
		if q, k := stage(KindQuote, 10), stage(KindContract, 5); q != "" || k != StageArchived {
			t.Errorf("archived (batch), contract read by alice: quote %q contract %q, want the contract alone", q, k)
		}
		must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 10, CPQID: 1, CustomerID: 7, ContractID: 5, ContractNumber: "C-5"}, ActOpened))
		assertStage(t, "archived (batch), both read by alice", stage(KindQuote, 10), stage(KindContract, 5), StageArchived)
		// A quote document read later (it names the contract) keeps the contract's stage.
		must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 10, CPQID: 1, CustomerID: 7, ContractID: 5, ContractNumber: "C-5"}, ActOpened))
		if got := stage(KindQuote, 10); got != StageArchived {
			t.Errorf("quote read after archive: %q", got)
		}
		// Bob's background refresh did not make the contract his.
		p, err := ix.List(ctx, bob, Query{Kind: KindContract, Scope: ScopeAll})
		must(t, err)
		assertIDs(t, "bob's contracts", ids(p))
	})
}

func TestFiltersSortAndPaging(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
		ix := newIndex(db, c)
		for i := int64(1); i <= 30; i++ {
			c.t = c.t.Add(time.Hour)
			customer, name := int32(1), "Acme Ltd"
			if i%2 == 0 {
				customer, name = 2, "Brio SpA"
			}
			must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: i, CPQID: int32(1 + i%3), CustomerID: customer, Customer: name,
				OneOffCents: i * 100, Configurator: "Cfg"}, ActCreated))
		}
		q := Query{Kind: KindQuote, Scope: ScopeMine, PerPage: 10}
		p, err := ix.List(ctx, alice, q)
		must(t, err)
		if p.Total != 30 || p.Pages != 3 || p.Rows[0].QuoteID != 30 {
			t.Errorf("first page: total %d pages %d first %d", p.Total, p.Pages, p.Rows[0].QuoteID)
		}
		q.Page = 99
		p, _ = ix.List(ctx, alice, q)
		if p.Page != 3 || len(p.Rows) != 10 {
			t.Errorf("page beyond the end: page %d rows %d", p.Page, len(p.Rows))
		}
		p, _ = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, CustomerID: 2, PerPage: 100})
		if p.Total != 15 {
			t.Errorf("customer filter: %d", p.Total)
		}
		p, _ = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, Find: "brio", PerPage: 100})
		if p.Total != 15 {
			t.Errorf("find by name: %d", p.Total)
		}
		p, _ = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, Find: "#7"})
		assertIDs(t, "find by number", ids(p), 7)
		p, _ = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, Sort: SortValue, PerPage: 3})
		assertIDs(t, "by value", ids(p), 30, 29, 28)
		p, _ = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, Sort: SortValue, Asc: true, PerPage: 3})
		assertIDs(t, "by value ascending", ids(p), 1, 2, 3)
		from := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC).Add(5 * time.Hour)
		p, _ = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, From: from, To: from.Add(2 * time.Hour)})
		assertIDs(t, "date range", ids(p), 6, 5)
		p, _ = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, CPQID: 2, PerPage: 100})
		if p.Total != 10 || len(p.Configurators) != 3 {
			t.Errorf("configurator filter: %d rows, %d configurators", p.Total, len(p.Configurators))
		}
		p, _ = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, Stages: []Stage{StageArchived}})
		assertIDs(t, "stage filter", ids(p))
	})
}

// TestReplicasShareTheDatabase: a second replica (another Index on the same PostgreSQL database)
// sees the first one's writes at its next list, and the other way round.
func TestReplicasShareTheDatabase(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
	url := statedbtest.PostgresURL(t)
	open := func() *Index {
		db, err := statedb.Open(ctx, statedb.Options{URL: url})
		must(t, err)
		t.Cleanup(func() { _ = db.Close() })
		return newIndex(db, c)
	}
	a, b := open(), open()
	must(t, a.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 1}, ActCreated))
	c.t = c.t.Add(time.Second)
	p, err := b.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine})
	must(t, err)
	assertIDs(t, "replica b", ids(p), 1)
	must(t, b.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 2}, ActCreated))
	c.t = c.t.Add(time.Second)
	p, err = a.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine})
	must(t, err)
	assertIDs(t, "replica a", ids(p), 2, 1)
}

// No row leaves silently: a user's oldest quote stays in My quotes and in its customer's history
// however many other quotes come after it (the key-value index dropped it past 100,000 a kind).
func TestTheOldestQuoteStays(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
		ix := newIndex(db, c)
		must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 1, CustomerID: 9, Customer: "First Customer"}, ActCreated))
		// Other people's quotes, written straight into the table as many sightings would.
		fillRows(t, db, c.t, 2, 3_000, bob.Key())
		c.t = c.t.Add(time.Hour)
		p, err := ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine})
		must(t, err)
		assertIDs(t, "alice's quotes", ids(p), 1)
		p, err = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeAll, CustomerID: 9})
		must(t, err)
		assertIDs(t, "the customer's history", ids(p), 1)
		p, err = ix.List(ctx, bob, Query{Kind: KindQuote, Scope: ScopeAll, PerPage: 25})
		must(t, err)
		if !p.Capped || p.Total != CountBound || p.Pages != CountBound/25 {
			t.Errorf("a broad list: total %d capped %v pages %d, want %d+ in %d pages", p.Total, p.Capped, p.Pages, CountBound, CountBound/25)
		}
	})
}

// fillRows writes quotes from..to created by person (and read by them then), one a minute
// before at, in one transaction.
func fillRows(t testing.TB, db *statedb.DB, at time.Time, from, to int64, person string) {
	t.Helper()
	must(t, db.Tx(context.Background(), func(tx *sql.Tx) error {
		stmt, err := tx.Prepare(`INSERT INTO work_rows (kind, id, quote_id, cpq_id, customer_id, customer, customer_folded, stage,
			one_off_cents, monthly_cents, value_cents, created_by, changed_by, changed_at, seen_at, facts_at)
			VALUES ('quote', $1, $1, 1, $2, $3, $4, 'draft', $5, 0, $5, $6, $6, $7, $7, $7)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		viewers, err := tx.Prepare(`INSERT INTO work_viewers (person, kind, id, owner, seen_at) VALUES ($1, 'quote', $2, 1, $3)`)
		if err != nil {
			return err
		}
		defer viewers.Close()
		for i := from; i <= to; i++ {
			name := fmt.Sprintf("Customer %d", i%500)
			when := statedb.Micros(at.Add(-time.Duration(i) * time.Minute))
			if _, err := stmt.Exec(i, i%500+100, name, strings.ToLower(name), i*100, person, when); err != nil {
				return err
			}
			if _, err := viewers.Exec(person, i, when); err != nil {
				return err
			}
		}
		// The totals the counts read, as the sightings would have kept them.
		return RebuildTotals(context.Background(), tx)
	}))
}

// Customer search folds case, accents and punctuation as the customer list does.
func TestFindFoldsTheCustomersName(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
		ix := newIndex(db, c)
		must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 1, CustomerID: 11, Customer: "Impianti S.p.A."}, ActCreated))
		must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 2, CustomerID: 12, Customer: "García & D'Angelo"}, ActCreated))
		must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 3, CustomerID: 13, Customer: "100% Solar_Co"}, ActCreated))
		must(t, ix.ObserveContract(ctx, alice, ContractSighting{ContractID: 123, Number: "C-2026-000123", QuoteID: 3, CustomerID: 13,
			Customer: "100% Solar_Co", Facts: ContractFacts{Status: "GENERATED"}}, ActOpened))
		for find, want := range map[string][]int64{"C-2026-000123": {123}, "c-2026-0001": {123}, "#C-2026": {123}, "000123": nil, "solar": {123}} {
			p, err := ix.List(ctx, alice, Query{Kind: KindContract, Scope: ScopeAll, Find: find})
			must(t, err)
			assertIDs(t, "find contract "+find, ids(p), want...)
		}
		for find, want := range map[string][]int64{"impianti spa": {1}, "GARCIA": {2}, "dangelo": {2}, "%": {3}, "_": {3}, "solar_": {3}, "x%y": nil,
			"#2": {2}, "C-2026-000123": {3}} {
			p, err := ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, Find: find})
			must(t, err)
			assertIDs(t, "find "+find, ids(p), want...)
		}
	})
}

// Team roles widen what is listed, never what is revealed: a row the team lead's own token never
// read is not in their list, only in Unchecked (the handlers re-read it with their token); a
// contract the v2 API refused a viewer gives them no stage.
func TestWhatTheViewersTokenRead(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
		ix := newIndex(db, c)
		must(t, ix.ObserveContract(ctx, alice, ContractSighting{ContractID: 5, Number: "C-5", Facts: ContractFacts{Status: "GENERATED"}}, ActCreated))
		p, err := ix.List(ctx, lead, Query{Kind: KindContract, Scope: ScopeAll})
		must(t, err)
		if len(p.Rows) != 0 || p.Total != 0 {
			t.Fatalf("the lead's list: %+v, want nothing their token read", p)
		}
		u, err := ix.Unchecked(ctx, lead, KindContract, ScopeAll, 5)
		must(t, err)
		if u.Count != 1 || len(u.Rows) != 1 || u.Rows[0].ContractID != 5 || u.Rows[0].Stage != "" || u.Rows[0].ContractNumber != "" {
			t.Fatalf("the lead's unchecked: %+v, want contract 5 with no fact of it", u)
		}
		p, _ = ix.List(ctx, alice, Query{Kind: KindContract, Scope: ScopeAll})
		if len(p.Rows) != 1 || !p.Rows[0].ViewerSeenAt.Equal(c.t) {
			t.Fatalf("alice's list: %+v, want her read at %v", p.Rows, c.t)
		}
		// The lead re-reads it with their token: now it is theirs to see, not theirs to own.
		c.t = c.t.Add(time.Hour)
		must(t, ix.ObserveContract(ctx, lead, ContractSighting{ContractID: 5, Number: "C-5", Facts: ContractFacts{Status: "GENERATED"}}, ActRefreshed))
		p, _ = ix.List(ctx, lead, Query{Kind: KindContract, Scope: ScopeAll})
		if len(p.Rows) != 1 || !p.Rows[0].ViewerSeenAt.Equal(c.t) {
			t.Fatalf("after the lead's read: %+v", p.Rows)
		}
		stages, err := ix.ContractStages(ctx, lead, []string{"C-5", "C-404"}, time.Hour)
		must(t, err)
		if len(stages) != 1 || stages["C-5"] != StageGenerated {
			t.Errorf("stages for the lead: %v", stages)
		}
		must(t, ix.Forget(ctx, lead, KindContract, 5))
		stages, err = ix.ContractStages(ctx, lead, []string{"C-5"}, time.Hour)
		must(t, err)
		if len(stages) != 0 {
			t.Errorf("a contract refused to the lead still has a stage for them: %v", stages)
		}
		stages, _ = ix.ContractStages(ctx, bob, []string{"C-5"}, time.Hour)
		if len(stages) != 0 {
			t.Errorf("bob never read C-5 but gets its stage: %v", stages)
		}
	})
}

// Retention is a setting: 0 keeps every row; otherwise rows not seen for that long leave.
func TestRetention(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
		keep := newIndex(db, c)
		must(t, keep.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 1}, ActCreated))
		c.t = c.t.Add(400 * 24 * time.Hour)
		must(t, keep.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 2}, ActCreated))
		n, err := keep.Purge(ctx)
		must(t, err)
		if n != 0 {
			t.Fatalf("retention 0 purged %d rows", n)
		}
		purging := New(db, Options{Now: c.now, Retention: 365 * 24 * time.Hour})
		n, err = purging.Purge(ctx)
		must(t, err)
		p, _ := purging.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeAll})
		if n != 1 {
			t.Errorf("purged %d rows, want 1", n)
		}
		assertIDs(t, "after a year's retention", ids(p), 2)
	})
}

// A database that does not answer: lists say so (ErrUnavailable), writes return an error (the
// handlers log it and go on).
func TestDatabaseUnreachable(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ix := New(db, Options{})
		_ = db.Close()
		if _, err := ix.List(context.Background(), alice, Query{Kind: KindQuote}); !errors.Is(err, ErrUnavailable) {
			t.Errorf("List: %v, want ErrUnavailable", err)
		}
		if err := ix.ObserveQuote(context.Background(), alice, QuoteSighting{QuoteID: 1}, ActCreated); err == nil {
			t.Error("a failed write reported no error (the handlers log it)")
		}
	})
}

// A sighting on a request that was cancelled meanwhile (a filter typed over) is still recorded.
func TestACancelledRequestStillRecords(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ix := New(db, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 1}, ActCreated))
		p, err := ix.List(context.Background(), alice, Query{Kind: KindQuote, Scope: ScopeMine})
		must(t, err)
		assertIDs(t, "after a cancelled request", ids(p), 1)
	})
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func assertIDs(t *testing.T, what string, got []int64, want ...int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: got %v, want %v", what, got, want)
			return
		}
	}
}

func assertStage(t *testing.T, what string, quote, contract, want Stage) {
	t.Helper()
	if quote != want || contract != want {
		t.Errorf("%s: quote %q contract %q, want %q", what, quote, contract, want)
	}
}

// Past the rows a list counts, a cursor continues it in order, without a gap or a repeat, in
// both directions and both orders.
func TestKeysetPagingPastTheCount(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		at := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
		const n = CountBound + 60
		fillRows(t, db, at, 1, n, lead.Key())
		// Ties: ten rows share one last-change time, so the id decides.
		_, err := db.SQL.ExecContext(ctx, `UPDATE work_rows SET changed_at = $1, value_cents = 7 WHERE id BETWEEN 990 AND 999`, statedb.Micros(at))
		must(t, err)
		ix := New(db, Options{})
		for _, q := range []Query{
			{Kind: KindQuote, Scope: ScopeAll, PerPage: 100},
			{Kind: KindQuote, Scope: ScopeAll, PerPage: 100, Asc: true},
			{Kind: KindQuote, Scope: ScopeAll, PerPage: 100, Sort: SortValue},
			{Kind: KindQuote, Scope: ScopeMine, PerPage: 100},
		} {
			seen := map[int64]bool{}
			q.Page = CountBound / q.PerPage
			for pages := 0; ; pages++ {
				p, err := ix.List(ctx, lead, q)
				must(t, err)
				for _, r := range p.Rows {
					if seen[r.QuoteID] {
						t.Fatalf("%+v: row %d twice", q, r.QuoteID)
					}
					seen[r.QuoteID] = true
				}
				if p.Next == nil {
					break
				}
				c, ok := ParseCursor(p.Next.String())
				if !ok || c != *p.Next {
					t.Fatalf("cursor %v does not read back", p.Next)
				}
				q.After = &c
				if pages > 5 {
					t.Fatal("the cursor never ends")
				}
			}
			// The last counted page and what follows it: every row from the 901st on.
			if len(seen) != n-(CountBound-100) {
				t.Errorf("%+v: %d rows from the last counted page on, want %d", q, len(seen), n-(CountBound-100))
			}
		}
	})
}
