package workindex

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
)

// work_totals (migration 00010) holds, for each kind and stage, how many rows and how much value
// (ValueCents) there are for everyone (person "") and for each person (the rows they created or
// changed last, the rows of their My quotes). Every write moves a row's share from its old stage
// and people to its new ones in the same transaction. It adds up rows whoever read them, so it
// never gives a figure to anyone (docs/work-index.md "Visibility rule"): it says how many rows a
// team role or a person's My quotes may list, less which the unchecked count is the rows revealed
// to them (Index.Unchecked); the figures come from the viewers' own totals below.

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
			d := deltaOf(deltas, totalKey{row.Stage, p.key})
			d.add(sign, row.ValueCents())
			if sign > 0 {
				d.name = p.name
			}
		}
	}
	if existed {
		add(old, -1)
	}
	add(r, 1)
	err := upsertSums(ctx, tx, deltas,
		func(a, b totalKey) int { return cmp.Or(cmp.Compare(a.stage, b.stage), cmp.Compare(a.person, b.person)) },
		func(k totalKey, d *totalDelta) []any {
			return []any{string(r.Kind), k.person, string(k.stage), d.name, d.n, d.value}
		},
		`INSERT INTO work_totals (kind, person, stage, name, n, value_cents)`,
		`ON CONFLICT (kind, person, stage) DO UPDATE SET n = work_totals.n + excluded.n,
		value_cents = work_totals.value_cents + excluded.value_cents,
		name = CASE WHEN excluded.name <> '' THEN excluded.name ELSE work_totals.name END`)
	if err != nil {
		return fmt.Errorf("workindex: totals of %s %d: %w", r.Kind, r.ID(), err)
	}
	return nil
}

// RebuildTotals computes work_totals, every read's copy of its row's stage and times and every
// viewer's totals (work_viewer_totals, work_viewer_reps) again from the rows and the reads, for
// rows and reads written in bulk by a tool that bypasses the sightings (the legacy import, the
// bench's fixture, tests).
func RebuildTotals(ctx context.Context, tx *sql.Tx) error {
	if err := rebuildEveryonesTotals(ctx, tx); err != nil {
		return err
	}
	// Every read's copy of its row's stage and times (work_viewers_stage_*), then every viewer's
	// totals from the rows revealed to them.
	for _, q := range []string{
		`UPDATE work_viewers SET (stage, changed_at, stage_since) = (SELECT r.stage, r.changed_at, r.stage_since FROM work_rows r
			WHERE r.kind = work_viewers.kind AND r.id = work_viewers.id)
			WHERE EXISTS (SELECT 1 FROM work_rows r WHERE r.kind = work_viewers.kind AND r.id = work_viewers.id
			AND (r.stage <> work_viewers.stage OR r.changed_at <> work_viewers.changed_at OR r.stage_since <> work_viewers.stage_since))`,
		`DELETE FROM work_viewer_totals`,
		`DELETE FROM work_viewer_reps`,
		`DELETE FROM work_viewer_signed`,
		`DELETE FROM work_viewer_rep_signed`,
		`DELETE FROM work_viewer_rep_declines`,
		`DELETE FROM work_viewer_rep_months`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("workindex: rebuild totals: %w", err)
		}
	}
	return addViewerSums(ctx, tx, "1 = 1", "")
}

// rebuildEveryonesTotals computes work_totals again from every row (after rows left by retention).
func rebuildEveryonesTotals(ctx context.Context, tx *sql.Tx) error {
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

// work_viewer_totals and work_viewer_reps (migration 00017) hold, for each viewer, the counts and
// values of the rows revealed to them (docs/work-index.md "Visibility rule"): by kind, stage,
// whether they own the row and whether it is theirs (created or changed last by them), and by the
// person who created or changed it last. Sums and SumsByPerson read them. A write keeps them in
// its transaction: when a row's facts change, its share leaves the totals of every viewer it was
// revealed to (their reads are now older than its facts: as many viewers as read it as it stood),
// and a viewer's read that reveals it puts its share in theirs; a refusal (Forget) takes it out.

// viewerTotalKey is one row of work_viewer_totals.
type viewerTotalKey struct {
	person      string
	stage       Stage
	owner, mine int
}

// viewerRepKey is one row of work_viewer_reps.
type viewerRepKey struct {
	person, rep string
	stage       Stage
}

// viewerSignedKey is one row of work_viewer_signed (migration 00021): a viewer's signed
// contracts of one month (SignedMonth).
type viewerSignedKey struct {
	person      string
	month       int
	owner, mine int
}

// viewerRepSignedKey is one row of work_viewer_rep_signed (migration 00026): a viewer's signed
// contracts of one rep with one number of days to signature (Row.DaysToSign; -1: not known).
type viewerRepSignedKey struct {
	person, rep string
	days        int
}

// viewerRepDeclineKey is one row of work_viewer_rep_declines (migration 00026): a viewer's
// declined contracts of one rep with one reason (Row.DeclineReason).
type viewerRepDeclineKey struct {
	person, rep, reason string
}

// viewerRepMonthKey is one row of work_viewer_rep_months (migration 00031): a viewer's signed
// contracts of one rep signed in one month (SignedMonth).
type viewerRepMonthKey struct {
	person, rep string
	month       int
}

// viewerSums are the changes a write makes to work_viewer_totals, work_viewer_reps,
// work_viewer_signed, work_viewer_rep_signed, work_viewer_rep_declines and work_viewer_rep_months.
type viewerSums struct {
	totals    map[viewerTotalKey]*totalDelta
	reps      map[viewerRepKey]*totalDelta
	signed    map[viewerSignedKey]*totalDelta
	repSigned map[viewerRepSignedKey]*totalDelta
	declines  map[viewerRepDeclineKey]*totalDelta
	repMonths map[viewerRepMonthKey]*totalDelta
}

// add adds (sign 1) or takes out (-1) the share of r for the viewer person (owner: the row is in
// their lists).
func (s *viewerSums) add(person string, owner bool, r *Row, sign int64) {
	if person == "" {
		return
	}
	if s.totals == nil {
		s.totals, s.reps, s.signed = map[viewerTotalKey]*totalDelta{}, map[viewerRepKey]*totalDelta{}, map[viewerSignedKey]*totalDelta{}
		s.repSigned, s.declines = map[viewerRepSignedKey]*totalDelta{}, map[viewerRepDeclineKey]*totalDelta{}
		s.repMonths = map[viewerRepMonthKey]*totalDelta{}
	}
	k := viewerTotalKey{person: person, stage: r.Stage, owner: boolInt(owner)}
	if r.CreatedBy == person || r.ChangedBy == person {
		k.mine = 1
	}
	value := r.ValueCents()
	if month := SignedMonth(r.SignedAt); month != 0 {
		deltaOf(s.signed, viewerSignedKey{person: person, month: month, owner: k.owner, mine: k.mine}).add(sign, value)
	}
	deltaOf(s.totals, k).add(sign, value)
	for _, p := range peopleOf(r)[1:] {
		if r.Kind == KindContract && !r.SignedAt.IsZero() {
			days, _ := r.DaysToSign()
			deltaOf(s.repSigned, viewerRepSignedKey{person: person, rep: p.key, days: days}).add(sign, value)
			deltaOf(s.repMonths, viewerRepMonthKey{person: person, rep: p.key, month: SignedMonth(r.SignedAt)}).add(sign, value)
		}
		if r.Kind == KindContract && r.Stage == StageDeclined {
			deltaOf(s.declines, viewerRepDeclineKey{person: person, rep: p.key, reason: r.DeclineReason}).add(sign, 0)
		}
		d := deltaOf(s.reps, viewerRepKey{person: person, rep: p.key, stage: r.Stage})
		d.add(sign, value)
		if sign > 0 {
			d.name = p.name
		}
	}
}

// apply writes the changes, each table's keys in one order (person, stage, ...), so two writes
// never wait on each other's totals in a cycle on PostgreSQL.
func (s *viewerSums) apply(ctx context.Context, tx *sql.Tx, kind Kind) error {
	if err := upsertSums(ctx, tx, s.totals,
		func(a, b viewerTotalKey) int {
			return cmp.Or(cmp.Compare(a.person, b.person), cmp.Compare(a.stage, b.stage), cmp.Compare(a.owner, b.owner), cmp.Compare(a.mine, b.mine))
		},
		func(k viewerTotalKey, d *totalDelta) []any {
			return []any{k.person, string(kind), string(k.stage), k.owner, k.mine, d.n, d.value}
		},
		`INSERT INTO work_viewer_totals (person, kind, stage, owner, mine, n, value_cents)`,
		`ON CONFLICT (person, kind, stage, owner, mine) DO UPDATE SET n = work_viewer_totals.n + excluded.n,
		value_cents = work_viewer_totals.value_cents + excluded.value_cents`); err != nil {
		return fmt.Errorf("workindex: viewers' totals: %w", err)
	}
	if err := upsertSums(ctx, tx, s.signed,
		func(a, b viewerSignedKey) int {
			return cmp.Or(cmp.Compare(a.person, b.person), cmp.Compare(a.month, b.month), cmp.Compare(a.owner, b.owner), cmp.Compare(a.mine, b.mine))
		},
		func(k viewerSignedKey, d *totalDelta) []any {
			return []any{k.person, string(kind), k.month, k.owner, k.mine, d.n, d.value}
		},
		`INSERT INTO work_viewer_signed (person, kind, month, owner, mine, n, value_cents)`,
		`ON CONFLICT (person, kind, month, owner, mine) DO UPDATE SET n = work_viewer_signed.n + excluded.n,
		value_cents = work_viewer_signed.value_cents + excluded.value_cents`); err != nil {
		return fmt.Errorf("workindex: viewers' signed sums: %w", err)
	}
	if err := upsertSums(ctx, tx, s.repSigned,
		func(a, b viewerRepSignedKey) int {
			return cmp.Or(cmp.Compare(a.person, b.person), cmp.Compare(a.rep, b.rep), cmp.Compare(a.days, b.days))
		},
		func(k viewerRepSignedKey, d *totalDelta) []any { return []any{k.person, k.rep, k.days, d.n, d.value} },
		`INSERT INTO work_viewer_rep_signed (person, rep, days, n, value_cents)`,
		`ON CONFLICT (person, rep, days) DO UPDATE SET n = work_viewer_rep_signed.n + excluded.n,
		value_cents = work_viewer_rep_signed.value_cents + excluded.value_cents`); err != nil {
		return fmt.Errorf("workindex: viewers' signed sums by rep: %w", err)
	}
	if err := upsertSums(ctx, tx, s.repMonths,
		func(a, b viewerRepMonthKey) int {
			return cmp.Or(cmp.Compare(a.person, b.person), cmp.Compare(a.rep, b.rep), cmp.Compare(a.month, b.month))
		},
		func(k viewerRepMonthKey, d *totalDelta) []any { return []any{k.person, k.rep, k.month, d.n, d.value} },
		`INSERT INTO work_viewer_rep_months (person, rep, month, n, value_cents)`,
		`ON CONFLICT (person, rep, month) DO UPDATE SET n = work_viewer_rep_months.n + excluded.n,
		value_cents = work_viewer_rep_months.value_cents + excluded.value_cents`); err != nil {
		return fmt.Errorf("workindex: viewers' signed sums by rep and month: %w", err)
	}
	if err := upsertSums(ctx, tx, s.declines,
		func(a, b viewerRepDeclineKey) int {
			return cmp.Or(cmp.Compare(a.person, b.person), cmp.Compare(a.rep, b.rep), cmp.Compare(a.reason, b.reason))
		},
		func(k viewerRepDeclineKey, d *totalDelta) []any { return []any{k.person, k.rep, k.reason, d.n} },
		`INSERT INTO work_viewer_rep_declines (person, rep, reason, n)`,
		`ON CONFLICT (person, rep, reason) DO UPDATE SET n = work_viewer_rep_declines.n + excluded.n`); err != nil {
		return fmt.Errorf("workindex: viewers' declines by rep: %w", err)
	}
	if err := upsertSums(ctx, tx, s.reps,
		func(a, b viewerRepKey) int {
			return cmp.Or(cmp.Compare(a.person, b.person), cmp.Compare(a.stage, b.stage), cmp.Compare(a.rep, b.rep))
		},
		func(k viewerRepKey, d *totalDelta) []any {
			return []any{k.person, string(kind), string(k.stage), k.rep, d.name, d.n, d.value}
		},
		`INSERT INTO work_viewer_reps (person, kind, stage, rep, name, n, value_cents)`,
		`ON CONFLICT (person, kind, stage, rep) DO UPDATE SET n = work_viewer_reps.n + excluded.n,
		value_cents = work_viewer_reps.value_cents + excluded.value_cents,
		name = CASE WHEN excluded.name <> '' THEN excluded.name ELSE work_viewer_reps.name END`); err != nil {
		return fmt.Errorf("workindex: viewers' totals by rep: %w", err)
	}
	return nil
}

// deltaOf is the change to the row of key k in deltas, made empty when k has none yet.
func deltaOf[K comparable](deltas map[K]*totalDelta, k K) *totalDelta {
	d := deltas[k]
	if d == nil {
		d = &totalDelta{}
		deltas[k] = d
	}
	return d
}

// add adds (sign 1) or takes out (-1) one row of value cents.
func (d *totalDelta) add(sign, value int64) {
	d.n += sign
	d.value += sign * value
}

// upsertSums adds deltas to one sum table in one statement: the changed keys in compare's order
// (changedKeys), a tuple each from row, then insert and onConflict as addRows writes them.
func upsertSums[K comparable](ctx context.Context, tx *sql.Tx, deltas map[K]*totalDelta, compare func(a, b K) int,
	row func(K, *totalDelta) []any, insert, onConflict string) error {
	keys := changedKeys(deltas, compare)
	rows := make([][]any, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, row(k, deltas[k]))
	}
	return addRows(ctx, tx, insert, onConflict, rows)
}

// changedKeys are the keys of deltas that change their row (a count, a value or a name) in the
// order compare gives: every write takes a table's rows in one order, so two writes never wait
// on each other in a cycle on PostgreSQL.
func changedKeys[K comparable](deltas map[K]*totalDelta, compare func(a, b K) int) []K {
	keys := make([]K, 0, len(deltas))
	for k, d := range deltas {
		if d.n != 0 || d.value != 0 || d.name != "" {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compare)
	return keys
}

// addRows runs insert (`INSERT INTO table (columns)`) with one tuple of placeholders per row,
// then onConflict, as one statement; nothing when there are no rows. The rows' keys are
// distinct: PostgreSQL refuses an upsert that touches one row twice.
func addRows(ctx context.Context, tx *sql.Tx, insert, onConflict string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	var q strings.Builder
	args := make([]any, 0, len(rows)*len(rows[0]))
	q.WriteString(insert)
	q.WriteString(" VALUES ")
	for i, row := range rows {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteByte('(')
		for j, v := range row {
			if j > 0 {
				q.WriteString(", ")
			}
			args = append(args, v)
			fmt.Fprintf(&q, "$%d", len(args))
		}
		q.WriteByte(')')
	}
	q.WriteByte(' ')
	q.WriteString(onConflict)
	_, err := tx.ExecContext(ctx, q.String(), args...)
	return err
}

// daysToSignSQL is Row.DaysToSign on work_rows r (integer division: whole days, as in Go).
const daysToSignSQL = `CASE WHEN r.sent_at > 0 AND r.signed_at >= r.sent_at THEN
	CASE WHEN (r.signed_at - r.sent_at) / 86400000000 > 366 THEN 366 ELSE (r.signed_at - r.sent_at) / 86400000000 END ELSE -1 END`

// revealedTo are the viewers a row whose facts date from factsAt is revealed to, and whether
// each owns it: the shares a change of its facts takes out of their totals.
func revealedTo(ctx context.Context, tx *sql.Tx, kind Kind, id int64, factsAt time.Time) ([]struct {
	person string
	owner  bool
}, error) {
	rows, err := tx.QueryContext(ctx, `SELECT o.person, o.owner FROM work_viewers o WHERE o.kind = $1 AND o.id = $2 AND o.seen_at >= $3
		AND NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = o.person AND d.kind = o.kind AND d.id = o.id)`,
		string(kind), id, statedb.Micros(factsAt))
	if err != nil {
		return nil, fmt.Errorf("workindex: viewers of %s %d: %w", kind, id, err)
	}
	defer rows.Close()
	var out []struct {
		person string
		owner  bool
	}
	for rows.Next() {
		var person string
		var owner int
		if err := rows.Scan(&person, &owner); err != nil {
			return nil, fmt.Errorf("workindex: viewers of %s %d: %w", kind, id, err)
		}
		out = append(out, struct {
			person string
			owner  bool
		}{person, owner == 1})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("workindex: viewers of %s %d: %w", kind, id, err)
	}
	return out, nil
}

// addViewerSums adds (sign "") or takes out (sign "-") the shares of the rows matching cond (on
// work_rows r, with args) in every viewer's totals, computed from the rows and the reads: the
// migration's backfill, RebuildTotals, and Purge before it deletes rows.
func addViewerSums(ctx context.Context, tx *sql.Tx, cond, sign string, args ...any) error {
	const revealed = `o.seen_at >= r.facts_at
		AND NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = o.person AND d.kind = o.kind AND d.id = o.id)`
	const mine = `CASE WHEN r.created_by = o.person OR r.changed_by = o.person THEN 1 ELSE 0 END`
	name := "" // a share taken out leaves the name
	if sign == "" {
		name = `, name = CASE WHEN excluded.name <> '' THEN excluded.name ELSE work_viewer_reps.name END`
	}
	for _, q := range []string{
		`INSERT INTO work_viewer_totals (person, kind, stage, owner, mine, n, value_cents)
			SELECT o.person, o.kind, r.stage, o.owner, ` + mine + `, ` + sign + `COUNT(*), ` + sign + `SUM(r.value_cents)
			FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id WHERE ` + revealed + ` AND ` + cond + `
			GROUP BY o.person, o.kind, r.stage, o.owner, ` + mine + `
			ON CONFLICT (person, kind, stage, owner, mine) DO UPDATE SET n = work_viewer_totals.n + excluded.n,
			value_cents = work_viewer_totals.value_cents + excluded.value_cents`,
		`INSERT INTO work_viewer_signed (person, kind, month, owner, mine, n, value_cents)
			SELECT o.person, o.kind, r.signed_month, o.owner, ` + mine + `, ` + sign + `COUNT(*), ` + sign + `SUM(r.value_cents)
			FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id WHERE r.signed_month > 0 AND ` + revealed + ` AND ` + cond + `
			GROUP BY o.person, o.kind, r.signed_month, o.owner, ` + mine + `
			ON CONFLICT (person, kind, month, owner, mine) DO UPDATE SET n = work_viewer_signed.n + excluded.n,
			value_cents = work_viewer_signed.value_cents + excluded.value_cents`,
		`INSERT INTO work_viewer_reps (person, kind, stage, rep, name, n, value_cents)
			SELECT o.person, o.kind, r.stage, r.created_by, MAX(r.created_by_name), ` + sign + `COUNT(*), ` + sign + `SUM(r.value_cents)
			FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id WHERE ` + revealed + ` AND ` + cond + `
			AND r.created_by <> '' GROUP BY o.person, o.kind, r.stage, r.created_by
			ON CONFLICT (person, kind, stage, rep) DO UPDATE SET n = work_viewer_reps.n + excluded.n,
			value_cents = work_viewer_reps.value_cents + excluded.value_cents` + name,
		`INSERT INTO work_viewer_reps (person, kind, stage, rep, name, n, value_cents)
			SELECT o.person, o.kind, r.stage, r.changed_by, MAX(r.changed_by_name), ` + sign + `COUNT(*), ` + sign + `SUM(r.value_cents)
			FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id WHERE ` + revealed + ` AND ` + cond + `
			AND r.changed_by <> '' AND r.changed_by <> r.created_by GROUP BY o.person, o.kind, r.stage, r.changed_by
			ON CONFLICT (person, kind, stage, rep) DO UPDATE SET n = work_viewer_reps.n + excluded.n,
			value_cents = work_viewer_reps.value_cents + excluded.value_cents` + name,
	} {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("workindex: viewers' totals: %w", err)
		}
	}
	// The signed contracts by rep and days to signature, and the declined ones by rep and reason
	// (migration 00026), and the signed ones by rep and month (00031), for the creator and, when
	// another, the last changer.
	for _, rep := range []string{"r.created_by <> ''", "r.changed_by <> '' AND r.changed_by <> r.created_by"} {
		col := "r.created_by"
		if strings.HasPrefix(rep, "r.changed_by") {
			col = "r.changed_by"
		}
		for _, q := range []string{
			`INSERT INTO work_viewer_rep_signed (person, rep, days, n, value_cents)
			SELECT o.person, ` + col + `, ` + daysToSignSQL + `, ` + sign + `COUNT(*), ` + sign + `SUM(r.value_cents)
			FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id
			WHERE o.kind = 'contract' AND r.signed_at > 0 AND ` + rep + ` AND ` + revealed + ` AND ` + cond + `
			GROUP BY o.person, ` + col + `, ` + daysToSignSQL + `
			ON CONFLICT (person, rep, days) DO UPDATE SET n = work_viewer_rep_signed.n + excluded.n,
			value_cents = work_viewer_rep_signed.value_cents + excluded.value_cents`,
			`INSERT INTO work_viewer_rep_declines (person, rep, reason, n)
			SELECT o.person, ` + col + `, r.decline_reason, ` + sign + `COUNT(*)
			FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id
			WHERE o.kind = 'contract' AND r.stage = 'declined' AND ` + rep + ` AND ` + revealed + ` AND ` + cond + `
			GROUP BY o.person, ` + col + `, r.decline_reason
			ON CONFLICT (person, rep, reason) DO UPDATE SET n = work_viewer_rep_declines.n + excluded.n`,
			`INSERT INTO work_viewer_rep_months (person, rep, month, n, value_cents)
			SELECT o.person, ` + col + `, r.signed_month, ` + sign + `COUNT(*), ` + sign + `SUM(r.value_cents)
			FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id
			WHERE o.kind = 'contract' AND r.signed_at > 0 AND ` + rep + ` AND ` + revealed + ` AND ` + cond + `
			GROUP BY o.person, ` + col + `, r.signed_month
			ON CONFLICT (person, rep, month) DO UPDATE SET n = work_viewer_rep_months.n + excluded.n,
			value_cents = work_viewer_rep_months.value_cents + excluded.value_cents`,
		} {
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("workindex: viewers' figures by rep: %w", err)
			}
		}
	}
	return nil
}
