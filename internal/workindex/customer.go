package workindex

import (
	"cmp"
	"context"
	"fmt"
	"slices"
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
	q := Query{Kind: KindQuote, Scope: ScopeAll, CustomerID: customerID}
	order := orderBy(q)
	b := listQuery{args: []any{string(KindQuote), key}}
	b.filters(q, nil, false)
	b.useOwnReads(q, v)
	first := b.pageSQL(q, v, order, n, 0)
	b.kindParam = b.arg(string(KindContract))
	second := b.pageSQL(q, v, order, n, 0)
	rows, err := ix.db.SQL.QueryContext(ctx, "SELECT * FROM ("+first+") AS q UNION ALL SELECT * FROM ("+second+") AS c", b.args...)
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
	return quotes, contracts, nil
}
