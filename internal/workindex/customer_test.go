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
