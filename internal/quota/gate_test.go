package quota

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestGatePerUserAndTotal: a user's second operation is refused at once while the first runs;
// another user waits for a replica slot and gets ErrBusy when their context ends first, and the
// slot once released.
func TestGatePerUserAndTotal(t *testing.T) {
	g := NewGate(1, 1)
	ctx := context.Background()
	release, err := g.Acquire(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Acquire(ctx, "alice"); !errors.Is(err, ErrUserBusy) {
		t.Fatalf("alice's second: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := g.Acquire(short, "bob"); !errors.Is(err, ErrBusy) {
		t.Fatalf("bob while the replica's slot is taken: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := g.Acquire(ctx, "bob")
		if err == nil {
			r()
		}
		got <- err
	}()
	release()
	release() // a second release gives nothing more back
	if err := <-got; err != nil {
		t.Fatalf("bob after alice: %v", err)
	}
	r1, err := g.Acquire(ctx, "alice")
	if err != nil {
		t.Fatalf("alice again: %v", err)
	}
	defer r1()
	if _, err := g.Acquire(short, "carol"); err == nil {
		t.Fatal("a double release left two slots")
	}
}
