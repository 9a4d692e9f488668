package customercache

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/textfold"
	"github.com/cpqportal/portal/internal/v2sim"
)

// The cache is tested against the real client and the in-process simulator (the only test double,
// at the v2 boundary); what it sent is read back from the simulator's request log.

type fixture struct {
	sim    *v2sim.Server
	api    *apiclient.Client
	clock  *fakeClock
	cache  *Cache
	server *httptest.Server
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newFixture(t testing.TB, customers int, opts Options) *fixture {
	t.Helper()
	sim := v2sim.New(v2sim.Options{Customers: customers, Seed: 7})
	server := httptest.NewServer(sim)
	t.Cleanup(func() { server.Close(); _ = sim.Close() })
	api, err := apiclient.New(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	return &fixture{sim: sim, api: api, clock: clock, cache: New(api.Customers, opts), server: server}
}

// userCtx is a request context carrying the user's token.
func userCtx(user string) context.Context {
	return apiclient.WithToken(context.Background(), "token-of-"+user)
}

// listRequests are the simulator's recorded GET /v2/customer/ requests, once at least want are
// there (the simulator records a request after it has answered it, so the record may lag).
func (f *fixture) listRequests(want int) []v2sim.RecordedRequest {
	deadline := time.Now().Add(5 * time.Second)
	for {
		var out []v2sim.RecordedRequest
		for _, r := range f.sim.Requests() {
			if r.Method == http.MethodGet && r.EscapedPath == "/v2/customer/" {
				out = append(out, r)
			}
		}
		if len(out) >= want || time.Now().After(deadline) {
			return out
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestGetFetchesOnceThenServesFromMemory(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 40, Options{TTL: time.Minute})
	first, err := f.cache.Get(userCtx("ann"), "ann")
	if err != nil {
		t.Fatal(err)
	}
	if first.Len() != 40 {
		t.Fatalf("snapshot has %d customers, want 40", first.Len())
	}
	f.clock.Advance(59 * time.Second)
	second, err := f.cache.Get(userCtx("ann"), "ann")
	if err != nil {
		t.Fatal(err)
	}
	if second != first {
		t.Error("a Get within the TTL returned a different snapshot")
	}
	if got := len(f.listRequests(1)); got != 1 {
		t.Errorf("the list was requested %d times, want 1", got)
	}
	if s := f.cache.Stats(); s.Hits != 1 || s.Fetches != 1 {
		t.Errorf("stats %+v, want 1 hit and 1 fetch", s)
	}
}

func TestConcurrentGetsShareOneFetch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30, Options{TTL: time.Minute})
	// The list answers slowly, so the requests below overlap the fetch.
	f.sim.SetFault(apiclient.EndpointCustomerList, v2sim.Fault{Delay: 300 * time.Millisecond})
	const n = 20
	snaps := make([]*Snapshot, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { snaps[i], errs[i] = f.cache.Get(userCtx("ann"), "ann") })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Get %d: %v", i, errs[i])
		}
		if snaps[i] != snaps[0] {
			t.Fatalf("Get %d returned another snapshot", i)
		}
	}
	if got := len(f.listRequests(1)); got != 1 {
		t.Errorf("%d concurrent Gets made %d list requests, want 1", n, got)
	}
}

func TestCancelledWaiterDoesNotCancelTheFetch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 10, Options{TTL: time.Minute})
	f.sim.SetFault(apiclient.EndpointCustomerList, v2sim.Fault{Delay: 300 * time.Millisecond, Times: 1})
	// The user gives up at once (typed on): their request ends, the fetch it started does not.
	ctx, cancel := context.WithCancel(userCtx("ann"))
	cancel()
	if _, err := f.cache.Get(ctx, "ann"); !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled Get returned %v, want context.Canceled", err)
	}
	snap, err := f.cache.Get(userCtx("ann"), "ann")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Len() != 10 {
		t.Errorf("snapshot has %d customers, want 10", snap.Len())
	}
	if got := len(f.listRequests(1)); got != 1 {
		t.Errorf("the list was requested %d times, want 1 (the first fetch went on)", got)
	}
}

func TestExpiredListIsRevalidatedWithETag(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 20, Options{TTL: 30 * time.Second})
	first, err := f.cache.Get(userCtx("ann"), "ann")
	if err != nil {
		t.Fatal(err)
	}
	if first.ETag() == "" {
		t.Fatal("the snapshot has no ETag")
	}
	f.clock.Advance(31 * time.Second)
	second, err := f.cache.Get(userCtx("ann"), "ann")
	if err != nil {
		t.Fatal(err)
	}
	if second != first {
		t.Error("a 304 answer did not keep the snapshot")
	}
	reqs := f.listRequests(2)
	if len(reqs) != 2 {
		t.Fatalf("%d list requests, want 2", len(reqs))
	}
	if got := reqs[1].Header.Get("If-None-Match"); got != first.ETag() {
		t.Errorf("revalidation sent If-None-Match %q, want %q", got, first.ETag())
	}
	if reqs[1].Status != http.StatusNotModified {
		t.Errorf("revalidation answered %d, want 304", reqs[1].Status)
	}

	// Someone changes a customer: after the TTL the list is downloaded again.
	changed, err := f.api.Customers.Update(userCtx("other"), apiclient.CustomerUpdate{ID: 3, Name: "Renamed Elsewhere S.r.l."})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(31 * time.Second)
	third, err := f.cache.Get(userCtx("ann"), "ann")
	if err != nil {
		t.Fatal(err)
	}
	if third == first || third.ETag() == first.ETag() {
		t.Fatal("a changed list was not downloaded again")
	}
	if row, _ := third.Lookup(3); row.Name != changed.Name {
		t.Errorf("customer 3 is %q, want %q", row.Name, changed.Name)
	}
	if s := f.cache.Stats(); s.Fetches != 2 || s.NotModified != 1 {
		t.Errorf("stats %+v, want 2 fetches and 1 not-modified", s)
	}
}

func TestZeroTTLRevalidatesEveryTime(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 5, Options{TTL: 0})
	for range 3 {
		if _, err := f.cache.Get(userCtx("ann"), "ann"); err != nil {
			t.Fatal(err)
		}
	}
	reqs := f.listRequests(3)
	if len(reqs) != 3 {
		t.Fatalf("%d list requests, want 3", len(reqs))
	}
	if reqs[2].Status != http.StatusNotModified {
		t.Errorf("the third request answered %d, want 304", reqs[2].Status)
	}
}

func TestUsersAreIsolated(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 12, Options{TTL: time.Minute})
	ann, err := f.cache.Get(userCtx("ann"), "ann")
	if err != nil {
		t.Fatal(err)
	}
	bob, err := f.cache.Get(userCtx("bob"), "bob")
	if err != nil {
		t.Fatal(err)
	}
	if ann == bob {
		t.Fatal("two users share one snapshot")
	}
	reqs := f.listRequests(2)
	if len(reqs) != 2 {
		t.Fatalf("%d list requests, want one per user (2)", len(reqs))
	}
	if a, b := reqs[0].Header.Get("Authorization"), reqs[1].Header.Get("Authorization"); a != "Bearer token-of-ann" || b != "Bearer token-of-bob" {
		t.Errorf("the fetches carried %q and %q, want each user's own token", a, b)
	}
	// Ann's change shows in Ann's list only.
	f.cache.Upsert("ann", &apiclient.Customer{ID: 999, Name: "Only Ann Sees This", TaxID: "IT99999999999"})
	annAfter, _ := f.cache.Peek("ann")
	bobAfter, _ := f.cache.Peek("bob")
	if _, ok := annAfter.Lookup(999); !ok {
		t.Error("Ann's upsert is not in Ann's list")
	}
	if _, ok := bobAfter.Lookup(999); ok {
		t.Error("Ann's upsert leaked into Bob's list")
	}
}

func TestLeastRecentlyUsedUserIsDropped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 5, Options{TTL: time.Minute, MaxUsers: 2})
	for _, u := range []string{"ann", "bob", "ann", "cid"} {
		if _, err := f.cache.Get(userCtx(u), u); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := f.cache.Peek("bob"); ok {
		t.Error("bob (least recently used) is still cached")
	}
	if _, ok := f.cache.Peek("ann"); !ok {
		t.Error("ann (recently used) was dropped")
	}
	if got := f.cache.Stats().Users; got != 2 {
		t.Errorf("%d users cached, want 2", got)
	}
}

func TestInvalidateRevalidatesAndUpsertShowsChangeAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 8, Options{TTL: time.Hour})
	if _, err := f.cache.Get(userCtx("ann"), "ann"); err != nil {
		t.Fatal(err)
	}
	// The user creates a customer: the answer goes into their list with no new download.
	created, err := f.api.Customers.Create(userCtx("ann"), apiclient.CustomerInput{Name: "Zeta Nuova S.r.l.", TaxID: "IT12345678901", Segment: "BUSINESS"})
	if err != nil {
		t.Fatal(err)
	}
	f.cache.Upsert("ann", created)
	snap, err := f.cache.Get(userCtx("ann"), "ann")
	if err != nil {
		t.Fatal(err)
	}
	res := snap.Search(Query{Text: "zeta nuova", Limit: 10})
	if res.Total != 1 || res.Rows[0].ID != created.ID || res.Rows[0].TaxID != "IT12345678901" {
		t.Fatalf("search after upsert: %+v", res)
	}
	if got := len(f.listRequests(1)); got != 1 {
		t.Errorf("upsert caused %d list requests, want 1 (the first)", got)
	}
	// Invalidate: the next Get asks the v2 API (with the ETag) although the TTL has not passed.
	f.cache.Invalidate("ann")
	if _, err := f.cache.Get(userCtx("ann"), "ann"); err != nil {
		t.Fatal(err)
	}
	reqs := f.listRequests(2)
	if len(reqs) != 2 || reqs[1].Header.Get("If-None-Match") == "" {
		t.Fatalf("after Invalidate: %d list requests (want 2, the second with If-None-Match)", len(reqs))
	}
	snap, _ = f.cache.Get(userCtx("ann"), "ann")
	if _, ok := snap.Lookup(created.ID); !ok {
		t.Error("the created customer is missing after revalidation")
	}
}

func TestFailedFetchIsReportedAndRetried(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 5, Options{TTL: time.Minute})
	f.sim.SetFault(apiclient.EndpointCustomerList, v2sim.Fault{Status: http.StatusServiceUnavailable, Times: 1})
	_, err := f.cache.Get(userCtx("ann"), "ann")
	if !errors.Is(err, apiclient.ErrServer) {
		t.Fatalf("Get during an outage: %v, want ErrServer", err)
	}
	snap, err := f.cache.Get(userCtx("ann"), "ann")
	if err != nil {
		t.Fatalf("Get after the outage: %v", err)
	}
	if snap.Len() != 5 {
		t.Errorf("%d customers, want 5", snap.Len())
	}
}

func TestFetchTimeoutBoundsAHangingList(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 5, Options{TTL: time.Minute, FetchTimeout: 200 * time.Millisecond})
	f.sim.SetFault(apiclient.EndpointCustomerList, v2sim.Fault{Hang: true})
	_, err := f.cache.Get(userCtx("ann"), "ann")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get of a hanging list: %v, want context.DeadlineExceeded", err)
	}
}

func TestSearchSortAndPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 200, Options{TTL: time.Minute})
	snap, err := f.cache.Get(userCtx("ann"), "ann")
	if err != nil {
		t.Fatal(err)
	}
	all, _, _, err := f.api.Customers.List(userCtx("ann"), "")
	if err != nil {
		t.Fatal(err)
	}
	// Pick a word from a real name and count the expected matches the slow way.
	word := strings.ToLower(strings.Fields(all[17].Name)[0])
	// Name, tax id, e-mail, city and owners, without case, accents or full stops (fold.go).
	want := 0
	for _, c := range all {
		fields := []string{c.Name, c.TaxID, c.Email, c.Address.City}
		for _, o := range c.Owners {
			fields = append(fields, o.Name)
		}
		if slices.ContainsFunc(fields, func(f string) bool {
			return strings.Contains(strings.ToLower(f), word) || strings.Contains(textfold.Fold(f), textfold.Fold(word))
		}) {
			want++
		}
	}
	res := snap.Search(Query{Text: "  " + strings.ToUpper(word) + " ", Sort: SortByName, Limit: 1000})
	if res.Total != want || len(res.Rows) != want {
		t.Fatalf("search %q: total %d rows %d, want %d", word, res.Total, len(res.Rows), want)
	}
	for i := 1; i < len(res.Rows); i++ {
		if strings.ToLower(res.Rows[i-1].Name) > strings.ToLower(res.Rows[i].Name) {
			t.Fatalf("rows not in name order: %q before %q", res.Rows[i-1].Name, res.Rows[i].Name)
		}
	}

	// Two words must both match; a tax id matches case-insensitively.
	target := all[42]
	res = snap.Search(Query{Text: strings.ToLower(target.TaxID) + " " + strings.Fields(target.Name)[0], Limit: 5})
	if res.Total != 1 || res.Rows[0].ID != target.ID {
		t.Errorf("search by tax id and name found %+v, want customer %d", res, target.ID)
	}

	// Pages of the id order, descending, cover everything once.
	seen := map[int32]bool{}
	for offset := 0; offset < 200; offset += 25 {
		page := snap.Search(Query{Sort: SortByID, Desc: true, Offset: offset, Limit: 25})
		if page.Total != 200 || len(page.Rows) != 25 {
			t.Fatalf("page at %d: total %d, %d rows", offset, page.Total, len(page.Rows))
		}
		for _, r := range page.Rows {
			if seen[r.ID] {
				t.Fatalf("customer %d on two pages", r.ID)
			}
			seen[r.ID] = true
		}
	}
	if first := snap.Search(Query{Sort: SortByID, Desc: true, Limit: 1}); first.Rows[0].ID != 200 {
		t.Errorf("descending id order starts with %d, want 200", first.Rows[0].ID)
	}
	// Updated order.
	upd := snap.Search(Query{Sort: SortByUpdated, Limit: 200})
	for i := 1; i < len(upd.Rows); i++ {
		if upd.Rows[i-1].UpdatedAt.After(upd.Rows[i].UpdatedAt) {
			t.Fatal("rows not in updated order")
		}
	}
	// A row carries what the list shows.
	row, ok := snap.Lookup(target.ID)
	if !ok || row.Name != target.Name || row.TaxID != target.TaxID || row.Email != target.Email ||
		row.City != target.Address.City || row.Segment != target.Segment || len(row.CPQIDs) != len(target.CPQIDs) ||
		!row.UpdatedAt.Equal(target.UpdatedAt.Truncate(time.Second)) {
		t.Errorf("row %+v does not match the customer %+v", row, target)
	}
	if len(target.Owners) > 0 && !strings.Contains(row.Owners, target.Owners[0].Name) {
		t.Errorf("row owners %q lack %q", row.Owners, target.Owners[0].Name)
	}
}

func TestDuplicatesAndKnownOwners(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 50, Options{TTL: time.Minute})
	snap, err := f.cache.Get(userCtx("ann"), "ann")
	if err != nil {
		t.Fatal(err)
	}
	target, _ := snap.Lookup(9)
	dups := snap.Duplicates("  "+strings.ToUpper(target.Name)+" ", "", 0, 5)
	if len(dups) == 0 || dups[0].ID != 9 {
		t.Errorf("duplicates by name: %+v", dups)
	}
	dups = snap.Duplicates("", strings.ToLower(target.TaxID), 0, 5)
	if len(dups) != 1 || dups[0].ID != 9 {
		t.Errorf("duplicates by tax id: %+v", dups)
	}
	if dups := snap.Duplicates(target.Name, target.TaxID, 9, 5); len(dups) != 0 && dups[0].ID == 9 {
		t.Error("the excepted customer was reported as its own duplicate")
	}
	if dups := snap.Duplicates("No Such Company Anywhere", "XX00000000", 0, 5); len(dups) != 0 {
		t.Errorf("unexpected duplicates %+v", dups)
	}
	owners := snap.Owners()
	if len(owners) == 0 {
		t.Fatal("no known owners")
	}
	for _, o := range owners {
		if o.ID < 1001 || o.ID > 1010 || o.Name == "" {
			t.Errorf("unexpected owner %+v (the simulator seeds 1001 to 1010)", o)
		}
	}
}

func TestParseSortKey(t *testing.T) {
	t.Parallel()
	for k := range numSortKeys {
		got, ok := ParseSortKey(k.String())
		if !ok || got != k {
			t.Errorf("ParseSortKey(%q) = %v, %v", k.String(), got, ok)
		}
	}
	if _, ok := ParseSortKey("password"); ok {
		t.Error("an unknown sort key was accepted")
	}
}

func TestADownloadedListReleasesTheDecodesMemory(t *testing.T) {
	released := make(chan struct{})
	f := newFixture(t, 300, Options{TTL: time.Minute, ReleaseMemory: func() { released <- struct{}{} }})
	waitRelease := func(why string) {
		t.Helper()
		select {
		case <-released:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no memory release", why)
		}
		deadline := time.Now().Add(10 * time.Second)
		for f.cache.releasing.Load() || f.cache.releaseWanted.Load() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: a release is still pending", why)
			}
			time.Sleep(time.Millisecond)
		}
	}

	if _, err := f.cache.Get(userCtx("anna"), "anna"); err != nil {
		t.Fatal(err)
	}
	waitRelease("first download")

	// A revalidation answered 304 decodes nothing: nothing to release. The release is asked for
	// before the waiters are answered, so it would show by now.
	f.clock.Advance(2 * time.Minute)
	if _, err := f.cache.Get(userCtx("anna"), "anna"); err != nil {
		t.Fatal(err)
	}
	if s := f.cache.Stats(); s.NotModified != 1 || s.Fetches != 1 {
		t.Fatalf("stats %+v, want one download and one 304", s)
	}
	if f.cache.releasing.Load() || f.cache.releaseWanted.Load() {
		t.Fatal("a list revalidated with 304 asked for a memory release")
	}

	if _, err := f.cache.Get(userCtx("bruno"), "bruno"); err != nil {
		t.Fatal(err)
	}
	waitRelease("second user's download")
}

func TestReleasesAskedForMeanwhileAreCoalesced(t *testing.T) {
	running := make(chan struct{})
	proceed := make(chan struct{})
	var runs atomic.Int32
	c := New(nil, Options{ReleaseMemory: func() {
		if runs.Add(1) == 1 {
			running <- struct{}{}
			<-proceed
		}
	}})
	c.releaseMemory()
	<-running // the first release is running
	for range 10 {
		c.releaseMemory() // asked for meanwhile: one more run, not ten
	}
	close(proceed)
	deadline := time.Now().Add(10 * time.Second)
	for c.releasing.Load() || c.releaseWanted.Load() {
		if time.Now().After(deadline) {
			t.Fatal("releases did not finish")
		}
		time.Sleep(time.Millisecond)
	}
	if got := runs.Load(); got != 2 {
		t.Fatalf("%d releases ran, want 2 (the running one and one for the ten asked meanwhile)", got)
	}
}
