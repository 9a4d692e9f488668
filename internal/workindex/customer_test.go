package workindex

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// The customer page's one statement gives, for each kind, exactly the page List gives with the
// customer filter (the same rows, visibility and order), for a rep and for a team role.
func TestCustomerWorkIsTheListOfEachKind(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
		ix := newIndex(db, c)
		for i := range int64(14) {
			c.t = c.t.Add(time.Minute)
			customer := int32(7 + i%2)
			who := alice
			if i%3 == 0 {
				who = bob
			}
			must(t, ix.ObserveQuote(ctx, who, QuoteSighting{QuoteID: 100 + i, CPQID: 1, CustomerID: customer, Customer: "Acme"}, ActCreated))
			must(t, ix.ObserveContract(ctx, who, ContractSighting{ContractID: int32(200 + i), Number: "C-" + string(rune('a'+i)), QuoteID: 100 + i,
				CPQID: 1, CustomerID: customer, Customer: "Acme", Facts: ContractFacts{Status: "GENERATED"}}, ActCreated))
			if i%4 == 0 {
				must(t, ix.ObserveContract(ctx, lead, ContractSighting{ContractID: int32(200 + i), Number: "C-" + string(rune('a'+i)), QuoteID: 100 + i,
					CPQID: 1, CustomerID: customer, Customer: "Acme", Facts: ContractFacts{Status: "GENERATED"}}, ActRefreshed))
			}
		}
		// Bob is refused one of his contracts: it leaves his section too.
		must(t, ix.Forget(ctx, bob, KindContract, 206))
		for _, v := range []Viewer{alice, bob, lead} {
			for _, customer := range []int32{7, 8, 9} {
				for _, n := range []int{3, 10} {
					quotes, contracts, err := ix.CustomerWork(ctx, v, customer, n)
					must(t, err)
					for kind, got := range map[Kind][]Row{KindQuote: quotes, KindContract: contracts} {
						p, err := ix.List(ctx, v, Query{Kind: kind, Scope: ScopeAll, CustomerID: customer, PerPage: n, NoCount: true, NoOptions: true})
						must(t, err)
						if !slices.Equal(ids(Page{Rows: got}), ids(p)) {
							t.Errorf("%s, customer %d, %d %ss: customer work %v, list %v", v.Name, customer, n, kind, ids(Page{Rows: got}), ids(p))
						}
						for i := range got {
							if got[i] != p.Rows[i] {
								t.Errorf("%s, customer %d: row %+v, list %+v", v.Name, customer, got[i], p.Rows[i])
							}
						}
					}
				}
			}
		}
		// Not nothing: the rep sees their rows, newest first, the refused one not.
		quotes, contracts, err := ix.CustomerWork(ctx, bob, 7, 10)
		must(t, err)
		assertIDs(t, "bob's quotes of customer 7", ids(Page{Rows: quotes}), 112, 106, 100)
		assertIDs(t, "bob's contracts of customer 7", ids(Page{Rows: contracts}), 212, 200)
	})
}

// The customer section's answers are held in memory on SQLite (customerCache): every write of the
// index, through any Index on the database, is in the very next answer, a refusal and a newer
// read by someone else included (the visibility rule holds at once, issue 43). The same holds on
// PostgreSQL, where answers are held under the listener's lease (customer_cache_test.go tests it
// across replicas).
func TestCustomerWorkCacheVisibilityFollowsEveryWriteAtOnce(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
		ix, other := newIndex(db, c), newIndex(db, c) // two users of one database, as in the portal
		section := func(what string, v Viewer, wantQuotes, wantContracts []int64) {
			t.Helper()
			for range 2 { // the second answer is the held one on SQLite
				quotes, contracts, err := ix.CustomerWork(ctx, v, 7, 10)
				must(t, err)
				assertIDs(t, what+": quotes", ids(Page{Rows: quotes}), wantQuotes...)
				assertIDs(t, what+": contracts", ids(Page{Rows: contracts}), wantContracts...)
			}
		}
		tick := func() { c.t = c.t.Add(time.Minute) }
		contract := func(status string) ContractSighting {
			return ContractSighting{ContractID: 200, Number: "C-200", QuoteID: 100, CPQID: 1, CustomerID: 7, Customer: "Acme", Facts: ContractFacts{Status: status}}
		}
		must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 100, CPQID: 1, CustomerID: 7, Customer: "Acme"}, ActCreated))
		tick()
		must(t, ix.ObserveContract(ctx, alice, contract("GENERATED"), ActCreated))
		section("alice's own work", alice, []int64{100}, []int64{200})

		// The v2 API refuses alice the quote: gone from her very next answer.
		tick()
		must(t, ix.Forget(ctx, alice, KindQuote, 100))
		section("after the refusal", alice, nil, []int64{200})

		// Another user of the database sees a new quote of hers: in her next answer.
		tick()
		must(t, other.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 101, CPQID: 1, CustomerID: 7, Customer: "Acme"}, ActCreated))
		section("after a sighting through another index", alice, []int64{101}, []int64{200})

		// A team lead sees what their own token read: nothing, then the contract once they read it.
		section("the lead's before reading", lead, nil, nil)
		tick()
		must(t, other.ObserveContract(ctx, lead, contract("SENT"), ActRefreshed))
		section("the lead's after reading", lead, nil, []int64{200})

		if db.Engine() != statedb.SQLite {
			return
		}
		// The answer is the held one while the index writes nothing: a row deleted behind the
		// index's back (never done: the file is the process's) still shows, which proves the
		// checks above went through the cache.
		section("alice's, held", alice, []int64{101}, []int64{200})
		if _, err := db.SQL.ExecContext(ctx, `DELETE FROM work_viewers WHERE person = $1 AND kind = $2 AND id = $3`, alice.Key(), string(KindQuote), 101); err != nil {
			t.Fatal(err)
		}
		section("held", alice, []int64{101}, []int64{200})
		tick()
		must(t, other.Forget(ctx, bob, KindContract, 999)) // any write of the index
		section("after any write", alice, nil, []int64{200})
	})
}
