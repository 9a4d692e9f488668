// Package people is the portal's directory of the people who signed in to it: for each, the
// display name their identity provider gives (the ID token's name claim, else given and family
// name), under the login the v2 API writes as the audit's actor (preferred_username,
// docs/v2-assumptions.md A7), their e-mail address and its local part. The audit page, the
// back-office worklist and its exports, and the live notices then show "Sam Sales" where the v2
// API wrote "sales".
//
// It is a read model of sign-ins, never a source of truth: a person the portal has not seen sign
// in (or not for Keep) is shown as the v2 API writes them. It keeps no subject, token or secret,
// only what a colleague would see on the page anyway (docs/security.md "The people directory").
//
// Storage: the table people of the state database (internal/statedb; migration 00003), one row a
// person. A sign-in is one upsert of that row; people not seen for Keep are left out of lookups
// and deleted now and then by a sign-in. A page looks up the actors it shows, all at once when it
// knows them (View.Prefetch: one indexed query), else one by one as it renders; answers are kept
// per replica for CacheFor in a bounded cache, so a page's reload asks again only after that. A
// database that fails is left alone for a few seconds; lookups then name nobody (actors are shown
// as the v2 API writes them), never an error.
package people

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cpqportal/portal/internal/statedb"
)

const (
	// downFor is how long the directory stops asking a database that failed.
	downFor = 5 * time.Second
	// maxFieldRunes bounds each recorded field (claims are the provider's, not ours to trust in size).
	maxFieldRunes = 200
	// maxCached bounds the per-replica cache of answers (a few hundred bytes each).
	maxCached = 4096
	// lookupBatch bounds the actors of one query (its IN lists).
	lookupBatch = 100
	// purgeEvery is how often a sign-in deletes the people past Keep.
	purgeEvery = time.Hour
)

// Defaults of Options.
const (
	DefaultKeep     = 180 * 24 * time.Hour
	DefaultCacheFor = 5 * time.Second
	DefaultTimeout  = 2 * time.Second
)

// Options tune the directory; zero values take the defaults.
type Options struct {
	// Keep is how long a person is kept after their last sign-in (default 180 days).
	Keep time.Duration
	// CacheFor is how long a replica reuses an answer (default 5 s): a sign-in on another replica
	// is named here at the latest that long after it.
	CacheFor time.Duration
	// Timeout bounds each database read or write, so a slow database never holds a page or a
	// sign-in up (default 2 s).
	Timeout time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Person is one person as they last signed in.
type Person struct {
	// Login is the OpenID preferred_username: what the v2 API writes as the audit's actor.
	Login string
	// Name is the display name (name claim, else given and family name).
	Name string
	// Email is their e-mail address (its local part is matched too).
	Email string
	// SeenAt is their last sign-in.
	SeenAt time.Time
}

// key is what identifies a person in the directory: the login, else the e-mail address.
func (p Person) key() string {
	if p.Login != "" {
		return strings.ToLower(p.Login)
	}
	return strings.ToLower(p.Email)
}

// Directory records sign-ins and names audit actors.
type Directory struct {
	db   *statedb.DB
	opts Options

	mu        sync.Mutex
	cache     map[string]cached // by lower-cased actor
	downUntil time.Time
	failure   error // the failure View has not reported yet
	purgedAt  time.Time
}

// answer is what the directory says of one actor.
type answer struct {
	name      string
	exact, ok bool
}

type cached struct {
	answer
	at time.Time
}

// New returns the directory kept in db.
func New(db *statedb.DB, opts Options) *Directory {
	if opts.Keep <= 0 {
		opts.Keep = DefaultKeep
	}
	if opts.CacheFor <= 0 {
		opts.CacheFor = DefaultCacheFor
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Directory{db: db, opts: opts, cache: map[string]cached{}}
}

// ErrUnavailable wraps a database failure (lookups then name nobody).
var ErrUnavailable = errors.New("people: directory unavailable")

func (d *Directory) down() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.opts.Now().Before(d.downUntil)
}

// markDown leaves the database alone for a few seconds and keeps err (a lookup's, whose page
// cannot report it) for View to report.
func (d *Directory) markDown(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.downUntil = d.opts.Now().Add(downFor)
	if d.failure == nil && err != nil {
		d.failure = err
	}
}

// clean trims a claim and bounds its length; invalid UTF-8 is replaced.
func clean(s string) string {
	s = strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
	if utf8.RuneCountInString(s) > maxFieldRunes {
		s = string([]rune(s)[:maxFieldRunes])
	}
	return s
}

// Record notes that p signed in just now (SeenAt is set here): one upsert of their row. A person
// without a name, or without both login and e-mail, teaches nothing and is not recorded. The write
// is bounded by Options.Timeout and does not end with ctx (a sign-in that returns meanwhile still
// records).
func (d *Directory) Record(ctx context.Context, p Person) error {
	p = Person{Login: clean(p.Login), Name: clean(p.Name), Email: clean(p.Email)}
	key := p.key()
	if p.Name == "" || key == "" || strings.EqualFold(p.Name, p.Login) {
		return nil
	}
	if d.down() {
		return fmt.Errorf("people: record %q: %w (the database failed a moment ago)", key, ErrUnavailable)
	}
	now := d.opts.Now().UTC()
	email := strings.ToLower(p.Email)
	local, _, _ := strings.Cut(email, "@")
	if !strings.Contains(email, "@") {
		local = ""
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.opts.Timeout)
	defer cancel()
	_, err := d.db.SQL.ExecContext(ctx, `
INSERT INTO people (person_key, login, name, email, email_local, seen_at) VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (person_key) DO UPDATE SET login = excluded.login, name = excluded.name,
    email = excluded.email, email_local = excluded.email_local, seen_at = excluded.seen_at`,
		key, strings.ToLower(p.Login), p.Name, email, local, statedb.Micros(now))
	if err != nil {
		d.markDown(nil) // the caller logs err
		return fmt.Errorf("people: record %q: %w: %w", key, ErrUnavailable, err)
	}
	// This replica names the person at once; the others when their cached answers expire.
	d.mu.Lock()
	for _, k := range []string{key, email, local} {
		delete(d.cache, k)
	}
	purge := now.Sub(d.purgedAt) >= purgeEvery
	if purge {
		d.purgedAt = now
	}
	d.mu.Unlock()
	if purge {
		if _, err := d.db.SQL.ExecContext(ctx, "DELETE FROM people WHERE seen_at < $1", statedb.Micros(now.Add(-d.opts.Keep))); err != nil {
			return fmt.Errorf("people: forgetting the people past keep: %w", err)
		}
	}
	return nil
}

// View returns a lookup of people for one page, bound to its ctx (its lookups end with the
// page). It reads nothing by itself: the page's actors are looked up when it asks
// (View.Prefetch, View.Person). The error is a database failure since the last View, returned
// for the log only, once per failure (lookups meanwhile named nobody). A nil Directory names
// nobody.
func (d *Directory) View(ctx context.Context) (*View, error) {
	if d == nil {
		return &View{}, nil
	}
	d.mu.Lock()
	err := d.failure
	d.failure = nil
	d.mu.Unlock()
	return &View{d: d, ctx: ctx, seen: map[string]answer{}}, err
}

// answers looks actors (lower-cased, trimmed, distinct) up: in the cache, then in the database,
// in one query per lookupBatch actors. A database that fails (or failed a moment ago) names
// nobody.
func (d *Directory) answers(ctx context.Context, actors []string) map[string]answer {
	out := make(map[string]answer, len(actors))
	now := d.opts.Now()
	var missing []string
	d.mu.Lock()
	for _, actor := range actors {
		if c, ok := d.cache[actor]; ok && now.Sub(c.at) < d.opts.CacheFor {
			out[actor] = c.answer
		} else {
			missing = append(missing, actor)
		}
	}
	down := now.Before(d.downUntil)
	d.mu.Unlock()
	if len(missing) == 0 || down {
		return out
	}
	found := map[string]answer{}
	for start := 0; start < len(missing); start += lookupBatch {
		batch := missing[start:min(len(missing), start+lookupBatch)]
		if err := d.lookup(ctx, batch, found); err != nil {
			if ctx.Err() == nil { // a page that went away is no failure of the database
				d.markDown(err)
			}
			return out
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.cache)+len(missing) > maxCached {
		for k, c := range d.cache {
			if now.Sub(c.at) >= d.opts.CacheFor {
				delete(d.cache, k)
			}
		}
		if len(d.cache)+len(missing) > maxCached {
			clear(d.cache)
		}
	}
	for _, actor := range missing {
		out[actor] = found[actor]
		d.cache[actor] = cached{answer: found[actor], at: now}
	}
	return out
}

// lookup reads the people named by actors, by login or address (exact) or by the address's
// local part (weak), and puts their answers into found. A local part two people with different
// names share names nobody: naming either would be a guess.
func (d *Directory) lookup(ctx context.Context, actors []string, found map[string]answer) error {
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	args := []any{statedb.Micros(d.opts.Now().Add(-d.opts.Keep))}
	marks := make([]string, len(actors))
	for i, actor := range actors {
		args = append(args, actor)
		marks[i] = "$" + strconv.Itoa(i+2)
	}
	in := "(" + strings.Join(marks, ", ") + ")"
	// Three arms, so each engine uses one index per arm (the key, the address, the local part).
	const cols = "SELECT person_key, email, email_local, name, seen_at FROM people WHERE seen_at >= $1 AND "
	rows, err := d.db.SQL.QueryContext(ctx, cols+"person_key IN "+in+
		" UNION ALL "+cols+"email IN "+in+
		" UNION ALL "+cols+"email_local IN "+in, args...)
	if err != nil {
		return fmt.Errorf("people: lookup: %w: %w", ErrUnavailable, err)
	}
	defer rows.Close()
	type best struct {
		name   string
		seenAt int64
		names  map[string]bool // weak matches: the distinct names
	}
	exact, weak := map[string]*best{}, map[string]*best{}
	note := func(m map[string]*best, k, name string, seenAt int64) {
		if k == "" {
			return
		}
		b := m[k]
		if b == nil {
			b = &best{names: map[string]bool{}}
			m[k] = b
		}
		b.names[name] = true
		if b.name == "" || seenAt > b.seenAt {
			b.name, b.seenAt = name, seenAt
		}
	}
	for rows.Next() {
		var key, email, local, name string
		var seenAt int64
		if err := rows.Scan(&key, &email, &local, &name, &seenAt); err != nil {
			return fmt.Errorf("people: lookup: %w: %w", ErrUnavailable, err)
		}
		note(exact, key, name, seenAt)
		note(exact, email, name, seenAt)
		note(weak, local, name, seenAt)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("people: lookup: %w: %w", ErrUnavailable, err)
	}
	for _, actor := range actors {
		if b := exact[actor]; b != nil {
			found[actor] = answer{name: b.name, exact: true, ok: true}
		} else if b := weak[actor]; b != nil && len(b.names) == 1 {
			found[actor] = answer{name: b.name, ok: true}
		}
	}
	return nil
}

// View looks people up for one page, by login, e-mail address and the e-mail's local part. It
// keeps the page's context: its lookups run while the page renders (auditwords.Directory has no
// context of its own) and end with the page.
type View struct {
	d   *Directory
	ctx context.Context

	mu   sync.Mutex
	seen map[string]answer // this page's answers
}

func normalize(actor string) string { return strings.ToLower(strings.TrimSpace(actor)) }

// Prefetch looks up at once the actors the page is about to name (one query for those the
// replica has no fresh answer for), so Person answers them without a query of its own.
func (v *View) Prefetch(actors ...string) {
	if v == nil || v.d == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	var ask []string
	for _, actor := range actors {
		actor = normalize(actor)
		if _, ok := v.seen[actor]; ok || actor == "" {
			continue
		}
		v.seen[actor] = answer{} // also dedupes ask; replaced below
		ask = append(ask, actor)
	}
	if len(ask) == 0 {
		return
	}
	// An actor a failed lookup left out stays unnamed on this page; the next page asks again.
	for actor, a := range v.d.answers(v.ctx, ask) {
		v.seen[actor] = a
	}
}

// Person returns the name of the person who signs in as actor (a login or e-mail address, any
// case). exact is false when only an e-mail address's local part matched: a weaker match, which
// a name the caller knows more surely (a customer's owner with that address) should win over.
func (v *View) Person(actor string) (name string, exact, ok bool) {
	if v == nil || v.d == nil {
		return "", false, false
	}
	actor = normalize(actor)
	if actor == "" {
		return "", false, false
	}
	v.Prefetch(actor)
	v.mu.Lock()
	a := v.seen[actor]
	v.mu.Unlock()
	return a.name, a.exact, a.ok
}
