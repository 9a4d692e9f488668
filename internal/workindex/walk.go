package workindex

import (
	"context"
	"fmt"
	"strings"

	"github.com/cpqportal/portal/internal/textfold"
)

// walkBatch is how many rows Walk reads per query: each batch is one index range (keyset), and
// only one batch is held at a time.
const walkBatch = 500

// Walk calls fn with every row of the viewer's list q (its filters, scope and order; Page,
// PerPage and After are ignored), batch by batch through the list's keyset cursor, so an export
// of a million rows holds one batch in memory and no query reads past what it returns. No batch
// is counted, and no database read stays open while fn runs (fn may write to a slow client).
// The rows are what List would show: only rows revealed to the viewer (docs/work-index.md
// "Visibility rule"), filtered and ordered on their facts alone. fn's error stops the walk and is
// returned as it is; ErrUnavailable when the database cannot be read.
func (ix *Index) Walk(ctx context.Context, v Viewer, q Query, fn func(Row) error) error {
	key := v.Key()
	if key == "" {
		return nil
	}
	var matching []int32
	broad := false
	if folded := textfold.Fold(strings.TrimSpace(q.Find)); folded != "" {
		var err error
		if matching, broad, err = ix.customersMatching(ctx, folded); err != nil {
			return err
		}
	}
	order := orderBy(q)
	var after *Cursor
	batch := make([]Row, 0, walkBatch)
	for {
		b := listQuery{args: []any{string(q.Kind), key}}
		b.filters(q, matching, broad)
		if after != nil {
			b.after(q, *after)
		}
		batch = batch[:0]
		if err := ix.readBatch(ctx, b.pageSQL(q, v, order, walkBatch, 0), b.args, &batch); err != nil {
			return err
		}
		for _, r := range batch {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(batch) < walkBatch {
			return nil
		}
		last := batch[len(batch)-1]
		after = &Cursor{Key: sortKey(q, &last), ID: last.ID()}
	}
}

// readBatch reads one batch into out and closes the read before returning.
func (ix *Index) readBatch(ctx context.Context, query string, args []any, out *[]Row) error {
	rows, err := ix.db.SQL.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%w: walk: %w", ErrUnavailable, err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRow(rows, true)
		if err != nil {
			return fmt.Errorf("%w: walk: %w", ErrUnavailable, err)
		}
		*out = append(*out, r)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%w: walk: %w", ErrUnavailable, err)
	}
	return nil
}
