package workindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cpqportal/portal/internal/textfold"
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

// SumCount is Count with the rows' value (Row.ValueCents) added up: the count and value of the
// rows List would find for q, at most CountBound rows (capped says there are more, and the value
// is then of the first CountBound + 1 of each branch only). It reads the rows as Count does
// (countSQL: the same index ranges, the same revealed rows), taking each row's value as it counts
// it: a list's figure with its value, read as the list reads (the tests' reference for the sums
// kept on write; the rep picker's months read work_viewer_rep_months, RepSignedByMonth).
func (ix *Index) SumCount(ctx context.Context, v Viewer, q Query) (t Total, capped bool, err error) {
	key := v.Key()
	if key == "" {
		return Total{}, false, nil
	}
	if !v.Team {
		q.Person = ""
	}
	b := listQuery{args: []any{string(q.Kind), key}}
	var matching []int32
	broad := false
	if folded := textfold.Fold(strings.TrimSpace(q.Find)); folded != "" {
		if matching, broad, err = ix.customersMatching(ctx, folded); err != nil {
			return Total{}, false, err
		}
	}
	b.filters(q, matching, broad)
	b.useOwnReads(q, v)
	if err := ix.db.SQL.QueryRowContext(ctx, b.sumSQL(q, v), b.args...).Scan(&t.N, &t.ValueCents); err != nil {
		return Total{}, false, fmt.Errorf("%w: sum: %w", ErrUnavailable, err)
	}
	capped = t.N > CountBound
	t.N = min(t.N, CountBound)
	return t, capped, nil
}

// sumSQL is countSQL that also adds up the counted rows' values (the same reads, bound and
// order).
func (b *listQuery) sumSQL(q Query, v Viewer) string {
	limit := strconv.Itoa(CountBound + 1)
	order := countOrder(q, v, b.person != "")
	if b.ownReads {
		order = onOwnReads(order)
	}
	if b.ownReads && v.Team {
		// As countSQL: the viewer's reads in the index's order, each row probed by its key.
		where := []string{"o.person = $2", "o.kind = $1"}
		for _, w := range b.where {
			where = append(where, onOwnReads(w))
		}
		row := strings.Join(append([]string{"r.kind = o.kind", "r.id = o.id"}, b.where...), " AND ")
		where = append(where, "o.seen_at >= (SELECT r.facts_at FROM work_rows r WHERE "+row+")",
			"NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = $2 AND d.kind = o.kind AND d.id = o.id)")
		return "SELECT COUNT(*), CAST(COALESCE(SUM(b0.v), 0) AS BIGINT) FROM (SELECT (SELECT r.value_cents FROM work_rows r WHERE r.kind = o.kind AND r.id = o.id) AS v FROM work_viewers o WHERE " +
			strings.Join(where, " AND ") + order + " LIMIT " + limit + ") AS b0"
	}
	var counts, sums []string
	for i, br := range b.branches(q, v) {
		sub := "(SELECT r.value_cents AS v FROM " + br.from + " WHERE " + br.where + order + " LIMIT " + limit + ") AS b" + strconv.Itoa(i)
		counts = append(counts, "(SELECT COUNT(*) FROM "+sub+")")
		sums = append(sums, "(SELECT COALESCE(SUM(b"+strconv.Itoa(i)+".v), 0) FROM "+sub+")")
	}
	return "SELECT " + strings.Join(counts, " + ") + ", CAST(" + strings.Join(sums, " + ") + " AS BIGINT)"
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

// RepSigned are one rep's signed contracts revealed to a team role viewer (signed, archived since
// or not: the list Query.Signed with Person), with how many took each number of whole days from
// their send to their signature (Row.DaysToSign; those whose send is not known are only in Total).
type RepSigned struct {
	Total
	// Days: days to signature -> how many contracts.
	Days map[int]int64
}

// SignedByRep are the signed contracts revealed to a team role viewer by rep (created or changed
// last by them), read in one query from the viewer's own sums (work_viewer_rep_signed, migration
// 00026, kept by every write): at most MaxDaysToSign + 2 rows a rep whatever the index holds;
// nil for a viewer without a team role.
func (ix *Index) SignedByRep(ctx context.Context, v Viewer) (map[string]*RepSigned, error) {
	key := v.Key()
	if key == "" || !v.Team {
		return nil, nil
	}
	rows, err := ix.db.SQL.QueryContext(ctx, `SELECT rep, days, n, value_cents FROM work_viewer_rep_signed
		WHERE person = $1 AND n > 0`, key)
	if err != nil {
		return nil, fmt.Errorf("%w: signed by rep: %w", ErrUnavailable, err)
	}
	defer rows.Close()
	out := map[string]*RepSigned{}
	for rows.Next() {
		var rep string
		var days int
		var t Total
		if err := rows.Scan(&rep, &days, &t.N, &t.ValueCents); err != nil {
			return nil, fmt.Errorf("%w: signed by rep: %w", ErrUnavailable, err)
		}
		r := out[rep]
		if r == nil {
			r = &RepSigned{Days: map[int]int64{}}
			out[rep] = r
		}
		r.N += t.N
		r.ValueCents += t.ValueCents
		if days >= 0 {
			r.Days[days] += t.N
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%w: signed by rep: %w", ErrUnavailable, err)
	}
	return out, nil
}

// RepSignedByMonth are one rep's signed contracts revealed to a team role viewer (created or
// changed last by them, as the list with Query.Person; signed, archived since or not) by the UTC
// month of their signature (SignedMonth: yyyymm), from the month from on (0: every month): the
// rep picker's signed value by month. One read of the viewer's own sums (work_viewer_rep_months,
// migration 00031, kept by every write), a row a month whatever the index holds; nil for a viewer
// without a team role.
func (ix *Index) RepSignedByMonth(ctx context.Context, v Viewer, rep string, from int) (map[int]Total, error) {
	key := v.Key()
	if key == "" || !v.Team || rep == "" {
		return nil, nil
	}
	out := map[int]Total{}
	err := ix.sumInto(ctx, `SELECT CAST(month AS TEXT), '', n, value_cents FROM work_viewer_rep_months
		WHERE person = $1 AND rep = $2 AND month >= $3 AND n > 0`, []any{key, rep, from}, func(month, _ string, t Total) {
		if m, err := strconv.Atoi(month); err == nil {
			out[m] = t
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Reason is a decline reason and how many contracts give it.
type Reason struct {
	Reason string
	N      int64
}

// MaxReasonsRead bounds DeclinesByRep's read: the most frequent (rep, reason) pairs revealed to
// the viewer. A rep's declines are counted apart (work_viewer_reps), so a reason left out only
// goes unnamed.
const MaxReasonsRead = 2_000

// DeclinesByRep are, for a team role, the declined contracts revealed to the viewer by rep and by
// the signer's reason (Row.DeclineReason; "" when none was given), most frequent first, from the
// viewer's own counts (work_viewer_rep_declines, migration 00026): one read of at most
// MaxReasonsRead rows (one per rep and distinct reason); nil for a viewer without a team role.
func (ix *Index) DeclinesByRep(ctx context.Context, v Viewer) (map[string][]Reason, error) {
	key := v.Key()
	if key == "" || !v.Team {
		return nil, nil
	}
	rows, err := ix.db.SQL.QueryContext(ctx, `SELECT rep, reason, n FROM work_viewer_rep_declines
		WHERE person = $1 AND n > 0 ORDER BY n DESC, rep, reason LIMIT `+strconv.Itoa(MaxReasonsRead), key)
	if err != nil {
		return nil, fmt.Errorf("%w: declines by rep: %w", ErrUnavailable, err)
	}
	defer rows.Close()
	out := map[string][]Reason{}
	for rows.Next() {
		var rep string
		var r Reason
		if err := rows.Scan(&rep, &r.Reason, &r.N); err != nil {
			return nil, fmt.Errorf("%w: declines by rep: %w", ErrUnavailable, err)
		}
		out[rep] = append(out[rep], r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%w: declines by rep: %w", ErrUnavailable, err)
	}
	return out, nil
}
