package workindex

import (
	"context"
	"fmt"
)

// Total is a count and a value (Row.ValueCents) of rows.
type Total struct{ N, ValueCents int64 }

// Sums are the counts and values by stage of the rows of kind in scope that are revealed to the
// viewer (the rows List would give for that scope and no filter): the home page's figures
// (internal/pipeline). Like every read of the index, nothing of a row the viewer's token did not
// read as it stands is added (docs/work-index.md "Visibility rule"), so the sums are read from
// the rows themselves, not from work_totals (which adds up everyone's rows).
func (ix *Index) Sums(ctx context.Context, v Viewer, kind Kind, scope Scope) (map[Stage]Total, error) {
	out := map[Stage]Total{}
	key := v.Key()
	if key == "" {
		return out, nil
	}
	b := listQuery{args: []any{string(kind), key}, fromViewer: true}
	for _, br := range b.branches(Query{Kind: kind, Scope: scope}, v) {
		if err := ix.sumInto(ctx, `SELECT r.stage, '', COUNT(*), COALESCE(SUM(r.value_cents), 0) FROM `+br.from+` WHERE `+br.where+
			` GROUP BY r.stage`, b.args, func(stage, _ string, t Total) {
			o := out[Stage(stage)]
			out[Stage(stage)] = Total{N: o.N + t.N, ValueCents: o.ValueCents + t.ValueCents}
		}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// PersonTotal is one person's share of a team's sums: the revealed rows they created or changed
// last (their My quotes), with their name as those rows give it.
type PersonTotal struct {
	Person, Name string
	Total
}

// SumsByPerson are, for a team role, the revealed rows of kind in these stages added up by the
// person who created or changed them last (a row counts for both when they differ); nil for a
// viewer without a team role.
func (ix *Index) SumsByPerson(ctx context.Context, v Viewer, kind Kind, stages []Stage) ([]PersonTotal, error) {
	key := v.Key()
	if key == "" || !v.Team || len(stages) == 0 {
		return nil, nil
	}
	b := listQuery{args: []any{string(kind), key}, fromViewer: true}
	names := make([]string, len(stages))
	for i, st := range stages {
		names[i] = string(st)
	}
	b.where = append(b.where, "r.stage IN ("+placeholders(&b.args, names)+")")
	br := b.branches(Query{Kind: kind, Scope: ScopeAll}, v)[0]
	byPerson := map[string]*PersonTotal{}
	var order []string
	add := func(person, name string, t Total) {
		p := byPerson[person]
		if p == nil {
			p = &PersonTotal{Person: person}
			byPerson[person] = p
			order = append(order, person)
		}
		if name != "" {
			p.Name = name
		}
		p.N += t.N
		p.ValueCents += t.ValueCents
	}
	for _, q := range []string{
		`SELECT r.created_by, MAX(r.created_by_name), COUNT(*), COALESCE(SUM(r.value_cents), 0) FROM ` + br.from + ` WHERE ` + br.where +
			` AND r.created_by <> '' GROUP BY r.created_by`,
		`SELECT r.changed_by, MAX(r.changed_by_name), COUNT(*), COALESCE(SUM(r.value_cents), 0) FROM ` + br.from + ` WHERE ` + br.where +
			` AND r.changed_by <> '' AND r.changed_by <> r.created_by GROUP BY r.changed_by`,
	} {
		if err := ix.sumInto(ctx, q, b.args, add); err != nil {
			return nil, err
		}
	}
	out := make([]PersonTotal, 0, len(order))
	for _, person := range order {
		out = append(out, *byPerson[person])
	}
	return out, nil
}

// sumInto runs a query of (key, name, count, value) rows and hands each to fn.
func (ix *Index) sumInto(ctx context.Context, query string, args []any, fn func(key, name string, t Total)) error {
	rows, err := ix.db.SQL.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%w: sums: %w", ErrUnavailable, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, name string
		var t Total
		if err := rows.Scan(&k, &name, &t.N, &t.ValueCents); err != nil {
			return fmt.Errorf("%w: sums: %w", ErrUnavailable, err)
		}
		fn(k, name, t)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%w: sums: %w", ErrUnavailable, err)
	}
	return nil
}
