package workindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// RepStages is one person's share of a team's rows of one kind, stage by stage: the revealed
// rows they created or changed last, with their name as those rows give it.
type RepStages struct {
	Person, Name string
	Stages       map[Stage]Total
}

// SumsByRepStage are, for a team role, the revealed rows of kind added up by the person who
// created or changed them last and by stage (a row counts for both people when they differ),
// people in key order; nil for a viewer without a team role. Like SumsByPerson they are read from
// the viewer's own totals by rep (work_viewer_reps, kept by every write): a few rows a rep
// whatever the index holds, and nothing of a row the viewer's token did not read as it stands.
func (ix *Index) SumsByRepStage(ctx context.Context, v Viewer, kind Kind) ([]RepStages, error) {
	key := v.Key()
	if key == "" || !v.Team {
		return nil, nil
	}
	rows, err := ix.db.SQL.QueryContext(ctx, `SELECT rep, name, stage, n, value_cents FROM work_viewer_reps
		WHERE person = $1 AND kind = $2 AND n > 0 ORDER BY rep, stage`, key, string(kind))
	if err != nil {
		return nil, fmt.Errorf("%w: sums by rep: %w", ErrUnavailable, err)
	}
	defer rows.Close()
	var out []RepStages
	for rows.Next() {
		var rep, name, stage string
		var t Total
		if err := rows.Scan(&rep, &name, &stage, &t.N, &t.ValueCents); err != nil {
			return nil, fmt.Errorf("%w: sums by rep: %w", ErrUnavailable, err)
		}
		if len(out) == 0 || out[len(out)-1].Person != rep {
			out = append(out, RepStages{Person: rep, Stages: map[Stage]Total{}})
		}
		last := &out[len(out)-1]
		if name != "" {
			last.Name = name
		}
		last.Stages[Stage(stage)] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%w: sums by rep: %w", ErrUnavailable, err)
	}
	return out, nil
}

// errStopSum ends SumList's walk at its bound.
var errStopSum = errors.New("workindex: sum bound reached")

// SumList adds up the rows of the viewer's list q (what List shows: revealed rows only), up to
// CountBound rows: their count and value, capped when more rows match (as a list's count stops).
func (ix *Index) SumList(ctx context.Context, v Viewer, q Query) (t Total, capped bool, err error) {
	err = ix.Walk(ctx, v, q, func(r Row) error {
		if t.N >= CountBound {
			capped = true
			return errStopSum
		}
		t.N++
		t.ValueCents += r.ValueCents()
		return nil
	})
	if errors.Is(err, errStopSum) {
		err = nil
	}
	return t, capped, err
}

// RepName is the name of the rep person as the rows revealed to a team role viewer give it ("":
// none of their rows is revealed to the viewer, or the viewer has no team role): the name the
// lists show for their "by" filter, which reveals nothing the viewer's own figures do not.
func (ix *Index) RepName(ctx context.Context, v Viewer, person string) (string, error) {
	key := v.Key()
	if key == "" || !v.Team || person == "" {
		return "", nil
	}
	var name string
	err := ix.db.SQL.QueryRowContext(ctx, `SELECT name FROM work_viewer_reps WHERE person = $1 AND rep = $2 AND n > 0 AND name <> ''
		ORDER BY kind, stage LIMIT 1`, key, person).Scan(&name)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("%w: rep name: %w", ErrUnavailable, err)
	}
	return name, nil
}
