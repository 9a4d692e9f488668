package workindex

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
)

// CustomerWork is the customer page's section: the newest n quotes and the newest n contracts of
// one customer that the viewer may list (ScopeAll, last change first), exactly what List answers
// for each kind with CustomerID, NoCount and NoOptions, read in one statement instead of two (a
// customer page is the portal's most frequent page, and on PostgreSQL each statement is a round
// trip: docs/performance.md, issue 43). The same branches, visibility rule and order as List:
// the second kind's page is the first's SQL with its own placeholder for the kind.
func (ix *Index) CustomerWork(ctx context.Context, v Viewer, customerID int32, n int) (quotes, contracts []Row, err error) {
	key := v.Key()
	if key == "" {
		return nil, nil, nil
	}
	n = min(max(n, 1), MaxPerPage)
	ck := customerKey{viewer: key, team: v.Team, customer: customerID, n: n}
	var gen uint64
	if ix.customers != nil {
		if quotes, contracts, ok := ix.customers.get(ck); ok {
			return quotes, contracts, nil
		}
		gen = ix.customers.gen.Load() // before the statement: a write after it voids the answer
	}
	q := Query{Kind: KindQuote, Scope: ScopeAll, CustomerID: customerID}
	order := orderBy(q)
	b := listQuery{args: []any{string(KindQuote), key}}
	b.filters(q, nil, false)
	b.useOwnReads(q, v)
	kindParam := b.arg(string(KindContract))
	// The text depends on the filters' conditions (placeholders, no values), the viewer's kind of
	// branches and n; the values are in b.args, built above for every call.
	shape := customerShape{team: v.Team, ownReads: b.ownReads, n: n, person: b.person, where: strings.Join(b.where, "\x00")}
	stmt, ok := ix.customerSQL.Load(shape)
	if !ok {
		first := b.pageSQL(q, v, order, n, 0)
		b.kindParam = kindParam
		second := b.pageSQL(q, v, order, n, 0)
		stmt, _ = ix.customerSQL.LoadOrStore(shape, "SELECT * FROM ("+first+") AS q UNION ALL SELECT * FROM ("+second+") AS c")
	}
	rows, err := ix.db.SQL.QueryContext(ctx, stmt.(string), b.args...)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRow(rows, true)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		if r.Kind == KindContract {
			contracts = append(contracts, r)
		} else {
			quotes = append(quotes, r)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	// A union's order is not its parts' order: each kind in the list's (last change, then id, newest first).
	newestFirst := func(a, b Row) int {
		return cmp.Or(b.ChangedAt.Compare(a.ChangedAt), cmp.Compare(b.ID(), a.ID()))
	}
	slices.SortFunc(quotes, newestFirst)
	slices.SortFunc(contracts, newestFirst)
	if ix.customers != nil {
		ix.customers.put(ck, gen, quotes, contracts)
	}
	return quotes, contracts, nil
}

// customerShape is what CustomerWork's statement text depends on besides constants: the viewer's
// branches (a team role or not), whether a team role reads its own copies, the page size, the
// person placeholder and the filters' conditions. A handful of shapes exist (n is a constant of
// the customer page), so the map stays as small as the code.
type customerShape struct {
	team, ownReads bool
	n              int
	person, where  string
}
