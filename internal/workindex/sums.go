package workindex

import (
	"context"
	"fmt"
	"strconv"
)

// Total is a count and a value (Row.ValueCents) of rows.
type Total struct{ N, ValueCents int64 }

// Sums are the counts and values by stage of the rows of kind in scope that are revealed to the
// viewer (the rows List would give for that scope and no filter): the home page's figures
// (internal/pipeline). Like every read of the index, nothing of a row the viewer's token did not
// read as it stands is added (docs/work-index.md "Visibility rule"): they are read from the
// viewer's own totals (work_viewer_totals), which hold the rows revealed to them and which every
// write keeps (totals.go), a few rows whatever the viewer has read.
func (ix *Index) Sums(ctx context.Context, v Viewer, kind Kind, scope Scope) (map[Stage]Total, error) {
	out := map[Stage]Total{}
	key := v.Key()
	if key == "" {
		return out, nil
	}
	part := "" // a team role's whole team: every row revealed to them
	switch {
	case scope == ScopeMine:
		part = " AND mine = 1" // My quotes: created or changed last by them
	case !v.Team:
		part = " AND owner = 1" // All I worked on: the rows in their lists
	}
	err := ix.sumInto(ctx, `SELECT stage, '', CAST(SUM(n) AS BIGINT), CAST(SUM(value_cents) AS BIGINT) FROM work_viewer_totals WHERE person = $1 AND kind = $2`+part+
		` GROUP BY stage`, []any{key, string(kind)}, func(stage, _ string, t Total) {
		if t.N > 0 {
			out[Stage(stage)] = t
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SignedByMonth are the contracts signed (Row.SignedAt) in scope that are revealed to the viewer,
// by the UTC month of their signature (SignedMonth: yyyymm), whatever happened to them afterwards
// (an archived contract that was signed stays counted): the home page's "signed this month" and
// conversion (internal/pipeline). Read from the viewer's own signed sums (work_viewer_signed,
// migration 00021), kept by every write as Sums' totals are, in the same scopes.
func (ix *Index) SignedByMonth(ctx context.Context, v Viewer, scope Scope) (map[int]Total, error) {
	out := map[int]Total{}
	key := v.Key()
	if key == "" {
		return out, nil
	}
	part := ""
	switch {
	case scope == ScopeMine:
		part = " AND mine = 1"
	case !v.Team:
		part = " AND owner = 1"
	}
	err := ix.sumInto(ctx, `SELECT CAST(month AS TEXT), '', CAST(SUM(n) AS BIGINT), CAST(SUM(value_cents) AS BIGINT) FROM work_viewer_signed
		WHERE person = $1 AND kind = $2`+part+` GROUP BY month`, []any{key, string(KindContract)}, func(month, _ string, t Total) {
		if m, err := strconv.Atoi(month); err == nil && t.N > 0 {
			out[m] = t
		}
	})
	if err != nil {
		return nil, err
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
// viewer without a team role. They are read from the viewer's own totals by rep
// (work_viewer_reps), kept by every write as Sums' are.
func (ix *Index) SumsByPerson(ctx context.Context, v Viewer, kind Kind, stages []Stage) ([]PersonTotal, error) {
	key := v.Key()
	if key == "" || !v.Team || len(stages) == 0 {
		return nil, nil
	}
	args := []any{key, string(kind)}
	names := make([]string, len(stages))
	for i, st := range stages {
		names[i] = string(st)
	}
	in := placeholders(&args, names)
	byPerson := map[string]*PersonTotal{}
	var order []string
	err := ix.sumInto(ctx, `SELECT rep, name, n, value_cents FROM work_viewer_reps WHERE person = $1 AND kind = $2 AND stage IN (`+in+
		`) AND n > 0 ORDER BY rep, stage`, args, func(person, name string, t Total) {
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
	})
	if err != nil {
		return nil, err
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
