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
// Storage: the portal's store (internal/store: the bbolt file with one replica, Redis with
// several), in numShards keys ("people/shard/NN", a JSON document of its people) plus one small
// key of shard generations ("people/gen"), as internal/workindex does. Each replica keeps an
// in-memory projection; a page asks for the generations at most once per RefreshEvery (one small
// read) and reloads only the shards another replica changed. A sign-in is one atomic Update of
// its shard. Bounds: at most MaxPeople people (the ones seen longest ago go first) and Keep
// after their last sign-in. A store that fails is left alone for a few seconds; lookups then
// answer from what the projection holds (possibly nothing), never an error.
package people

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cpqportal/portal/internal/store"
)

// numShards is how many store keys hold the people: 16 keeps a shard of 10,000 people near 625
// (about 60 KB of JSON), so a sign-in rewrites little.
const numShards = 16

const (
	shardKeyPrefix = "people/shard/"
	genKey         = "people/gen"
	// storeDownFor is how long the directory stops asking a store that failed.
	storeDownFor = 5 * time.Second
	// maxFieldRunes bounds each recorded field (claims are the provider's, not ours to trust in size).
	maxFieldRunes = 200
)

// Defaults of Options.
const (
	DefaultMaxPeople    = 10_000
	DefaultKeep         = 180 * 24 * time.Hour
	DefaultRefreshEvery = 5 * time.Second
	DefaultTimeout      = 2 * time.Second
)

// Options tune the directory; zero values take the defaults.
type Options struct {
	// MaxPeople bounds the people kept (default 10,000); those seen longest ago go first.
	MaxPeople int
	// Keep is how long a person is kept after their last sign-in (default 180 days).
	Keep time.Duration
	// RefreshEvery is how often a lookup asks the store whether other replicas wrote (default 5 s).
	RefreshEvery time.Duration
	// Timeout bounds each store read or write, so a slow store never holds a page or a sign-in
	// up (default 2 s).
	Timeout time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Person is one person as they last signed in.
type Person struct {
	// Login is the OpenID preferred_username: what the v2 API writes as the audit's actor.
	Login string `json:"l,omitempty"`
	// Name is the display name (name claim, else given and family name).
	Name string `json:"n"`
	// Email is their e-mail address (its local part is matched too).
	Email string `json:"e,omitempty"`
	// SeenAt is their last sign-in.
	SeenAt time.Time `json:"s"`
}

// key is what identifies a person in the directory: the login, else the e-mail address.
func (p Person) key() string {
	if p.Login != "" {
		return strings.ToLower(p.Login)
	}
	return strings.ToLower(p.Email)
}

// shardDoc is one shard as stored.
type shardDoc struct {
	Gen    uint64   `json:"gen"`
	People []Person `json:"people"`
}

// Directory records sign-ins and names audit actors.
type Directory struct {
	store store.Store
	opts  Options

	refreshMu sync.Mutex // one refresh at a time
	mu        sync.Mutex
	shards    [numShards][]Person
	gens      [numShards]uint64
	checked   time.Time
	loaded    bool
	downUntil time.Time
	// view is the lookup index of all shards, rebuilt when a shard changes and swapped whole, so a
	// page's lookups read it without locks.
	view atomic.Pointer[View]
}

// New returns the directory kept in st.
func New(st store.Store, opts Options) *Directory {
	if opts.MaxPeople <= 0 {
		opts.MaxPeople = DefaultMaxPeople
	}
	if opts.Keep <= 0 {
		opts.Keep = DefaultKeep
	}
	if opts.RefreshEvery <= 0 {
		opts.RefreshEvery = DefaultRefreshEvery
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	d := &Directory{store: st, opts: opts}
	d.view.Store(&View{})
	return d
}

// perShard is the people limit of one shard.
func (d *Directory) perShard() int { return max(1, d.opts.MaxPeople/numShards) }

func shardOf(key string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum32() % numShards)
}

func shardKey(n int) string { return fmt.Sprintf("%s%02d", shardKeyPrefix, n) }

// ErrUnavailable wraps a store failure (the directory then answers from its projection).
var ErrUnavailable = errors.New("people: directory unavailable")

func (d *Directory) storeDown() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.opts.Now().Before(d.downUntil)
}

func (d *Directory) markDown() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.downUntil = d.opts.Now().Add(storeDownFor)
}

// clean trims a claim and bounds its length; invalid UTF-8 is replaced.
func clean(s string) string {
	s = strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
	if utf8.RuneCountInString(s) > maxFieldRunes {
		s = string([]rune(s)[:maxFieldRunes])
	}
	return s
}

// Record notes that p signed in just now (SeenAt is set here). A person without a name, or
// without both login and e-mail, teaches nothing and is not recorded. The write is bounded by
// Options.Timeout and does not end with ctx (a sign-in that returns meanwhile still records).
func (d *Directory) Record(ctx context.Context, p Person) error {
	p = Person{Login: clean(p.Login), Name: clean(p.Name), Email: clean(p.Email)}
	if p.Name == "" || p.key() == "" || strings.EqualFold(p.Name, p.Login) {
		return nil
	}
	if d.storeDown() {
		return fmt.Errorf("people: record %q: %w (the store failed a moment ago)", p.key(), ErrUnavailable)
	}
	now := d.opts.Now().UTC()
	p.SeenAt = now
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.opts.Timeout)
	defer cancel()
	n := shardOf(p.key())
	var written *shardDoc
	err := d.store.Update(ctx, shardKey(n), d.opts.Keep, func(old []byte) ([]byte, error) {
		doc := &shardDoc{}
		if old != nil {
			if err := json.Unmarshal(old, doc); err != nil {
				doc = &shardDoc{} // a damaged shard starts anew rather than blocking every sign-in
			}
		}
		doc.People = slices.DeleteFunc(doc.People, func(q Person) bool {
			return q.key() == p.key() || now.Sub(q.SeenAt) > d.opts.Keep
		})
		doc.People = append(doc.People, p)
		if over := len(doc.People) - d.perShard(); over > 0 {
			slices.SortStableFunc(doc.People, func(a, b Person) int { return a.SeenAt.Compare(b.SeenAt) })
			doc.People = slices.Delete(doc.People, 0, over)
		}
		// Generations grow with the clock as well, so a shard that expired or was damaged and
		// starts anew still gets a generation above the one the other replicas last read.
		doc.Gen = max(doc.Gen+1, uint64(now.UnixNano()))
		written = doc
		return json.Marshal(doc)
	})
	if err != nil {
		d.markDown()
		return fmt.Errorf("people: record %q: %w: %w", p.key(), ErrUnavailable, err)
	}
	gen := written.Gen
	if err := d.generations().Raise(ctx, n, gen); err != nil {
		// The shard is written; other replicas see it at the next sign-in of that shard.
		d.install(n, written)
		return fmt.Errorf("people: record generations: %w", err)
	}
	d.install(n, written)
	return nil
}

// generations is the vector of the shards' generations (store.Generations), kept as long as
// the people.
func (d *Directory) generations() store.Generations {
	return store.Generations{Store: d.store, Key: genKey, Shards: numShards, TTL: d.opts.Keep}
}

// install replaces shard n of the projection with doc, unless the projection holds a newer
// generation, and rebuilds the view.
func (d *Directory) install(n int, doc *shardDoc) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if doc.Gen < d.gens[n] {
		return
	}
	d.shards[n], d.gens[n] = doc.People, doc.Gen
	d.rebuildLocked()
}

// rebuildLocked makes the view of every shard (d.mu held).
func (d *Directory) rebuildLocked() {
	v := &View{byKey: map[string]entry{}, byLocal: map[string]entry{}}
	ambiguous := map[string]bool{}
	put := func(m map[string]entry, k string, p Person) {
		if old, ok := m[k]; !ok || old.seenAt.Before(p.SeenAt) {
			m[k] = entry{name: p.Name, seenAt: p.SeenAt}
		}
	}
	for _, shard := range d.shards {
		for _, p := range shard {
			if p.Login != "" {
				put(v.byKey, strings.ToLower(p.Login), p)
			}
			email := strings.ToLower(p.Email)
			if email == "" {
				continue
			}
			put(v.byKey, email, p)
			if local, _, ok := strings.Cut(email, "@"); ok && local != "" {
				if old, seen := v.byLocal[local]; seen && old.name != p.Name {
					ambiguous[local] = true
				}
				put(v.byLocal, local, p)
			}
		}
		v.people += len(shard)
	}
	for local := range ambiguous {
		delete(v.byLocal, local) // two people share it: naming either would be a guess
	}
	d.view.Store(v)
}

// refresh brings the projection up to date with the store: the generations first, then only
// the shards another replica changed, at most once per RefreshEvery.
func (d *Directory) refresh(ctx context.Context) error {
	// A page never waits for another page's refresh (a slow store would hold them all): it
	// answers from the view as it is.
	if !d.refreshMu.TryLock() {
		return nil
	}
	defer d.refreshMu.Unlock()
	now := d.opts.Now()
	d.mu.Lock()
	fresh := d.loaded && now.Sub(d.checked) < d.opts.RefreshEvery
	d.mu.Unlock()
	if fresh {
		return nil
	}
	if d.storeDown() {
		return nil // the failure a moment ago was reported; the projection answers until then
	}
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	gens, err := d.generations().Read(ctx)
	if err != nil {
		d.markDown()
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	var docs [numShards]*shardDoc
	var failed error
	for n := range numShards {
		d.mu.Lock()
		have := d.gens[n]
		d.mu.Unlock()
		if gens[n] == 0 || gens[n] <= have {
			continue
		}
		raw, err := d.store.Get(ctx, shardKey(n))
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			d.markDown()
			failed = fmt.Errorf("%w: %w", ErrUnavailable, err)
			break
		}
		doc := &shardDoc{}
		if json.Unmarshal(raw, doc) != nil {
			continue
		}
		docs[n] = doc
	}
	// The shards read so far are installed at once, and the view is rebuilt once.
	d.mu.Lock()
	defer d.mu.Unlock()
	changed := false
	for n, doc := range docs {
		if doc != nil && doc.Gen >= d.gens[n] {
			d.shards[n], d.gens[n] = doc.People, doc.Gen
			changed = true
		}
	}
	if changed {
		d.rebuildLocked()
	}
	if failed != nil {
		return failed
	}
	d.loaded, d.checked = true, now
	return nil
}

// View returns the people as this replica knows them, after asking the store whether other
// replicas recorded sign-ins (at most once per RefreshEvery): one small read per page at most,
// none for its rows. A store that fails leaves the view as it was (possibly empty); the error
// is returned for the log only, once per failure (the directory then leaves the store alone for
// a few seconds and answers from the projection without an error). A nil Directory has an empty
// view.
func (d *Directory) View(ctx context.Context) (*View, error) {
	if d == nil {
		return &View{}, nil
	}
	err := d.refresh(ctx)
	v := d.view.Load()
	return v.since(d.opts.Now().Add(-d.opts.Keep)), err
}

// View is an immutable lookup of people by login, e-mail address and the e-mail's local part.
type View struct {
	byKey   map[string]entry // lower-cased login or e-mail address
	byLocal map[string]entry // lower-cased local part (only when one name has it)
	people  int
	// cutoff: people last seen before it are past Keep (the store forgets them at the next write
	// of their shard; the view stops naming them at once).
	cutoff time.Time
}

type entry struct {
	name   string
	seenAt time.Time
}

// since is v with people seen before cutoff left out of lookups.
func (v *View) since(cutoff time.Time) *View {
	out := *v
	out.cutoff = cutoff
	return &out
}

// Len is how many people the view holds (those past Keep included until their shard is written).
func (v *View) Len() int {
	if v == nil {
		return 0
	}
	return v.people
}

// Person returns the name of the person who signs in as actor (a login or e-mail address, any
// case). exact is false when only an e-mail address's local part matched: a weaker match, which
// a name the caller knows more surely (a customer's owner with that address) should win over.
func (v *View) Person(actor string) (name string, exact, ok bool) {
	if v == nil {
		return "", false, false
	}
	actor = strings.ToLower(strings.TrimSpace(actor))
	if actor == "" {
		return "", false, false
	}
	if e, ok := v.byKey[actor]; ok && !e.seenAt.Before(v.cutoff) {
		return e.name, true, true
	}
	if e, ok := v.byLocal[actor]; ok && !e.seenAt.Before(v.cutoff) {
		return e.name, false, true
	}
	return "", false, false
}
