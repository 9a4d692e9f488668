package workindex

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/store"
)

func openStore(t testing.TB) store.Store {
	t.Helper()
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "portal.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// clock is a settable clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newIndex(t testing.TB, st store.Store, c *clock) *Index {
	return New(st, Options{Now: c.now, RefreshEvery: time.Nanosecond})
}

func TestStageOfContract(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		facts ContractFacts
		want  Stage
	}{
		{"generated: status GENERATED, no request", ContractFacts{Status: "GENERATED"}, StageGenerated},
		{"out for signature: a SENT request", ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: []string{"SENT"}}, StageSignature},
		{"out for signature: a SENT request after a removed one", ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: []string{"REMOVED", "SENT"}}, StageSignature},
		{"out for signature: status alone when no request is listed", ContractFacts{Status: "SIGNATURE_REQUESTED"}, StageSignature},
		{"removed request goes back to generated", ContractFacts{Status: "GENERATED", SignatureStatuses: []string{"REMOVED"}}, StageGenerated},
		{"removed request wins over a stale status", ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: []string{"REMOVED"}}, StageGenerated},
		{"archived by status", ContractFacts{Status: "ARCHIVED"}, StageArchived},
		{"archived by archive.archived", ContractFacts{Status: "GENERATED", Archived: true}, StageArchived},
		{"archived wins over a SENT request", ContractFacts{Status: "ARCHIVED", Archived: true, SignatureStatuses: []string{"SENT"}}, StageArchived},
		{"unknown status is generated", ContractFacts{Status: "SOMETHING_NEW"}, StageGenerated},
	}
	for _, tt := range tests {
		if got := StageOfContract(tt.facts); got != tt.want {
			t.Errorf("%s: StageOfContract(%+v) = %q, want %q", tt.name, tt.facts, got, tt.want)
		}
	}
}

func TestStageOfQuote(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		hasContract   bool
		contractStage Stage
		want          Stage
	}{
		{"no contract: draft", false, "", StageDraft},
		{"contract not seen yet: generated", true, "", StageGenerated},
		{"contract generated", true, StageGenerated, StageGenerated},
		{"contract out for signature", true, StageSignature, StageSignature},
		{"contract archived", true, StageArchived, StageArchived},
	}
	for _, tt := range tests {
		if got := StageOfQuote(tt.hasContract, tt.contractStage); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

var (
	alice = Viewer{Subject: "alice", Name: "Alice"}
	bob   = Viewer{Subject: "bob", Name: "Bob"}
	lead  = Viewer{Subject: "lead", Name: "Lee", Team: true}
)

func ids(p Page) []int64 {
	out := make([]int64, 0, len(p.Rows))
	for _, r := range p.Rows {
		out = append(out, r.ID())
	}
	return out
}

func TestVisibilityAndScopes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
	ix := newIndex(t, openStore(t), c)
	must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 1, CPQID: 1, CustomerID: 7, Customer: "Acme"}, ActCreated))
	c.t = c.t.Add(time.Minute)
	must(t, ix.ObserveQuote(ctx, bob, QuoteSighting{QuoteID: 2, CPQID: 1, CustomerID: 7, Customer: "Acme"}, ActCreated))
	c.t = c.t.Add(time.Minute)
	// Bob opens Alice's quote: it is his to see, not "his" quote.
	must(t, ix.ObserveQuote(ctx, bob, QuoteSighting{QuoteID: 1, CPQID: 1, CustomerID: 7, Customer: "Acme"}, ActOpened))

	list := func(v Viewer, scope Scope) []int64 {
		p, err := ix.List(ctx, v, Query{Kind: KindQuote, Scope: scope})
		must(t, err)
		return ids(p)
	}
	assertIDs(t, "alice mine", list(alice, ScopeMine), 1)
	assertIDs(t, "alice all (no team role)", list(alice, ScopeAll), 1)
	assertIDs(t, "bob mine", list(bob, ScopeMine), 2)
	assertIDs(t, "bob all: created and opened", list(bob, ScopeAll), 2, 1)
	assertIDs(t, "lead all: the team", list(lead, ScopeAll), 2, 1)
	assertIDs(t, "lead mine: nothing", list(lead, ScopeMine))
	assertIDs(t, "nobody", list(Viewer{}, ScopeAll))

	// Bob changes Alice's quote: it becomes his (last changed by him) and stays hers (created).
	must(t, ix.ObserveQuote(ctx, bob, QuoteSighting{QuoteID: 1, CPQID: 1, CustomerID: 7, OneOffCents: 500}, ActChanged))
	assertIDs(t, "bob mine after his change", list(bob, ScopeMine), 1, 2)
	assertIDs(t, "alice mine after bob's change", list(alice, ScopeMine), 1)
	r, _ := ix.Lookup(ctx, alice, KindQuote, 1)
	if r.CreatedByName != "Alice" || r.ChangedByName != "Bob" || r.Customer != "Acme" || r.OneOffCents != 500 {
		t.Errorf("row after change = %+v", r)
	}
}

func TestForgetOn404(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
	ix := newIndex(t, openStore(t), c)
	must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 1, CustomerID: 7}, ActCreated))
	must(t, ix.Forget(ctx, alice, KindQuote, 1))
	for _, v := range []Viewer{alice, {Subject: "alice", Team: true}} {
		p, err := ix.List(ctx, v, Query{Kind: KindQuote, Scope: ScopeAll})
		must(t, err)
		assertIDs(t, "after a 404 for alice", ids(p))
	}
	p, err := ix.List(ctx, lead, Query{Kind: KindQuote, Scope: ScopeAll})
	must(t, err)
	assertIDs(t, "others keep it", ids(p), 1)
	// A later successful read by her gives it back.
	c.t = c.t.Add(time.Hour)
	must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 1, CustomerID: 7}, ActOpened))
	p, err = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeAll})
	must(t, err)
	assertIDs(t, "after she reads it again", ids(p), 1)
}

func TestQuoteFollowsItsContract(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
	ix := newIndex(t, openStore(t), c)
	must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 10, CPQID: 1, CustomerID: 7}, ActCreated))
	stage := func(kind Kind, id int64) Stage {
		r, ok := ix.Lookup(ctx, lead, kind, id)
		if !ok {
			return ""
		}
		return r.Stage
	}
	if got := stage(KindQuote, 10); got != StageDraft {
		t.Fatalf("new quote: %q", got)
	}
	contract := ContractSighting{ContractID: 5, Number: "C-5", QuoteID: 10, CPQID: 1, CustomerID: 7, Facts: ContractFacts{Status: "GENERATED"}}
	must(t, ix.ObserveContract(ctx, alice, contract, ActCreated))
	assertStage(t, "generated", stage(KindQuote, 10), stage(KindContract, 5), StageGenerated)
	contract.Facts = ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: []string{"SENT"}}
	must(t, ix.ObserveContract(ctx, alice, contract, ActChanged))
	assertStage(t, "sent", stage(KindQuote, 10), stage(KindContract, 5), StageSignature)
	contract.Facts = ContractFacts{Status: "GENERATED", SignatureStatuses: []string{"REMOVED"}}
	must(t, ix.ObserveContract(ctx, alice, contract, ActChanged))
	assertStage(t, "removed", stage(KindQuote, 10), stage(KindContract, 5), StageGenerated)
	contract.Facts = ContractFacts{Status: "ARCHIVED", Archived: true, SignatureStatuses: []string{"REMOVED"}}
	must(t, ix.ObserveContract(ctx, bob, contract, ActRefreshed))
	assertStage(t, "archived (batch)", stage(KindQuote, 10), stage(KindContract, 5), StageArchived)
	// A quote document read later (it names the contract) keeps the contract's stage.
	must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 10, CPQID: 1, CustomerID: 7, ContractID: 5, ContractNumber: "C-5"}, ActOpened))
	if got := stage(KindQuote, 10); got != StageArchived {
		t.Errorf("quote read after archive: %q", got)
	}
	// Bob's background refresh did not make the contract his.
	p, err := ix.List(ctx, bob, Query{Kind: KindContract, Scope: ScopeAll})
	must(t, err)
	assertIDs(t, "bob's contracts", ids(p))
}

func TestFiltersSortAndPaging(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
	ix := newIndex(t, openStore(t), c)
	for i := int64(1); i <= 30; i++ {
		c.t = c.t.Add(time.Hour)
		customer, name := int32(1), "Acme Ltd"
		if i%2 == 0 {
			customer, name = 2, "Brio SpA"
		}
		must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: i, CPQID: int32(1 + i%3), CustomerID: customer, Customer: name,
			OneOffCents: i * 100, Configurator: "Cfg"}, ActCreated))
	}
	q := Query{Kind: KindQuote, Scope: ScopeMine, PerPage: 10}
	p, err := ix.List(ctx, alice, q)
	must(t, err)
	if p.Total != 30 || p.Pages != 3 || p.Rows[0].QuoteID != 30 {
		t.Errorf("first page: total %d pages %d first %d", p.Total, p.Pages, p.Rows[0].QuoteID)
	}
	q.Page = 99
	p, _ = ix.List(ctx, alice, q)
	if p.Page != 3 || len(p.Rows) != 10 {
		t.Errorf("page beyond the end: page %d rows %d", p.Page, len(p.Rows))
	}
	p, _ = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, CustomerID: 2, PerPage: 100})
	if p.Total != 15 {
		t.Errorf("customer filter: %d", p.Total)
	}
	p, _ = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, Find: "brio", PerPage: 100})
	if p.Total != 15 {
		t.Errorf("find by name: %d", p.Total)
	}
	p, _ = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, Find: "#7"})
	assertIDs(t, "find by number", ids(p), 7)
	p, _ = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, Sort: SortValue, PerPage: 3})
	assertIDs(t, "by value", ids(p), 30, 29, 28)
	p, _ = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, Sort: SortValue, Asc: true, PerPage: 3})
	assertIDs(t, "by value ascending", ids(p), 1, 2, 3)
	from := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC).Add(5 * time.Hour)
	p, _ = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, From: from, To: from.Add(2 * time.Hour)})
	assertIDs(t, "date range", ids(p), 6, 5)
	p, _ = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, CPQID: 2, PerPage: 100})
	if p.Total != 10 || len(p.Configurators) != 3 {
		t.Errorf("configurator filter: %d rows, %d configurators", p.Total, len(p.Configurators))
	}
	p, _ = ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, Stages: []Stage{StageArchived}})
	assertIDs(t, "stage filter", ids(p))
}

// TestReplicasShareTheStore: a second replica (another Index on the same store) sees the first
// one's writes at its next list.
func TestReplicasShareTheStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
	st := openStore(t)
	a, b := newIndex(t, st, c), newIndex(t, st, c)
	must(t, a.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 1}, ActCreated))
	c.t = c.t.Add(time.Second)
	p, err := b.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine})
	must(t, err)
	assertIDs(t, "replica b", ids(p), 1)
	must(t, b.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 2}, ActCreated))
	c.t = c.t.Add(time.Second)
	p, err = a.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine})
	must(t, err)
	assertIDs(t, "replica a", ids(p), 2, 1)
}

func TestMaxRowsBoundsMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
	ix := New(openStore(t), Options{Now: c.now, MaxRows: numShards}) // one row per shard and kind
	for i := int64(1); i <= 500; i++ {
		c.t = c.t.Add(time.Second)
		must(t, ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: i}, ActCreated))
	}
	p, err := ix.List(ctx, alice, Query{Kind: KindQuote, Scope: ScopeMine, PerPage: MaxPerPage})
	must(t, err)
	if p.Total > numShards || p.Total == 0 {
		t.Fatalf("kept %d rows, limit %d", p.Total, numShards)
	}
	if p.Rows[0].QuoteID != 500 {
		t.Errorf("newest row dropped: first is %d", p.Rows[0].QuoteID)
	}
}

// brokenStore fails every call, like an unreachable Redis.
type brokenStore struct{ store.Store }

var errDown = errors.New("connection refused")

func (brokenStore) Get(context.Context, string) ([]byte, error) { return nil, errDown }
func (brokenStore) Update(context.Context, string, time.Duration, func([]byte) ([]byte, error)) error {
	return errDown
}

func TestStoreUnreachable(t *testing.T) {
	t.Parallel()
	ix := New(brokenStore{}, Options{})
	if _, err := ix.List(context.Background(), alice, Query{Kind: KindQuote}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("List: %v, want ErrUnavailable", err)
	}
	if err := ix.ObserveQuote(context.Background(), alice, QuoteSighting{QuoteID: 1}, ActCreated); err == nil {
		t.Error("a failed write reported no error (the handlers log it)")
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func assertIDs(t *testing.T, what string, got []int64, want ...int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: got %v, want %v", what, got, want)
			return
		}
	}
}

func assertStage(t *testing.T, what string, quote, contract, want Stage) {
	t.Helper()
	if quote != want || contract != want {
		t.Errorf("%s: quote %q contract %q, want %q", what, quote, contract, want)
	}
}

// countingStore fails every call and counts them.
type countingStore struct {
	brokenStore
	calls *int
}

func (s countingStore) Get(ctx context.Context, key string) ([]byte, error) {
	*s.calls++
	return nil, errDown
}

func (s countingStore) Update(ctx context.Context, key string, ttl time.Duration, fn func([]byte) ([]byte, error)) error {
	*s.calls++
	return errDown
}

// TestStoreDownIsNotAskedAgainAtOnce: after a failure the index gives up at once for a few
// seconds, so pages and actions do not wait for a dead store each time.
func TestStoreDownIsNotAskedAgainAtOnce(t *testing.T) {
	t.Parallel()
	calls := 0
	c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
	ix := New(countingStore{calls: &calls}, Options{Now: c.now, RefreshEvery: time.Nanosecond})
	ctx := context.Background()
	for range 5 {
		if _, err := ix.List(ctx, alice, Query{Kind: KindQuote}); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("List: %v", err)
		}
		if err := ix.ObserveQuote(ctx, alice, QuoteSighting{QuoteID: 1}, ActCreated); err == nil {
			t.Fatal("write reported no error")
		}
	}
	if calls != 1 {
		t.Errorf("the store was asked %d times, want 1", calls)
	}
	c.t = c.t.Add(storeDownFor + time.Second)
	_, _ = ix.List(ctx, alice, Query{Kind: KindQuote})
	if calls != 2 {
		t.Errorf("after the pause the store was asked %d times in all, want 2", calls)
	}
}
