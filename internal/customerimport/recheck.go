package customerimport

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/cpqportal/portal/internal/customerrules"
	"github.com/cpqportal/portal/internal/statedb"
)

// ErrNoCells: the import was made before the mapping step kept the file's cells; it cannot be
// checked again (the person uploads the file again).
var ErrNoCells = errors.New("customerimport: the import keeps no cells to check again")

// ErrNoLine: the line a fix names is not one of the import's.
var ErrNoLine = errors.New("customerimport: no such line in the import")

// ErrTooManyChoices: the import has MaxValueChoices "treat X as Y" choices for the field.
var ErrTooManyChoices = errors.New("customerimport: too many value choices")

// Change is what a Recheck changes before it checks every line again.
type Change struct {
	// Mapping is the mapping the person confirmed (nil: the import's stays); it must have passed
	// CheckMapping.
	Mapping Mapping
	// Value is a "treat X as Y" choice (nil: none).
	Value *ValueChoice
	// Fix is a line the person fixed in the dry run (nil: none).
	Fix *Fix
}

// ValueChoice reads the value From of Field ("segment", "country") as To in every line of the
// file.
type ValueChoice struct{ Field, From, To string }

// Fix is the fields of the line at Position as the person fixed them.
type Fix struct {
	Position int
	Fields   customerrules.Fields
}

// Recheck applies ch to owner's import id (waiting for its mapping, or a draft) and checks every
// line again as DryRun does, against existing and the file's other lines: the lines are read
// again from their cells through the mapping and the value choices (a fixed line from its fix),
// and a line whose verdict did not change keeps the person's include or skip. The import is a
// draft afterwards. ErrNotFound when it is not owner's mapping or draft; ErrNoCells for an import
// from before the mapping step; ErrNoLine for a fix of a line it does not have.
func (s *Store) Recheck(ctx context.Context, id, owner string, r *Reader, ch Change, existing iter.Seq[Existing], knownCountry func(code string) bool) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := s.db.LockKey(ctx, tx, "customer-import:"+id); err != nil {
			return fmt.Errorf("customerimport: lock import %s: %w", id, err)
		}
		var imp Import
		var headers, mapping, values string
		err := tx.QueryRowContext(ctx, `SELECT status, headers, mapping, value_map FROM customer_imports
WHERE id = $1 AND owner = $2 AND status IN ($3, $4)`, id, owner, StatusDraft, StatusMapping).Scan(&imp.Status, &headers, &mapping, &values)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("customerimport: get import %s: %w", id, err)
		}
		if err := decodeImport(&imp, headers, mapping, values); err != nil {
			return err
		}
		if imp.Headers == nil {
			return ErrNoCells
		}
		if ch.Mapping != nil {
			imp.Mapping = ch.Mapping
		}
		if ch.Value != nil {
			if imp.Values == nil {
				imp.Values = ValueMap{}
			}
			if imp.Values[ch.Value.Field] == nil {
				imp.Values[ch.Value.Field] = map[string]string{}
			}
			choices := imp.Values[ch.Value.Field]
			if _, ok := choices[ValueKey(ch.Value.From)]; !ok && len(choices) >= MaxValueChoices {
				return ErrTooManyChoices
			}
			choices[ValueKey(ch.Value.From)] = ch.Value.To
		}
		old, err := allLines(ctx, tx, id, "")
		if err != nil {
			return err
		}
		lines := make([]Line, len(old))
		fixed := false
		for i, l := range old {
			edit := l.Edit
			if ch.Fix != nil && ch.Fix.Position == l.Position {
				edit, fixed = &ch.Fix.Fields, true
			}
			lines[i] = r.LineOf(l.Row, l.Cells, imp.Mapping, imp.Values, edit)
		}
		if ch.Fix != nil && !fixed {
			return ErrNoLine
		}
		checked := DryRun(lines, existing, knownCountry)
		if imp.Status == StatusDraft {
			for i := range checked {
				if checked[i].Verdict == old[i].Verdict && (ch.Fix == nil || ch.Fix.Position != old[i].Position) {
					checked[i].Included = old[i].Included && checked[i].Verdict.Includable()
				}
			}
		}
		if err := updateLines(ctx, tx, id, old, checked); err != nil {
			return err
		}
		rawValues := ""
		if len(imp.Values) > 0 {
			raw, err := json.Marshal(imp.Values)
			if err != nil {
				return fmt.Errorf("customerimport: encode the value choices of %s: %w", id, err)
			}
			rawValues = string(raw)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE customer_imports SET status = $3, mapping = $4, value_map = $5, updated_at = $6
WHERE id = $1 AND owner = $2`, id, owner, StatusDraft, jsonOrEmpty(imp.Mapping), rawValues, statedb.Micros(s.opts.Now())); err != nil {
			return fmt.Errorf("customerimport: update import %s: %w", id, err)
		}
		return nil
	})
}

// decodeImport reads an import's headings, mapping and value choices as stored.
func decodeImport(imp *Import, headers, mapping, values string) error {
	for _, f := range []struct {
		raw string
		to  any
	}{{headers, &imp.Headers}, {mapping, &imp.Mapping}, {values, &imp.Values}} {
		if f.raw == "" {
			continue
		}
		if err := json.Unmarshal([]byte(f.raw), f.to); err != nil {
			return fmt.Errorf("customerimport: decode import %s: %w", imp.ID, err)
		}
	}
	return nil
}

// decodeLine reads a line's cells and fixes as stored.
func decodeLine(l *Line, cells, edits string) error {
	if cells != "" {
		if err := json.Unmarshal([]byte(cells), &l.Cells); err != nil {
			return fmt.Errorf("decode the cells of row %d: %w", l.Row, err)
		}
	}
	if edits != "" {
		l.Edit = &customerrules.Fields{}
		if err := json.Unmarshal([]byte(edits), l.Edit); err != nil {
			return fmt.Errorf("decode the fixes of row %d: %w", l.Row, err)
		}
	}
	return nil
}

// maxMappings is how many mappings one person's shapes of file keep (the oldest goes first).
const maxMappings = 50

// RememberMapping keeps the mapping owner confirmed for a file of these headings, for the next
// file of the same shape (Shape).
func (s *Store) RememberMapping(ctx context.Context, owner string, headers []string, m Mapping) error {
	byHeading := map[string]string{}
	for i, h := range headers {
		key := headingKey(h)
		if _, ok := byHeading[key]; !ok && i < len(m) {
			byHeading[key] = m[i]
		}
	}
	raw, err := json.Marshal(byHeading)
	if err != nil {
		return fmt.Errorf("customerimport: encode a mapping: %w", err)
	}
	now := statedb.Micros(s.opts.Now())
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO customer_import_mappings (owner, shape, mapping, updated_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (owner, shape) DO UPDATE SET mapping = excluded.mapping, updated_at = excluded.updated_at`, owner, Shape(headers), string(raw), now); err != nil {
			return fmt.Errorf("customerimport: remember a mapping: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM customer_import_mappings WHERE owner = $1 AND shape NOT IN
(SELECT shape FROM customer_import_mappings WHERE owner = $1 ORDER BY updated_at DESC, shape LIMIT $2)`, owner, maxMappings); err != nil {
			return fmt.Errorf("customerimport: forget old mappings: %w", err)
		}
		return nil
	})
}

// RememberedMapping is the mapping owner last confirmed for a file of these headings (folded
// heading to field, "" for a column not imported), nil when there is none.
func (s *Store) RememberedMapping(ctx context.Context, owner string, headers []string) (map[string]string, error) {
	var raw string
	err := s.db.SQL.QueryRowContext(ctx, `SELECT mapping FROM customer_import_mappings WHERE owner = $1 AND shape = $2`,
		owner, Shape(headers)).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("customerimport: read a remembered mapping: %w", err)
	}
	out := map[string]string{}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("customerimport: decode a remembered mapping: %w", err)
	}
	for k, field := range out {
		if field != "" && !slices.Contains(importFields, field) {
			delete(out, k) // a field this version does not read
		}
	}
	return out, nil
}

// UnknownValues are the values of the closed lists (ValueFields) that make lines of the import
// invalid, as the file has them, by field: a segment that is none of the segments, a country
// knownCountry does not know (at most limit of each).
func (s *Store) UnknownValues(ctx context.Context, id string, knownCountry func(code string) bool, limit int) (map[string][]string, error) {
	out := map[string][]string{}
	for _, field := range ValueFields {
		column := field // the line's column of the same name
		args := []any{id}
		notIn := ""
		if field == "segment" {
			for _, code := range customerrules.Segments {
				args = append(args, code)
				if notIn != "" {
					notIn += ", "
				}
				notIn += fmt.Sprintf("$%d", len(args))
			}
			notIn = " AND " + column + " NOT IN (" + notIn + ")"
		}
		rows, err := s.db.SQL.QueryContext(ctx, `SELECT DISTINCT `+column+` FROM customer_import_lines
WHERE import_id = $1 AND verdict = 'invalid' AND `+column+` <> ''`+notIn+` ORDER BY `+column+` LIMIT 500`, args...)
		if err != nil {
			return nil, fmt.Errorf("customerimport: unknown values of %s: %w", id, err)
		}
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return nil, fmt.Errorf("customerimport: unknown values of %s: %w", id, err)
			}
			if (field != "country" || !knownCountry(v)) && len(out[field]) < limit {
				out[field] = append(out[field], v)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("customerimport: unknown values of %s: %w", id, err)
		}
	}
	return out, nil
}

// runNameRetention is how long a run's name is kept (longer than the job engine keeps a run).
const runNameRetention = 90 * 24 * time.Hour

// RecordRun names the run (job jobID) of owner's import by its file, for the list of imports.
func (s *Store) RecordRun(ctx context.Context, jobID, owner, fileName string) error {
	if _, err := s.db.SQL.ExecContext(ctx, `INSERT INTO customer_import_runs (job_id, owner, file_name, created_at) VALUES ($1, $2, $3, $4)`,
		jobID, owner, fileName, statedb.Micros(s.opts.Now())); err != nil {
		return fmt.Errorf("customerimport: name run %s: %w", jobID, err)
	}
	return nil
}

// RunNames are the file names of owner's runs, by job id (the newest 200).
func (s *Store) RunNames(ctx context.Context, owner string) (map[string]string, error) {
	rows, err := s.db.SQL.QueryContext(ctx, `SELECT job_id, file_name FROM customer_import_runs WHERE owner = $1
ORDER BY created_at DESC LIMIT 200`, owner)
	if err != nil {
		return nil, fmt.Errorf("customerimport: names of the runs: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, fmt.Errorf("customerimport: names of the runs: %w", err)
		}
		out[id] = name
	}
	return out, rows.Err()
}

// updateLines stores the lines of import id checked again (checked, in the order of old, as
// stored before): only the lines whose stored values changed are written, and never their cells
// (a fix changes one line, or a few with its duplicates; rewriting the 10,000 lines of a file at
// each fix took seconds). When most lines changed (a new mapping), they are written anew.
func updateLines(ctx context.Context, tx *sql.Tx, id string, old []StoredLine, checked []Checked) error {
	var changed []int
	values := make([][]any, len(checked))
	for i := range checked {
		before, err := lineValues(old[i].Checked, false)
		if err != nil {
			return err
		}
		after, err := lineValues(checked[i], false)
		if err != nil {
			return err
		}
		if !slices.Equal(before, after) {
			changed = append(changed, i)
			values[i] = after
		}
	}
	if len(changed) > len(checked)/4 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM customer_import_lines WHERE import_id = $1`, id); err != nil {
			return fmt.Errorf("customerimport: replace the lines of %s: %w", id, err)
		}
		return insertLines(ctx, tx, id, checked)
	}
	for _, i := range changed {
		v := values[i]
		if _, err := tx.ExecContext(ctx, `UPDATE customer_import_lines SET row_number = $3, name = $4, tax_id = $5, email = $6,
phone = $7, segment = $8, street = $9, city = $10, postal_code = $11, country = $12, verdict = $13, problems = $14,
match_id = $15, match_name = $16, match_row = $17, included = $18, edits = $19 WHERE import_id = $1 AND position = $2`,
			append([]any{id, old[i].Position}, append(v[:cellsValue:cellsValue], v[cellsValue+1])...)...); err != nil {
			return fmt.Errorf("customerimport: update line %d of %s: %w", old[i].Position, id, err)
		}
	}
	return nil
}
