package workindex

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// work_totals (migration 00010) holds, for each kind and stage, how many rows and how much value
// (ValueCents) there are for everyone (person "") and for each person (the rows they created or
// changed last, the rows of their My quotes). Every write moves a row's share from its old stage
// and people to its new ones in the same transaction, so the home page's figures (internal/
// pipeline) read a few small rows instead of adding up every row of a kind.

// totalKey is one row of work_totals.
type totalKey struct {
	stage  Stage
	person string
}

type totalDelta struct {
	n, value int64
	name     string
}

// peopleOf are the people a row counts for: everyone (""), its creator and its last changer.
func peopleOf(r *Row) []struct{ key, name string } {
	out := []struct{ key, name string }{{"", ""}}
	if r.CreatedBy != "" {
		out = append(out, struct{ key, name string }{r.CreatedBy, r.CreatedByName})
	}
	if r.ChangedBy != "" && r.ChangedBy != r.CreatedBy {
		out = append(out, struct{ key, name string }{r.ChangedBy, r.ChangedByName})
	}
	return out
}

// updateTotals moves the row's share of work_totals from old (when it existed) to r. The keys are
// written in one order (stage, person), so two sightings never wait on each other's totals in a
// cycle on PostgreSQL.
func updateTotals(ctx context.Context, tx *sql.Tx, existed bool, old, r *Row) error {
	if existed && old.Stage == r.Stage && old.ValueCents() == r.ValueCents() && old.CreatedBy == r.CreatedBy &&
		old.ChangedBy == r.ChangedBy && old.CreatedByName == r.CreatedByName && old.ChangedByName == r.ChangedByName {
		return nil
	}
	deltas := map[totalKey]*totalDelta{}
	add := func(row *Row, sign int64) {
		for _, p := range peopleOf(row) {
			k := totalKey{row.Stage, p.key}
			d := deltas[k]
			if d == nil {
				d = &totalDelta{}
				deltas[k] = d
			}
			d.n += sign
			d.value += sign * row.ValueCents()
			if sign > 0 {
				d.name = p.name
			}
		}
	}
	if existed {
		add(old, -1)
	}
	add(r, 1)
	keys := make([]totalKey, 0, len(deltas))
	for k, d := range deltas {
		if d.n != 0 || d.value != 0 || d.name != "" {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b totalKey) int {
		return cmp.Or(cmp.Compare(a.stage, b.stage), cmp.Compare(a.person, b.person))
	})
	if len(keys) == 0 {
		return nil
	}
	// One statement for every key (distinct keys: PostgreSQL refuses one that touches a row twice).
	args := make([]any, 0, len(keys)*6)
	values := make([]string, 0, len(keys))
	for _, k := range keys {
		d := deltas[k]
		n := len(args)
		values = append(values, fmt.Sprintf("($%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6))
		args = append(args, string(r.Kind), k.person, string(k.stage), d.name, d.n, d.value)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO work_totals (kind, person, stage, name, n, value_cents) VALUES `+strings.Join(values, ", ")+`
		ON CONFLICT (kind, person, stage) DO UPDATE SET n = work_totals.n + excluded.n,
		value_cents = work_totals.value_cents + excluded.value_cents,
		name = CASE WHEN excluded.name <> '' THEN excluded.name ELSE work_totals.name END`, args...); err != nil {
		return fmt.Errorf("workindex: totals of %s %d: %w", r.Kind, r.ID(), err)
	}
	return nil
}

// RebuildTotals computes work_totals again from every row (after rows left by retention, or
// rows written in bulk by a tool that bypasses the sightings, such as the bench's fixture).
func RebuildTotals(ctx context.Context, tx *sql.Tx) error {
	for _, q := range []string{
		`DELETE FROM work_totals`,
		`INSERT INTO work_totals (kind, person, stage, name, n, value_cents)
			SELECT kind, '', stage, '', COUNT(*), SUM(value_cents) FROM work_rows GROUP BY kind, stage`,
		`INSERT INTO work_totals (kind, person, stage, name, n, value_cents)
			SELECT kind, created_by, stage, MAX(created_by_name), COUNT(*), SUM(value_cents) FROM work_rows
			WHERE created_by <> '' GROUP BY kind, created_by, stage`,
		`INSERT INTO work_totals (kind, person, stage, name, n, value_cents)
			SELECT kind, changed_by, stage, MAX(changed_by_name), COUNT(*), SUM(value_cents) FROM work_rows
			WHERE changed_by <> '' AND changed_by <> created_by GROUP BY kind, changed_by, stage
			ON CONFLICT (kind, person, stage) DO UPDATE SET n = work_totals.n + excluded.n,
			value_cents = work_totals.value_cents + excluded.value_cents`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("workindex: rebuild totals: %w", err)
		}
	}
	return nil
}
