package recent

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// clock is a test clock a second further at every reading.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { c.now = c.now.Add(time.Second); return c.now }

func newClock() *clock { return &clock{now: time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)} }

func countRows(t *testing.T, db *statedb.DB) int {
	t.Helper()
	var n int
	if err := db.SQL.QueryRow("SELECT COUNT(*) FROM recent_items").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestTouchOrdersDedupesAndBounds(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		r := New(db, newClock().Now)
		ctx := context.Background()
		for i := 1; i <= Limit+5; i++ {
			if err := r.Touch(ctx, "alice", Item{Kind: KindQuote, ID: int64(i), Customer: fmt.Sprintf("C%d", i), Total: "€1.00",
				Totals: &Totals{OneOffCents: 100, MonthlyCents: 5}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Touch(ctx, "alice", Item{Kind: KindContract, ID: 7, Number: "C-1", QuoteID: 3, Status: "signed"}); err != nil {
			t.Fatal(err)
		}
		// Opening quote 10 again moves it to the top and keeps its customer and total.
		if err := r.Touch(ctx, "alice", Item{Kind: KindQuote, ID: 10}); err != nil {
			t.Fatal(err)
		}
		quotes, err := r.List(ctx, "alice", KindQuote)
		if err != nil {
			t.Fatal(err)
		}
		if len(quotes) != Limit {
			t.Fatalf("%d quotes kept, want %d", len(quotes), Limit)
		}
		if quotes[0].ID != 10 || quotes[0].Customer != "C10" || quotes[0].Total != "€1.00" || quotes[1].ID != Limit+5 {
			t.Fatalf("order: %+v %+v", quotes[0], quotes[1])
		}
		if quotes[1].Totals == nil || *quotes[1].Totals != (Totals{OneOffCents: 100, MonthlyCents: 5}) {
			t.Errorf("totals read back as %+v", quotes[1].Totals)
		}
		for _, q := range quotes {
			if q.ID <= 5 {
				t.Fatalf("quote %d should have been dropped (oldest)", q.ID)
			}
		}
		contracts, _ := r.List(ctx, "alice", KindContract)
		if len(contracts) != 1 || contracts[0].Number != "C-1" || contracts[0].QuoteID != 3 || contracts[0].Status != "signed" {
			t.Fatalf("contracts: %+v", contracts)
		}
		all, _ := r.List(ctx, "alice", "")
		if len(all) != Limit+1 || all[0].ID != 10 || all[1].Kind != KindContract {
			t.Fatalf("all kinds: %d items, first %+v %+v", len(all), all[0], all[1])
		}
		if other, _ := r.List(ctx, "bob", ""); len(other) != 0 {
			t.Fatalf("another user sees %d items", len(other))
		}
		if n := countRows(t, db); n != Limit+1 {
			t.Errorf("%d rows stored, want %d", n, Limit+1)
		}
	})
}

// TestKeepsExactlyTheNewestFifty: after many more touches than Limit, in any order, a user's list
// holds exactly the Limit items touched last, newest first, and the table nothing more.
func TestKeepsExactlyTheNewestFifty(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		r := New(db, newClock().Now)
		ctx := context.Background()
		const touches = 300
		var order []int64
		for i := range touches {
			id := int64((i * 37) % 120) // revisits ids in a scrambled order
			if err := r.Touch(ctx, "carol", Item{Kind: KindQuote, ID: id}); err != nil {
				t.Fatal(err)
			}
			order = append(order, id)
		}
		var want []int64 // the distinct ids, last touched first
		seen := map[int64]bool{}
		for i := len(order) - 1; i >= 0 && len(want) < Limit; i-- {
			if !seen[order[i]] {
				seen[order[i]] = true
				want = append(want, order[i])
			}
		}
		got, err := r.List(ctx, "carol", KindQuote)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != Limit {
			t.Fatalf("%d items, want %d", len(got), Limit)
		}
		for i := range want {
			if got[i].ID != want[i] {
				t.Fatalf("item %d is %d, want %d", i, got[i].ID, want[i])
			}
		}
		if n := countRows(t, db); n != Limit {
			t.Errorf("%d rows stored, want %d", n, Limit)
		}
	})
}

// TestItemsExpireAfterNinetyDays: an item not opened for 90 days leaves the list (and the table at
// the user's next touch); one opened again stays.
func TestItemsExpireAfterNinetyDays(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		clk := newClock()
		r := New(db, clk.Now)
		ctx := context.Background()
		for _, id := range []int64{1, 2} {
			if err := r.Touch(ctx, "dave", Item{Kind: KindQuote, ID: id}); err != nil {
				t.Fatal(err)
			}
		}
		clk.now = clk.now.Add(keep - time.Hour)
		if err := r.Touch(ctx, "dave", Item{Kind: KindQuote, ID: 2}); err != nil {
			t.Fatal(err)
		}
		clk.now = clk.now.Add(2 * time.Hour)
		items, err := r.List(ctx, "dave", "")
		if err != nil || len(items) != 1 || items[0].ID != 2 {
			t.Fatalf("after 90 days: %+v %v", items, err)
		}
		if err := r.Touch(ctx, "dave", Item{Kind: KindContract, ID: 9}); err != nil {
			t.Fatal(err)
		}
		if n := countRows(t, db); n != 2 {
			t.Errorf("%d rows, want 2 (the expired one deleted)", n)
		}
	})
}

// TestListOutlivesRestart: the list is read back from the file by a new process.
func TestListOutlivesRestart(t *testing.T) {
	dir := t.TempDir()
	open := func() *statedb.DB {
		db, err := statedb.Open(context.Background(), statedb.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	if err := New(db, nil).Touch(context.Background(), "alice", Item{Kind: KindQuote, ID: 42}); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	db = open()
	defer db.Close()
	items, err := New(db, nil).List(context.Background(), "alice", "")
	if err != nil || len(items) != 1 || items[0].ID != 42 {
		t.Fatalf("after reopening: %+v %v", items, err)
	}
}
