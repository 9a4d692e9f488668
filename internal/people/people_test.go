package people

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newClock() *clock { return &clock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)} }

func view(t *testing.T, d *Directory) *View {
	t.Helper()
	v, err := d.View(context.Background())
	if err != nil {
		t.Fatalf("view: %v", err)
	}
	return v
}

func nameOf(v *View, actor string) string {
	name, _, _ := v.Person(actor)
	return name
}

func countPeople(t *testing.T, db *statedb.DB) int {
	t.Helper()
	var n int
	if err := db.SQL.QueryRow("SELECT COUNT(*) FROM people").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRecordNamesLoginsEmailsAndLocalParts: a sign-in names the person by login, by e-mail
// address and by its local part, in any case; another replica on the same database learns it
// once its cached answer is older than CacheFor; nothing but login, name, e-mail and time is
// stored.
func TestRecordNamesLoginsEmailsAndLocalParts(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		clk := newClock()
		a := New(db, Options{Now: clk.Now})
		b := New(db, Options{Now: clk.Now})
		if got := nameOf(view(t, b), "sales"); got != "" {
			t.Fatalf("an empty directory names sales %q", got)
		}
		if err := a.Record(context.Background(), Person{Login: "sales", Name: "Sam Sales", Email: "Sam.Sales@demo.example"}); err != nil {
			t.Fatal(err)
		}
		for actor, want := range map[string]struct {
			name  string
			exact bool
		}{
			"sales": {"Sam Sales", true}, "SALES ": {"Sam Sales", true}, "sam.sales@demo.example": {"Sam Sales", true},
			"sam.sales": {"Sam Sales", false}, "backoffice": {"", false}, "": {"", false},
		} {
			name, exact, ok := view(t, a).Person(actor)
			if name != want.name || exact != want.exact || ok != (want.name != "") {
				t.Errorf("%q: %q exact=%v ok=%v, want %q exact=%v", actor, name, exact, ok, want.name, want.exact)
			}
		}
		// The other replica asked a moment ago: it keeps its answer for CacheFor, then learns.
		if got := nameOf(view(t, b), "sales"); got != "" {
			t.Errorf("within CacheFor the other replica names sales %q", got)
		}
		clk.Advance(DefaultCacheFor)
		if got := nameOf(view(t, b), "sales"); got != "Sam Sales" {
			t.Errorf("the other replica names sales %q", got)
		}
		rows, err := db.SQL.Query("SELECT person_key, login, name, email, email_local FROM people")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var f [5]string
			if err := rows.Scan(&f[0], &f[1], &f[2], &f[3], &f[4]); err != nil {
				t.Fatal(err)
			}
			if f != [5]string{"sales", "sales", "Sam Sales", "sam.sales@demo.example", "sam.sales"} {
				t.Errorf("stored %q", f)
			}
		}
		_ = rows.Close()
		// A sign-in without a name (or whose name is only the login) teaches nothing.
		if err := a.Record(context.Background(), Person{Login: "anon", Email: "anon@x.example"}); err != nil {
			t.Fatal(err)
		}
		if err := a.Record(context.Background(), Person{Login: "bob", Name: "bob"}); err != nil {
			t.Fatal(err)
		}
		if n := countPeople(t, db); n != 1 {
			t.Errorf("%d people, want 1", n)
		}
	})
}

// TestAmbiguousLocalPartNamesNobody: two people whose addresses share a local part are named by
// login and address, never by that local part alone; a renamed person shows the new name.
func TestAmbiguousLocalPartNamesNobody(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		d := New(db, Options{})
		ctx := context.Background()
		for _, p := range []Person{
			{Login: "ann1", Name: "Ann One", Email: "ann@one.example"},
			{Login: "ann2", Name: "Ann Two", Email: "ann@two.example"},
			{Login: "carl", Name: "Carl", Email: "carl@x.example"},
			{Login: "carl", Name: "Carl Carlsson", Email: "carl@x.example"},
			{Name: "Nora No-Login", Email: "Nora@x.example"},
		} {
			if err := d.Record(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		v := view(t, d)
		v.Prefetch("ann", "ann1", "nobody")
		for actor, want := range map[string]string{
			"ann": "", "ann1": "Ann One", "ann@two.example": "Ann Two", "carl": "Carl Carlsson",
			"carl@x.example": "Carl Carlsson", "nora@x.example": "Nora No-Login", "nora": "Nora No-Login",
		} {
			if got := nameOf(v, actor); got != want {
				t.Errorf("%q: %q, want %q", actor, got, want)
			}
		}
		if n := countPeople(t, db); n != 4 {
			t.Errorf("%d people, want 4 (a second sign-in replaces the first)", n)
		}
	})
}

// TestPrefetchNamesAPageOfActors: a page's actors are looked up at once, past one query's batch,
// and long fields are bounded.
func TestPrefetchNamesAPageOfActors(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		d := New(db, Options{})
		ctx := context.Background()
		const n = 2*lookupBatch + 7
		var actors []string
		for i := range n {
			login := fmt.Sprintf("user%03d", i)
			if err := d.Record(ctx, Person{Login: login, Name: "User " + login, Email: login + "@x.example"}); err != nil {
				t.Fatal(err)
			}
			actors = append(actors, strings.ToUpper(login), login+"@x.example")
		}
		v := view(t, d)
		v.Prefetch(actors...)
		for i := range n {
			login := fmt.Sprintf("user%03d", i)
			if got := nameOf(v, login+"@X.example"); got != "User "+login {
				t.Errorf("%s: %q", login, got)
			}
		}
		long := Person{Login: strings.Repeat("l", 5000), Name: strings.Repeat("n", 5000), Email: strings.Repeat("e", 5000)}
		if err := d.Record(ctx, long); err != nil {
			t.Fatal(err)
		}
		var size int
		if err := db.SQL.QueryRow("SELECT MAX(LENGTH(person_key) + LENGTH(name) + LENGTH(email)) FROM people").Scan(&size); err != nil {
			t.Fatal(err)
		}
		if size > 3*maxFieldRunes {
			t.Errorf("a row holds %d characters", size)
		}
	})
}

// TestExpiresAfterKeepUnlessSignedInAgain: a person not seen for Keep is no longer named (and is
// deleted by a later sign-in); signing in again refreshes them.
func TestExpiresAfterKeepUnlessSignedInAgain(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		clk := newClock()
		const keep = 180 * 24 * time.Hour
		d := New(db, Options{Keep: keep, Now: clk.Now})
		ctx := context.Background()
		if err := d.Record(ctx, Person{Login: "old", Name: "Olga Old"}); err != nil {
			t.Fatal(err)
		}
		if err := d.Record(ctx, Person{Login: "back", Name: "Bert Back"}); err != nil {
			t.Fatal(err)
		}
		clk.Advance(keep - time.Hour)
		if err := d.Record(ctx, Person{Login: "back", Name: "Bert Back"}); err != nil {
			t.Fatal(err)
		}
		clk.Advance(2 * time.Hour)
		v := view(t, d)
		if got := nameOf(v, "old"); got != "" {
			t.Errorf("a person not seen for %s is still named %q", keep, got)
		}
		if got := nameOf(v, "back"); got != "Bert Back" {
			t.Errorf("a person who signed in again is named %q", got)
		}
		if err := d.Record(ctx, Person{Login: "new", Name: "Nina New"}); err != nil {
			t.Fatal(err)
		}
		if n := countPeople(t, db); n != 2 {
			t.Errorf("%d people after a sign-in past keep, want 2 (old deleted)", n)
		}
	})
}

// TestDatabaseDownNamesNobody: with the database failing, a sign-in's record fails (the caller
// logs it and signs the person in), lookups name nobody without an error page, the next View
// reports the failure once for the log, and the directory leaves the database alone for a few
// seconds; when it is back, lookups name people again.
func TestDatabaseDownNamesNobody(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		clk := newClock()
		d := New(db, Options{Now: clk.Now})
		ctx := context.Background()
		if err := d.Record(ctx, Person{Login: "sales", Name: "Sam Sales"}); err != nil {
			t.Fatal(err)
		}
		// The table goes away: every statement on it fails as on a database that is down.
		if _, err := db.SQL.Exec("ALTER TABLE people RENAME TO people_away"); err != nil {
			t.Fatal(err)
		}
		if err := d.Record(ctx, Person{Login: "backoffice", Name: "Bea Backoffice"}); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("record with the database down: %v", err)
		}
		clk.Advance(downFor)
		v := view(t, d) // Record's failure is its caller's to log
		if got := nameOf(v, "sales"); got != "" {
			t.Errorf("with the database down, sales is %q", got)
		}
		if _, err := d.View(ctx); !errors.Is(err, ErrUnavailable) {
			t.Errorf("the view after a failed lookup reports %v", err)
		}
		if _, err := d.View(ctx); err != nil {
			t.Errorf("a failure is reported once, again: %v", err)
		}
		if _, err := db.SQL.Exec("ALTER TABLE people_away RENAME TO people"); err != nil {
			t.Fatal(err)
		}
		// Within the back-off the directory does not ask (nothing cached from the failure).
		if got := nameOf(view(t, d), "sales"); got != "" {
			t.Errorf("within the back-off sales is %q", got)
		}
		clk.Advance(downFor)
		if got := nameOf(view(t, d), "sales"); got != "Sam Sales" {
			t.Errorf("after the database came back, sales is %q", got)
		}
	})
}

// TestNilDirectoryNamesNobody: a portal without a directory (tests, tools) shows actors as written.
func TestNilDirectoryNamesNobody(t *testing.T) {
	t.Parallel()
	var d *Directory
	v, err := d.View(context.Background())
	if err != nil || nameOf(v, "sales") != "" {
		t.Fatalf("nil directory: %v %q", err, nameOf(v, "sales"))
	}
	v.Prefetch("sales")
}

// TestSignInAmongManyPeopleIsOneSmallWrite: with 100,000 people (ten times the old cap), a
// sign-in writes one row: a few pages of the database, not the 737 KiB shard of the key-value
// store, and every person is still named.
func TestSignInAmongManyPeopleIsOneSmallWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 100,000 people")
	}
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		const many = 100_000
		now := time.Now()
		_, err := db.SQL.ExecContext(ctx, `
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)
INSERT INTO people (person_key, login, name, email, email_local, seen_at)
SELECT 'user' || CAST(i AS TEXT), 'user' || CAST(i AS TEXT), 'Person ' || CAST(i AS TEXT),
       'user' || CAST(i AS TEXT) || '@x.example', 'user' || CAST(i AS TEXT), $2 FROM n`,
			many, statedb.Micros(now))
		if err != nil {
			t.Fatal(err)
		}
		d := New(db, Options{})
		// PostgreSQL's WAL position is the server's, and make unit runs several packages' tests on
		// one server at once: their writes only add to a sign-in's, so the least of three sign-ins
		// (three people, each renamed: each a write) is the sign-in's own.
		written := int64(-1)
		for _, login := range []string{"user77", "user78", "user79"} {
			n := walBytes(t, db, func() {
				res := d.Record(ctx, Person{Login: login, Name: "Seven Seven", Email: login + "@x.example"})
				if res != nil {
					t.Fatal(res)
				}
			})
			if written < 0 || n < written {
				written = n
			}
		}
		if written > 64<<10 {
			t.Errorf("a sign-in among %d people wrote %d bytes of WAL", many, written)
		}
		t.Logf("a sign-in among %d people wrote %d bytes of WAL", many, written)
		if n := countPeople(t, db); n != many {
			t.Errorf("%d people, want %d", n, many)
		}
		v := view(t, d)
		v.Prefetch("user1", "user77", "user99999@x.example", "user100000")
		for actor, want := range map[string]string{"user1": "Person 1", "user77": "Seven Seven", "user99999@x.example": "Person 99999", "user100000": "Person 100000"} {
			if got := nameOf(v, actor); got != want {
				t.Errorf("%s: %q, want %q", actor, got, want)
			}
		}
	})
}

// walBytes is how much write-ahead log fn wrote: PostgreSQL's WAL position moved, or the size of
// SQLite's WAL file emptied beforehand.
func walBytes(t *testing.T, db *statedb.DB, fn func()) int64 {
	t.Helper()
	ctx := context.Background()
	if db.Engine() == statedb.Postgres {
		var before, after string
		if err := db.SQL.QueryRowContext(ctx, "SELECT CAST(pg_current_wal_insert_lsn() AS TEXT)").Scan(&before); err != nil {
			t.Fatal(err)
		}
		fn()
		var n int64
		if err := db.SQL.QueryRowContext(ctx, "SELECT CAST(pg_current_wal_insert_lsn() AS TEXT)").Scan(&after); err != nil {
			t.Fatal(err)
		}
		if err := db.SQL.QueryRowContext(ctx, "SELECT CAST(pg_wal_lsn_diff(CAST($1 AS pg_lsn), CAST($2 AS pg_lsn)) AS BIGINT)", after, before).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := db.SQL.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	wal := strings.TrimPrefix(db.String(), string(statedb.SQLite)+" ") + "-wal"
	fi, err := os.Stat(wal)
	if err != nil || fi.Size() != 0 {
		t.Fatalf("the WAL was not emptied: %v %v", fi, err)
	}
	fn()
	fi, err = os.Stat(wal)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestReplicasShareTheDirectoryOnPostgres: two replicas, each with its own connection pool to one
// PostgreSQL, record sign-ins side by side (none is lost) and name each other's people.
func TestReplicasShareTheDirectoryOnPostgres(t *testing.T) {
	url := statedbtest.PostgresURL(t)
	open := func() *statedb.DB {
		db, err := statedb.Open(context.Background(), statedb.Options{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	a, b := New(open(), Options{}), New(open(), Options{})
	ctx := context.Background()
	const each = 40
	var wg sync.WaitGroup
	for i := range each {
		for r, d := range []*Directory{a, b} {
			wg.Go(func() {
				login := fmt.Sprintf("r%d-user%02d", r, i)
				if err := d.Record(ctx, Person{Login: login, Name: "Name of " + login}); err != nil {
					t.Errorf("record %s: %v", login, err)
				}
			})
		}
	}
	wg.Wait()
	for name, d := range map[string]*Directory{"a": a, "b": b} {
		v := view(t, d)
		var logins []string
		for r := range 2 {
			for i := range each {
				logins = append(logins, fmt.Sprintf("r%d-user%02d", r, i))
			}
		}
		v.Prefetch(logins...)
		for _, login := range logins {
			if got := nameOf(v, login); got != "Name of "+login {
				t.Errorf("replica %s names %s %q", name, login, got)
			}
		}
	}
}
