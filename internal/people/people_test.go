package people

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/store"
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

func newBolt(t *testing.T) store.Store {
	t.Helper()
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "portal.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

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

// TestRecordNamesLoginsEmailsAndLocalParts: a sign-in names the person by login, by e-mail
// address and by its local part, in any case; another replica on the same store learns it at its
// next refresh; nothing but login, name, e-mail and time is stored.
func TestRecordNamesLoginsEmailsAndLocalParts(t *testing.T) {
	t.Parallel()
	st := newBolt(t)
	clk := &clock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	a := New(st, Options{Now: clk.Now})
	b := New(st, Options{Now: clk.Now})
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
	// The other replica asked a moment ago: it learns the sign-in after RefreshEvery.
	clk.Advance(DefaultRefreshEvery)
	if got := nameOf(view(t, b), "sales"); got != "Sam Sales" {
		t.Errorf("the other replica names sales %q", got)
	}
	keys, err := st.Keys(context.Background(), "people/")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		raw, _ := st.Get(context.Background(), k)
		for _, secret := range []string{"token", "sub", "secret"} {
			if strings.Contains(strings.ToLower(string(raw)), secret) {
				t.Errorf("%s holds %q: %s", k, secret, raw)
			}
		}
	}
	// A sign-in without a name (or whose name is only the login) teaches nothing.
	if err := a.Record(context.Background(), Person{Login: "anon", Email: "anon@x.example"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Record(context.Background(), Person{Login: "bob", Name: "bob"}); err != nil {
		t.Fatal(err)
	}
	if v := view(t, a); v.Len() != 1 {
		t.Errorf("%d people, want 1", v.Len())
	}
}

// TestAmbiguousLocalPartNamesNobody: two people whose addresses share a local part are named by
// login and address, never by that local part alone; a renamed person shows the new name.
func TestAmbiguousLocalPartNamesNobody(t *testing.T) {
	t.Parallel()
	d := New(newBolt(t), Options{})
	ctx := context.Background()
	for _, p := range []Person{
		{Login: "ann1", Name: "Ann One", Email: "ann@one.example"},
		{Login: "ann2", Name: "Ann Two", Email: "ann@two.example"},
		{Login: "carl", Name: "Carl", Email: "carl@x.example"},
		{Login: "carl", Name: "Carl Carlsson", Email: "carl@x.example"},
	} {
		if err := d.Record(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	v := view(t, d)
	for actor, want := range map[string]string{"ann": "", "ann1": "Ann One", "ann@two.example": "Ann Two", "carl": "Carl Carlsson", "carl@x.example": "Carl Carlsson"} {
		if got := nameOf(v, actor); got != want {
			t.Errorf("%q: %q, want %q", actor, got, want)
		}
	}
	if v.Len() != 3 {
		t.Errorf("%d people, want 3 (a second sign-in replaces the first)", v.Len())
	}
}

// TestBoundedByMaxPeople: past MaxPeople, the people seen longest ago go first; the ones who
// signed in last are all still named.
func TestBoundedByMaxPeople(t *testing.T) {
	t.Parallel()
	st := newBolt(t)
	clk := &clock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	const maxPeople = 64 // 4 a shard
	d := New(st, Options{MaxPeople: maxPeople, Now: clk.Now})
	ctx := context.Background()
	const total = 400
	for i := range total {
		clk.Advance(time.Second)
		if err := d.Record(ctx, Person{Login: fmt.Sprintf("user%03d", i), Name: fmt.Sprintf("User %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	// A fresh replica reads what the store holds.
	v := view(t, New(st, Options{MaxPeople: maxPeople, Now: clk.Now}))
	if v.Len() > maxPeople {
		t.Fatalf("%d people kept, at most %d", v.Len(), maxPeople)
	}
	if v.Len() < maxPeople/2 {
		t.Errorf("only %d people kept of %d allowed", v.Len(), maxPeople)
	}
	if got := nameOf(v, fmt.Sprintf("user%03d", total-1)); got != fmt.Sprintf("User %d", total-1) {
		t.Errorf("the last sign-in is named %q", got)
	}
	if got := nameOf(v, "user000"); got != "" {
		t.Errorf("the first sign-in of %d is still named %q", total, got)
	}
	// One shard's document stays small: no field grows without bound.
	if err := d.Record(ctx, Person{Login: strings.Repeat("l", 5000), Name: strings.Repeat("n", 5000), Email: strings.Repeat("e", 5000)}); err != nil {
		t.Fatal(err)
	}
	keys, _ := st.Keys(ctx, shardKeyPrefix)
	for _, k := range keys {
		raw, _ := st.Get(ctx, k)
		if len(raw) > 4*(maxPeople/numShards)*(3*maxFieldRunes+100) {
			t.Errorf("%s is %d bytes", k, len(raw))
		}
	}
}

// TestExpiresAfterKeepUnlessSignedInAgain: a person not seen for Keep is no longer named (and
// is dropped from the store at the next write of their shard); signing in again refreshes them.
func TestExpiresAfterKeepUnlessSignedInAgain(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	st := newBolt(t)
	const keep = 180 * 24 * time.Hour
	d := New(st, Options{Keep: keep, Now: clk.Now})
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
}

// flakyStore fails every call while down is set.
type flakyStore struct {
	store.Store
	down  atomic.Bool
	reads atomic.Int32
}

var errDown = errors.New("store down")

func (s *flakyStore) Get(ctx context.Context, key string) ([]byte, error) {
	s.reads.Add(1)
	if s.down.Load() {
		return nil, errDown
	}
	return s.Store.Get(ctx, key)
}

func (s *flakyStore) Update(ctx context.Context, key string, ttl time.Duration, fn func([]byte) ([]byte, error)) error {
	if s.down.Load() {
		return errDown
	}
	return s.Store.Update(ctx, key, ttl, fn)
}

// TestStoreDownAnswersFromWhatIsKnown: with the store down, a sign-in's record fails (the caller
// logs it and signs the person in), lookups answer from the projection without an error page,
// and the directory stops asking the store for a few seconds; when the store is back, it learns
// what it missed.
func TestStoreDownAnswersFromWhatIsKnown(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	st := &flakyStore{Store: newBolt(t)}
	d := New(st, Options{Now: clk.Now})
	other := New(st, Options{Now: clk.Now})
	ctx := context.Background()
	if err := d.Record(ctx, Person{Login: "sales", Name: "Sam Sales"}); err != nil {
		t.Fatal(err)
	}
	st.down.Store(true)
	if err := d.Record(ctx, Person{Login: "backoffice", Name: "Bea Backoffice"}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("record with the store down: %v", err)
	}
	clk.Advance(DefaultRefreshEvery)
	v, err := d.View(ctx)
	if err == nil {
		t.Error("a view with the store down reports no error for the log")
	}
	if got := nameOf(v, "sales"); got != "Sam Sales" {
		t.Errorf("with the store down, sales is %q (known before)", got)
	}
	if got := nameOf(v, "backoffice"); got != "" {
		t.Errorf("backoffice is %q", got)
	}
	// A replica that never read the store knows nobody, and fails no page.
	if v, _ := other.View(ctx); nameOf(v, "sales") != "" || v.Len() != 0 {
		t.Errorf("an unread replica knows %d people", v.Len())
	}
	// Within the back-off, pages do not wait for the store again.
	reads := st.reads.Load()
	for range 10 {
		_, _ = d.View(ctx)
	}
	if n := st.reads.Load() - reads; n != 0 {
		t.Errorf("%d store reads within the back-off", n)
	}
	st.down.Store(false)
	clk.Advance(storeDownFor)
	if err := d.Record(ctx, Person{Login: "backoffice", Name: "Bea Backoffice"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(DefaultRefreshEvery)
	if got := nameOf(view(t, other), "backoffice"); got != "Bea Backoffice" {
		t.Errorf("after the store came back, the other replica names backoffice %q", got)
	}
}

// TestNilDirectoryNamesNobody: a portal without a directory (tests, tools) shows actors as written.
func TestNilDirectoryNamesNobody(t *testing.T) {
	t.Parallel()
	var d *Directory
	v, err := d.View(context.Background())
	if err != nil || nameOf(v, "sales") != "" {
		t.Fatalf("nil directory: %v %q", err, nameOf(v, "sales"))
	}
}

// slowStore holds every Get until release is closed.
type slowStore struct {
	store.Store
	entered chan struct{}
	release chan struct{}
}

func (s *slowStore) Get(ctx context.Context, key string) ([]byte, error) {
	select {
	case s.entered <- struct{}{}:
	default:
	}
	<-s.release
	return s.Store.Get(ctx, key)
}

// TestPagesDoNotQueueBehindASlowStore: while one page waits for a slow store, the others answer
// at once from what the replica holds.
func TestPagesDoNotQueueBehindASlowStore(t *testing.T) {
	t.Parallel()
	st := &slowStore{Store: newBolt(t), entered: make(chan struct{}, 1), release: make(chan struct{})}
	d := New(st, Options{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = d.View(context.Background())
	}()
	<-st.entered // the first page is inside the store read
	v, err := d.View(context.Background())
	if err != nil || v == nil || v.Len() != 0 {
		t.Errorf("a second page while the store is slow: %v %v", v, err)
	}
	close(st.release)
	<-done
}

// TestAShardThatStartsAnewIsSeenByTheOtherReplicas: a shard key that expired (or was deleted)
// while the generations stayed gets a generation the other replicas take as new.
func TestAShardThatStartsAnewIsSeenByTheOtherReplicas(t *testing.T) {
	t.Parallel()
	st := newBolt(t)
	clk := &clock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	a, b := New(st, Options{Now: clk.Now}), New(st, Options{Now: clk.Now})
	ctx := context.Background()
	if err := a.Record(ctx, Person{Login: "sales", Name: "Sam Sales"}); err != nil {
		t.Fatal(err)
	}
	if got := nameOf(view(t, b), "sales"); got != "Sam Sales" {
		t.Fatalf("b names sales %q", got)
	}
	if err := st.Delete(ctx, shardKey(shardOf("sales"))); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	if err := a.Record(ctx, Person{Login: "sales", Name: "Samantha Sales"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(DefaultRefreshEvery)
	if got := nameOf(view(t, b), "sales"); got != "Samantha Sales" {
		t.Errorf("after the shard started anew, b names sales %q", got)
	}
}
