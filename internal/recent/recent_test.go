package recent

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/store"
)

func newRecent(t *testing.T) (*Recent, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "portal.db")
	st, err := store.OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	clock := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	return New(st, func() time.Time { clock = clock.Add(time.Second); return clock }), path
}

func TestTouchOrdersDedupesAndBounds(t *testing.T) {
	r, _ := newRecent(t)
	ctx := context.Background()
	for i := 1; i <= Limit+5; i++ {
		if err := r.Touch(ctx, "alice", Item{Kind: KindQuote, ID: int64(i), Customer: fmt.Sprintf("C%d", i), Total: "€1.00"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Touch(ctx, "alice", Item{Kind: KindContract, ID: 7, Number: "C-1"}); err != nil {
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
	for _, q := range quotes {
		if q.ID <= 5 {
			t.Fatalf("quote %d should have been dropped (oldest)", q.ID)
		}
	}
	contracts, _ := r.List(ctx, "alice", KindContract)
	if len(contracts) != 1 || contracts[0].Number != "C-1" {
		t.Fatalf("contracts: %+v", contracts)
	}
	if other, _ := r.List(ctx, "bob", ""); len(other) != 0 {
		t.Fatalf("another user sees %d items", len(other))
	}
}

// TestListOutlivesRestart: the list is read back from the file by a new process.
func TestListOutlivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "portal.db")
	st, err := store.OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := New(st, nil).Touch(context.Background(), "alice", Item{Kind: KindQuote, ID: 42}); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	st, err = store.OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	items, err := New(st, nil).List(context.Background(), "alice", "")
	if err != nil || len(items) != 1 || items[0].ID != 42 {
		t.Fatalf("after reopening: %+v %v", items, err)
	}
}
