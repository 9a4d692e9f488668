package customerimport

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/statedb"
)

// Defaults of the Store's options (docs/backoffice.md).
const (
	// DefaultMaxDrafts is how many imports not run one person may keep (as many as the batch
	// archive's drafts would be too many: each holds up to 10,000 lines).
	DefaultMaxDrafts = 5
	// DefaultRetention is how long an import not run is kept after its last change.
	DefaultRetention = 7 * 24 * time.Hour
)

// StatusDraft is an import whose dry run is shown and whose run has not started.
const StatusDraft = "draft"

// StatusMapping is an import whose mapping the person has not confirmed yet (CreateSheet): its
// lines hold their cells; Recheck with a mapping makes it a draft.
const StatusMapping = "mapping"

// ErrNotFound: no such import, or it is another person's.
var ErrNotFound = errors.New("customerimport: no such import")

// QuotaError is a person's quota reached; Message tells them, translated where shown.
type QuotaError struct{ Message i18n.Message }

func (e *QuotaError) Error() string {
	return fmt.Sprintf("customerimport: quota reached: %s %v", e.Message.Key, e.Message.Args)
}

// Options configure a Store.
type Options struct {
	// MaxDrafts is how many imports not run one person may keep (DefaultMaxDrafts when zero).
	MaxDrafts int
	// Retention is how long an import not run is kept (DefaultRetention when zero).
	Retention time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Store keeps imports and their lines in the state database.
type Store struct {
	db   *statedb.DB
	opts Options
}

// NewStore returns the imports kept in db.
func NewStore(db *statedb.DB, opts Options) *Store {
	if opts.MaxDrafts <= 0 {
		opts.MaxDrafts = DefaultMaxDrafts
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Store{db: db, opts: opts}
}

// Import is one uploaded file's dry run.
type Import struct {
	ID, Owner, FileName, Status string
	Total                       int
	CreatedAt, UpdatedAt        time.Time
	// Headers are the file's headings and Mapping the field of each column (CreateSheet; nil for
	// an import made before the mapping step, which cannot be checked again); Values the person's
	// "treat X as Y" choices.
	Headers []string
	Mapping Mapping
	Values  ValueMap
}

// StoredLine is a line of an import as stored: its place in the file (Position, from 0) and what
// the dry run found.
type StoredLine struct {
	Position int
	Checked
}

// Count is how many lines of a verdict there are and how many of them are included.
type Count struct {
	Total, Included int
}

// Counts are an import's lines by verdict.
type Counts map[Verdict]Count

// Included is how many lines of every verdict are included.
func (c Counts) Included() int {
	n := 0
	for _, v := range c {
		n += v.Included
	}
	return n
}

// linesPerInsert bounds one INSERT's rows (19 parameters a row stay far below both engines'
// limits: SQLite's 32,766 and PostgreSQL's 65,535).
const linesPerInsert = 200

const lineColumns = `row_number, name, tax_id, email, phone, segment, street, city, postal_code, country,
    verdict, problems, match_id, match_name, match_row, included, cells, edits`

// Create stores a dry run as a new import of owner's. A person with MaxDrafts imports not run
// gets a *QuotaError (they delete one, or it leaves after its retention).
func (s *Store) Create(ctx context.Context, owner, fileName string, lines []Checked) (*Import, error) {
	return s.create(ctx, owner, fileName, StatusDraft, nil, nil, lines)
}

// CreateSheet stores an uploaded file as a new import of owner's waiting for its mapping
// (StatusMapping): its headings, the proposed mapping m and every line's cells (read through m,
// not checked). Recheck with the mapping the person confirms checks it. The quota is Create's.
func (s *Store) CreateSheet(ctx context.Context, owner, fileName string, r *Reader, sheet *Sheet, m Mapping) (*Import, error) {
	lines := make([]Checked, len(sheet.Rows))
	for i, row := range sheet.Rows {
		lines[i] = Checked{Line: r.LineOf(row.Row, row.Cells, m, nil, nil), Verdict: VerdictNew}
	}
	return s.create(ctx, owner, fileName, StatusMapping, sheet.Headers, m, lines)
}

func (s *Store) create(ctx context.Context, owner, fileName, status string, headers []string, m Mapping, lines []Checked) (*Import, error) {
	if owner == "" {
		return nil, errors.New("customerimport: no owner")
	}
	if len(lines) > MaxLines {
		return nil, fmt.Errorf("customerimport: %d lines, at most %d", len(lines), MaxLines)
	}
	now := s.opts.Now().UTC()
	imp := &Import{ID: statedb.NewID(), Owner: owner, FileName: fileName, Status: status, Total: len(lines), CreatedAt: now, UpdatedAt: now,
		Headers: headers, Mapping: m}
	rawHeaders, rawMapping := jsonOrEmpty(headers), jsonOrEmpty(m)
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		// One owner's quota checks one at a time.
		if err := s.db.LockKey(ctx, tx, "customer-import-owner:"+owner); err != nil {
			return fmt.Errorf("customerimport: lock the owner's quota: %w", err)
		}
		var drafts int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM customer_imports WHERE owner = $1 AND status IN ($2, $3)`, owner, StatusDraft, StatusMapping).Scan(&drafts); err != nil {
			return fmt.Errorf("customerimport: count the owner's imports: %w", err)
		}
		if drafts >= s.opts.MaxDrafts {
			return &QuotaError{i18n.M("import.quota.drafts", strconv.Itoa(s.opts.MaxDrafts))}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO customer_imports (id, owner, file_name, status, total, created_at, updated_at, headers, mapping)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, imp.ID, owner, fileName, imp.Status, imp.Total, statedb.Micros(now), statedb.Micros(now),
			rawHeaders, rawMapping); err != nil {
			return fmt.Errorf("customerimport: insert import: %w", err)
		}
		return insertLines(ctx, tx, imp.ID, lines)
	})
	if err != nil {
		return nil, err
	}
	return imp, nil
}

// jsonOrEmpty is v in JSON, "" for nil.
func jsonOrEmpty[T any](v []T) string {
	if v == nil {
		return ""
	}
	raw, _ := json.Marshal(v) // strings only: cannot fail
	return string(raw)
}

func insertLines(ctx context.Context, tx *sql.Tx, id string, lines []Checked) error {
	const perLine = 19
	for start := 0; start < len(lines); start += linesPerInsert {
		end := min(start+linesPerInsert, len(lines))
		var b strings.Builder
		b.WriteString(`INSERT INTO customer_import_lines (import_id, position, ` + lineColumns + `) VALUES `)
		args := make([]any, 1, 1+perLine*(end-start))
		args[0] = id
		for i := start; i < end; i++ {
			if i > start {
				b.WriteString(", ")
			}
			b.WriteString("($1")
			for range perLine {
				b.WriteString(", $" + strconv.Itoa(len(args)+1))
				args = append(args, nil)
			}
			b.WriteString(")")
			values, err := lineValues(lines[i], true)
			if err != nil {
				return err
			}
			args[len(args)-perLine] = i
			copy(args[len(args)-perLine+1:], values)
		}
		if _, err := tx.ExecContext(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("customerimport: insert the lines of import %s: %w", id, err)
		}
	}
	return nil
}

// cellsValue is the place of the cells among lineValues (a recheck never changes them).
const cellsValue = 16

// lineValues are the values of lineColumns for l, as stored (the cells "" unless withCells).
func lineValues(l Checked, withCells bool) ([]any, error) {
	problems := ""
	if len(l.Problems) > 0 {
		raw, err := json.Marshal(l.Problems)
		if err != nil {
			return nil, fmt.Errorf("customerimport: encode the problems of a line: %w", err)
		}
		problems = string(raw)
	}
	edits := ""
	if l.Edit != nil {
		raw, err := json.Marshal(l.Edit)
		if err != nil {
			return nil, fmt.Errorf("customerimport: encode the fixes of a line: %w", err)
		}
		edits = string(raw)
	}
	cells := ""
	if withCells {
		cells = jsonOrEmpty(l.Cells)
	}
	f := l.Fields
	return []any{l.Row, f.Name, f.TaxID, f.Email, f.Phone, f.Segment, f.Street, f.City, f.PostalCode, f.Country,
		string(l.Verdict), problems, l.MatchID, l.MatchName, l.MatchRow, b2i(l.Included), cells, edits}, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Get returns owner's import id (ErrNotFound when there is none, or it is someone else's).
func (s *Store) Get(ctx context.Context, id, owner string) (*Import, error) {
	var imp Import
	var created, updated int64
	var headers, mapping, values string
	err := s.db.SQL.QueryRowContext(ctx, `SELECT id, owner, file_name, status, total, created_at, updated_at, headers, mapping, value_map
FROM customer_imports WHERE id = $1 AND owner = $2`, id, owner).Scan(&imp.ID, &imp.Owner, &imp.FileName, &imp.Status, &imp.Total, &created, &updated,
		&headers, &mapping, &values)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("customerimport: get import %s: %w", id, err)
	}
	imp.CreatedAt, imp.UpdatedAt = statedb.Time(created), statedb.Time(updated)
	if err := decodeImport(&imp, headers, mapping, values); err != nil {
		return nil, err
	}
	return &imp, nil
}

// List returns owner's imports, newest first (at most MaxDrafts plus those being run: a handful).
func (s *Store) List(ctx context.Context, owner string) ([]Import, error) {
	rows, err := s.db.SQL.QueryContext(ctx, `SELECT id, owner, file_name, status, total, created_at, updated_at
FROM customer_imports WHERE owner = $1 ORDER BY created_at DESC LIMIT 50`, owner)
	if err != nil {
		return nil, fmt.Errorf("customerimport: list imports: %w", err)
	}
	defer rows.Close()
	var out []Import
	for rows.Next() {
		var imp Import
		var created, updated int64
		if err := rows.Scan(&imp.ID, &imp.Owner, &imp.FileName, &imp.Status, &imp.Total, &created, &updated); err != nil {
			return nil, fmt.Errorf("customerimport: list imports: %w", err)
		}
		imp.CreatedAt, imp.UpdatedAt = statedb.Time(created), statedb.Time(updated)
		out = append(out, imp)
	}
	return out, rows.Err()
}

// Counts returns the import's lines by verdict.
func (s *Store) Counts(ctx context.Context, id string) (Counts, error) {
	rows, err := s.db.SQL.QueryContext(ctx, `SELECT verdict, COUNT(*), SUM(included) FROM customer_import_lines
WHERE import_id = $1 GROUP BY verdict`, id)
	if err != nil {
		return nil, fmt.Errorf("customerimport: count the lines of %s: %w", id, err)
	}
	defer rows.Close()
	out := Counts{}
	for rows.Next() {
		var verdict string
		var c Count
		if err := rows.Scan(&verdict, &c.Total, &c.Included); err != nil {
			return nil, fmt.Errorf("customerimport: count the lines of %s: %w", id, err)
		}
		out[Verdict(verdict)] = c
	}
	return out, rows.Err()
}

// PageSize is how many lines a page of the preview shows.
const PageSize = 100

// Page is a page of an import's lines.
type Page struct {
	Lines []StoredLine
	// Prev and Next are the positions the previous and next pages start from (-1: none).
	Prev, Next int
}

// Lines returns the page of the import's lines (of verdict, all when "") starting at position
// from, in file order: keyset paging on (import_id, verdict, position), so the last page of
// 10,000 lines costs what the first does.
func (s *Store) Lines(ctx context.Context, id string, verdict Verdict, from int) (Page, error) {
	filter := ""
	args := []any{id, max(from, 0)}
	if verdict != "" {
		filter = " AND verdict = $3"
		args = append(args, string(verdict))
	}
	page := Page{Prev: -1, Next: -1}
	rows, err := s.db.SQL.QueryContext(ctx, `SELECT position, `+lineColumns+` FROM customer_import_lines
WHERE import_id = $1 AND position >= $2`+filter+` ORDER BY position LIMIT `+strconv.Itoa(PageSize+1), args...)
	if err != nil {
		return page, fmt.Errorf("customerimport: lines of %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		l, err := scanLine(rows)
		if err != nil {
			return page, fmt.Errorf("customerimport: lines of %s: %w", id, err)
		}
		if len(page.Lines) == PageSize {
			page.Next = l.Position
			break
		}
		page.Lines = append(page.Lines, l)
	}
	if err := rows.Err(); err != nil {
		return page, fmt.Errorf("customerimport: lines of %s: %w", id, err)
	}
	if from > 0 {
		// The previous page starts PageSize lines of the verdict before from.
		var prev sql.NullInt64
		args[1] = from
		err := s.db.SQL.QueryRowContext(ctx, `SELECT MIN(position) FROM (SELECT position FROM customer_import_lines
WHERE import_id = $1 AND position < $2`+filter+` ORDER BY position DESC LIMIT `+strconv.Itoa(PageSize)+`) p`, args...).Scan(&prev)
		if err != nil {
			return page, fmt.Errorf("customerimport: previous page of %s: %w", id, err)
		}
		if prev.Valid {
			page.Prev = int(prev.Int64)
		}
	}
	return page, nil
}

// SetIncluded includes (or skips) the lines at positions of owner's import that may be included
// (Verdict.Includable); other positions are left as they are. It answers ErrNotFound for an
// import that is not owner's draft.
func (s *Store) SetIncluded(ctx context.Context, id, owner string, include, skip []int) error {
	return s.changeDraft(ctx, id, owner, func(tx *sql.Tx) error {
		for _, set := range []struct {
			positions []int
			value     int
		}{{include, 1}, {skip, 0}} {
			for start := 0; start < len(set.positions); start += linesPerInsert {
				chunk := set.positions[start:min(start+linesPerInsert, len(set.positions))]
				args := []any{id, set.value}
				var in strings.Builder
				for i, p := range chunk {
					if i > 0 {
						in.WriteString(", ")
					}
					args = append(args, p)
					in.WriteString("$" + strconv.Itoa(len(args)))
				}
				if _, err := tx.ExecContext(ctx, `UPDATE customer_import_lines SET included = $2
WHERE import_id = $1 AND verdict IN ('new', 'possible') AND position IN (`+in.String()+`)`, args...); err != nil {
					return fmt.Errorf("customerimport: include lines of %s: %w", id, err)
				}
			}
		}
		return nil
	})
}

// SetIncludedVerdict includes (or skips) every line of a verdict that may be included.
func (s *Store) SetIncludedVerdict(ctx context.Context, id, owner string, verdict Verdict, included bool) error {
	if !verdict.Includable() {
		return nil
	}
	return s.changeDraft(ctx, id, owner, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE customer_import_lines SET included = $3 WHERE import_id = $1 AND verdict = $2`,
			id, string(verdict), b2i(included)); err != nil {
			return fmt.Errorf("customerimport: include the %s lines of %s: %w", verdict, id, err)
		}
		return nil
	})
}

// changeDraft runs change on owner's draft import id and marks it changed (its retention starts
// again).
func (s *Store) changeDraft(ctx context.Context, id, owner string, change func(tx *sql.Tx) error) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE customer_imports SET updated_at = $4 WHERE id = $1 AND owner = $2 AND status = $3`,
			id, owner, StatusDraft, statedb.Micros(s.opts.Now()))
		if err != nil {
			return fmt.Errorf("customerimport: change import %s: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return ErrNotFound
		}
		return change(tx)
	})
}

// Delete removes owner's draft import and its lines.
func (s *Store) Delete(ctx context.Context, id, owner string) error {
	res, err := s.db.SQL.ExecContext(ctx, `DELETE FROM customer_imports WHERE id = $1 AND owner = $2 AND status IN ($3, $4)`, id, owner, StatusDraft, StatusMapping)
	if err != nil {
		return fmt.Errorf("customerimport: delete import %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return ErrNotFound
	}
	return nil
}

// Purge deletes the drafts not changed for the retention; it returns how many.
func (s *Store) Purge(ctx context.Context) (int64, error) {
	before := s.opts.Now().Add(-s.opts.Retention)
	// An import left "starting" (its replica died between BeginRun and EndRun) goes with the drafts.
	res, err := s.db.SQL.ExecContext(ctx, `DELETE FROM customer_imports WHERE status IN ($1, $3, $4) AND updated_at < $2`, StatusDraft, statedb.Micros(before), StatusStarting, StatusMapping)
	if err != nil {
		return 0, fmt.Errorf("customerimport: purge: %w", err)
	}
	if _, err := s.db.SQL.ExecContext(ctx, `DELETE FROM customer_import_runs WHERE created_at < $1`,
		statedb.Micros(s.opts.Now().Add(-runNameRetention))); err != nil {
		return 0, fmt.Errorf("customerimport: purge the runs' names: %w", err)
	}
	return res.RowsAffected()
}

// IncludedLines returns the lines of the import that a run sends: the included lines that passed
// the checks, in file order, with what is needed to send each (Sender.Send). The caller (the run's
// job) checks ownership when it is created.
func (s *Store) IncludedLines(ctx context.Context, id string) ([]StoredLine, error) {
	return allLines(ctx, s.db.SQL, id, ` AND included = 1 AND verdict IN ('new', 'possible')`)
}

// querier is a transaction or the database.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// allLines reads the lines of import id that pass filter (SQL after the import's condition; ""
// for all), in file order.
func allLines(ctx context.Context, q querier, id, filter string) ([]StoredLine, error) {
	rows, err := q.QueryContext(ctx, `SELECT position, `+lineColumns+` FROM customer_import_lines
WHERE import_id = $1`+filter+` ORDER BY position`, id)
	if err != nil {
		return nil, fmt.Errorf("customerimport: lines of %s: %w", id, err)
	}
	defer rows.Close()
	var out []StoredLine
	for rows.Next() {
		l, err := scanLine(rows)
		if err != nil {
			return nil, fmt.Errorf("customerimport: lines of %s: %w", id, err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// scanLine reads a row of "position, lineColumns".
func scanLine(rows *sql.Rows) (StoredLine, error) {
	var l StoredLine
	var verdict, problems, cells, edits string
	var included int
	f := &l.Fields
	if err := rows.Scan(&l.Position, &l.Row, &f.Name, &f.TaxID, &f.Email, &f.Phone, &f.Segment, &f.Street, &f.City,
		&f.PostalCode, &f.Country, &verdict, &problems, &l.MatchID, &l.MatchName, &l.MatchRow, &included, &cells, &edits); err != nil {
		return l, err
	}
	if err := decodeLine(&l.Line, cells, edits); err != nil {
		return l, err
	}
	l.Verdict, l.Included = Verdict(verdict), included == 1
	if problems != "" {
		if err := json.Unmarshal([]byte(problems), &l.Problems); err != nil {
			return l, fmt.Errorf("decode the problems of row %d: %w", l.Row, err)
		}
	}
	return l, nil
}

// StatusStarting is an import whose run is being created (Store.BeginRun): no longer a draft, so
// it cannot be changed, deleted or run twice; it is deleted once its job holds its lines.
const StatusStarting = "starting"

// ErrNotDraft: the import's run has started already (another tab, a double click).
var ErrNotDraft = errors.New("customerimport: the import's run has started already")

// BeginRun takes owner's draft import id for its run: only one caller ever gets it (ErrNotDraft
// for the others), so an import is never run twice. It returns every line of the import in file
// order (the run's job holds them all: included and skipped).
func (s *Store) BeginRun(ctx context.Context, id, owner string) ([]StoredLine, error) {
	res, err := s.db.SQL.ExecContext(ctx, `UPDATE customer_imports SET status = $3, updated_at = $4 WHERE id = $1 AND owner = $2 AND status = $5`,
		id, owner, StatusStarting, statedb.Micros(s.opts.Now()), StatusDraft)
	if err != nil {
		return nil, fmt.Errorf("customerimport: begin the run of %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if _, err := s.Get(ctx, id, owner); err != nil {
			return nil, err
		}
		return nil, ErrNotDraft
	}
	return allLines(ctx, s.db.SQL, id, "")
}

// AbandonRun gives the import back as a draft when its run could not be created.
func (s *Store) AbandonRun(ctx context.Context, id, owner string) error {
	if _, err := s.db.SQL.ExecContext(ctx, `UPDATE customer_imports SET status = $3 WHERE id = $1 AND owner = $2 AND status = $4`,
		id, owner, StatusDraft, StatusStarting); err != nil {
		return fmt.Errorf("customerimport: give import %s back: %w", id, err)
	}
	return nil
}

// EndRun deletes the import whose run's job was created (the job holds its lines now).
func (s *Store) EndRun(ctx context.Context, id, owner string) error {
	if _, err := s.db.SQL.ExecContext(ctx, `DELETE FROM customer_imports WHERE id = $1 AND owner = $2 AND status = $3`,
		id, owner, StatusStarting); err != nil {
		return fmt.Errorf("customerimport: delete the run import %s: %w", id, err)
	}
	return nil
}
