package statedb_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// recorder keeps what a subscriber was told.
type recorder struct {
	mu       sync.Mutex
	payloads []string
}

func (r *recorder) add(p string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.payloads = append(r.payloads, p)
}

func (r *recorder) has(p string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.payloads {
		if q == p {
			return true
		}
	}
	return false
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.payloads = nil
}

// waitFor polls cond every millisecond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// The listener of one replica hands another replica's changes to its subscribers, keeps Fresh true
// while asked, and after its connection is killed is not Fresh until it is back, when it tells
// every subscriber "*" (what was announced meanwhile is lost).
func TestChangesReachTheSubscribersUnderALease(t *testing.T) {
	t.Parallel()
	url := statedbtest.PostgresURL(t)
	a, b := statedbtest.OpenURL(t, url), statedbtest.OpenURL(t, url)
	changes := a.Changes()
	if changes == nil || changes != a.Changes() {
		t.Fatal("not one listener per database")
	}
	if statedbtest.SQLite(t).Changes() != nil {
		t.Fatal("a listener on SQLite")
	}
	var work, sessions recorder
	changes.Subscribe(statedb.WorkChangesChannel, work.add)
	changes.Subscribe(statedb.SessionChangesChannel, sessions.add)
	waitFor(t, "Fresh", changes.Fresh)

	ctx := context.Background()
	if _, err := b.SQL.ExecContext(ctx, "DELETE FROM work_denied WHERE person = 'nobody'"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the other replica's write handed on", func() bool { return work.has("work_denied") })
	if sessions.has("work_denied") {
		t.Fatal("a subscriber was told of another channel")
	}

	pid := changes.ListenerPID()
	if pid == 0 {
		t.Fatal("no listener PID while Fresh")
	}
	work.reset()
	if _, err := b.SQL.ExecContext(ctx, "SELECT pg_terminate_backend($1)", int64(pid)); err != nil {
		t.Fatal(err)
	}
	// Within the lease of the last heartbeat back, Fresh turns false; it comes back with a new
	// connection, which every subscriber learns as "*".
	waitFor(t, "not Fresh after the listener was killed", func() bool { return !changes.Fresh() })
	waitFor(t, "Fresh again", func() bool { return changes.Fresh() && changes.ListenerPID() != pid })
	if !work.has("*") || !sessions.has("*") {
		t.Fatal("a reconnection was not told to every subscriber")
	}
}
