// Package savedviews keeps each person's saved views: the filters of a list (its query string)
// under a name they chose, so "Out for signature, two weeks" is one click instead of a filter
// built again every time. The views are rows of the state database (internal/statedb, table
// saved_views, migration 00011) keyed by a hash of the person's subject, so they outlive a
// sign-out, a restart and the replica that wrote them, and a person only ever reads their own.
//
// The store checks the name (not empty, at most MaxNameRunes, no control characters, once per
// list) and bounds what a person keeps (MaxPerPerson). It does not understand the query: the
// caller passes it through the list's own parameter parser first and stores the normalised form,
// so nothing a list would refuse is stored or replayed (docs/work-index.md "Saved views").
package savedviews

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cpqportal/portal/internal/statedb"
)

// MaxPerPerson is how many views one person keeps, over all lists.
const MaxPerPerson = 50

// MaxNameRunes bounds a view's name.
const MaxNameRunes = 60

// MaxQueryLen bounds a stored query string (the work lists' longest normalised query is far
// shorter: seven stages, a 200-character search and a few numbers).
const MaxQueryLen = 2000

// The problems a person can cause; the handlers translate each.
var (
	ErrEmptyName   = errors.New("savedviews: the name is empty")
	ErrNameTooLong = errors.New("savedviews: the name is too long")
	ErrNameInvalid = errors.New("savedviews: the name has control characters")
	ErrDuplicate   = errors.New("savedviews: a view of this list has that name")
	ErrTooMany     = errors.New("savedviews: the person has too many views")
	ErrNotFound    = errors.New("savedviews: no such view of this person")
	ErrQuery       = errors.New("savedviews: the query cannot be stored")
)

// View is one saved view.
type View struct {
	// ID is random (16 hex digits): it names the view in the person's own URLs only.
	ID string
	// List names the list ("quotes", "contracts"); Name is the person's; Query the list's
	// normalised query string, without "?".
	List, Name, Query  string
	CreatedAt, Updated time.Time
}

// Store reads and writes saved views.
type Store struct {
	db  *statedb.DB
	now func() time.Time
}

// New returns the views kept in db; now is the clock (time.Now when nil).
func New(db *statedb.DB, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, now: now}
}

// personKey is a person's key in the table: a hash of the subject, so any subject is a safe key
// and the subject itself is not kept.
func personKey(subject string) string {
	sum := sha256.Sum256([]byte("savedviews\x00" + subject))
	return hex.EncodeToString(sum[:16])
}

// CleanName is the name as stored: trimmed, inner runs of white space as one space; an error
// when it is empty, too long or holds control characters.
func CleanName(name string) (string, error) {
	if !utf8.ValidString(name) {
		return "", ErrNameInvalid
	}
	clean := strings.Join(strings.Fields(name), " ")
	switch {
	case clean == "":
		return "", ErrEmptyName
	case utf8.RuneCountInString(clean) > MaxNameRunes:
		return "", ErrNameTooLong
	}
	for _, r := range clean {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return "", ErrNameInvalid
		}
	}
	return clean, nil
}

func nameKey(clean string) string { return strings.ToLower(clean) }

func checkQuery(query string) error {
	if len(query) > MaxQueryLen || strings.HasPrefix(query, "?") {
		return ErrQuery
	}
	for i := 0; i < len(query); i++ {
		// A normalised query string is URL-encoded: printable ASCII only.
		if query[i] < 0x21 || query[i] > 0x7e {
			return ErrQuery
		}
	}
	return nil
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Save stores a new view of list for the person.
func (s *Store) Save(ctx context.Context, subject, list, name, query string) (View, error) {
	if subject == "" || list == "" {
		return View{}, errors.New("savedviews: no person or list")
	}
	clean, err := CleanName(name)
	if err != nil {
		return View{}, err
	}
	if err := checkQuery(query); err != nil {
		return View{}, err
	}
	now := s.now().UTC()
	v := View{ID: newID(), List: list, Name: clean, Query: query, CreatedAt: now, Updated: now}
	person := personKey(subject)
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM saved_views WHERE person = $1`, person).Scan(&n); err != nil {
			return err
		}
		if n >= MaxPerPerson {
			return ErrTooMany
		}
		if taken, err := nameTaken(ctx, tx, person, list, nameKey(clean), ""); err != nil || taken {
			return cmpErr(err, ErrDuplicate)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO saved_views (id, person, list, name, name_key, query, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`, v.ID, person, list, clean, nameKey(clean), query, statedb.Micros(now))
		return err
	})
	if err != nil {
		return View{}, s.explain(ctx, "save", person, list, clean, err)
	}
	return v, nil
}

// Rename gives the person's view id a new name.
func (s *Store) Rename(ctx context.Context, subject, id, name string) (View, error) {
	clean, err := CleanName(name)
	if err != nil {
		return View{}, err
	}
	person := personKey(subject)
	var v View
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		if v, err = get(ctx, tx, person, id); err != nil {
			return err
		}
		if taken, err := nameTaken(ctx, tx, person, v.List, nameKey(clean), id); err != nil || taken {
			return cmpErr(err, ErrDuplicate)
		}
		v.Name, v.Updated = clean, s.now().UTC()
		_, err = tx.ExecContext(ctx, `UPDATE saved_views SET name = $1, name_key = $2, updated_at = $3 WHERE person = $4 AND id = $5`,
			clean, nameKey(clean), statedb.Micros(v.Updated), person, id)
		return err
	})
	if err != nil {
		return View{}, s.explain(ctx, "rename", person, v.List, clean, err)
	}
	return v, nil
}

// Delete removes the person's view id (ErrNotFound when they have none of that id).
func (s *Store) Delete(ctx context.Context, subject, id string) error {
	res, err := s.db.SQL.ExecContext(ctx, `DELETE FROM saved_views WHERE person = $1 AND id = $2`, personKey(subject), id)
	if err != nil {
		return fmt.Errorf("savedviews: delete: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return ErrNotFound
	}
	return nil
}

// Get is the person's view id.
func (s *Store) Get(ctx context.Context, subject, id string) (View, error) {
	v, err := get(ctx, s.db.SQL, personKey(subject), id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return View{}, fmt.Errorf("savedviews: get: %w", err)
	}
	return v, err
}

// List is the person's views of list (every list when ""), by name.
func (s *Store) List(ctx context.Context, subject, list string) ([]View, error) {
	query := `SELECT id, list, name, query, created_at, updated_at FROM saved_views WHERE person = $1`
	args := []any{personKey(subject)}
	if list != "" {
		query += ` AND list = $2`
		args = append(args, list)
	}
	rows, err := s.db.SQL.QueryContext(ctx, query+` ORDER BY name_key, id LIMIT `+fmt.Sprint(MaxPerPerson*2), args...)
	if err != nil {
		return nil, fmt.Errorf("savedviews: list: %w", err)
	}
	defer rows.Close()
	var views []View
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("savedviews: list: %w", err)
		}
		views = append(views, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("savedviews: list: %w", err)
	}
	return views, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type scanner interface{ Scan(dest ...any) error }

func scan(row scanner) (View, error) {
	var (
		v                  View
		created, updatedAt int64
	)
	if err := row.Scan(&v.ID, &v.List, &v.Name, &v.Query, &created, &updatedAt); err != nil {
		return View{}, err
	}
	v.CreatedAt, v.Updated = statedb.Time(created), statedb.Time(updatedAt)
	return v, nil
}

func get(ctx context.Context, q querier, person, id string) (View, error) {
	v, err := scan(q.QueryRowContext(ctx, `SELECT id, list, name, query, created_at, updated_at FROM saved_views WHERE person = $1 AND id = $2`, person, id))
	if errors.Is(err, sql.ErrNoRows) {
		return View{}, ErrNotFound
	}
	return v, err
}

// nameTaken: another view of the person's list (not except) has the name.
func nameTaken(ctx context.Context, q querier, person, list, key, except string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM saved_views WHERE person = $1 AND list = $2 AND name_key = $3 AND id <> $4`,
		person, list, key, except).Scan(&n)
	return n > 0, err
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// explain returns the store's own errors as they are; another error is wrapped, or reported as
// ErrDuplicate when the name was taken meanwhile (two saves at once: the unique index decided).
func (s *Store) explain(ctx context.Context, op, person, list, clean string, err error) error {
	for _, known := range []error{ErrTooMany, ErrDuplicate, ErrNotFound} {
		if errors.Is(err, known) {
			return known
		}
	}
	if list != "" {
		if taken, terr := nameTaken(ctx, s.db.SQL, person, list, nameKey(clean), ""); terr == nil && taken {
			return ErrDuplicate
		}
	}
	return fmt.Errorf("savedviews: %s: %w", op, err)
}
