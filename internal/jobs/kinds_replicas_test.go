package jobs

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// ownerChanges is a kind like the handover (internal/handover) on a strict fake v2 API: a line
// moves its customer (Payload) from owner "a" to "b"; a change of a customer that is not a's
// any more is refused, and counted, like the simulator's 422.
type ownerChanges struct {
	mu      sync.Mutex
	owner   map[string]string
	changes map[string]int
	refused int
}

func (k *ownerChanges) Send(_ context.Context, _ string, it Item) (Outcome, error) {
	time.Sleep(3 * time.Millisecond)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.owner[it.Payload] != "a" {
		k.refused++
		return Outcome{}, fmt.Errorf("customer %s: a is not an owner", it.Payload)
	}
	k.owner[it.Payload] = "b"
	k.changes[it.Payload]++
	return Outcome{Result: "b"}, nil
}

func (k *ownerChanges) Check(_ context.Context, _ string, it Item) (Outcome, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.owner[it.Payload] == "b" {
		return Outcome{Result: "b", Note: "changed before"}, true, nil
	}
	return Outcome{}, false, nil
}

// TestKindReplicasNeverDoubleWhenALeaseExpires is TestReplicasNeverArchiveTwiceWhenALeaseExpires
// for a kind other than the archive: the fencing and the check before a resend are the engine's,
// so a stalled replica whose job was taken over sends no change again, and none is lost.
func TestKindReplicasNeverDoubleWhenALeaseExpires(t *testing.T) {
	url := statedbtest.PostgresURL(t)
	dbA, dbB := statedbtest.OpenURL(t, url), statedbtest.OpenURL(t, url)
	runs := 3
	if testing.Short() {
		runs = 1
	}
	for run := range runs {
		t.Run(fmt.Sprint(run), func(t *testing.T) {
			kind := &ownerChanges{owner: map[string]string{}, changes: map[string]int{}}
			list := make([]Item, 150)
			for i := range list {
				id := strconv.Itoa(i + 1)
				kind.owner[id] = "a"
				list[i] = Item{Line: i + 1, Number: id, Status: ItemPending, Payload: id}
			}
			opts := func(db *statedb.DB, skew time.Duration) Options {
				return Options{DB: db, Kinds: map[string]Kind{"owners": kind}, Concurrency: 4, LeaseTerm: 400 * time.Millisecond,
					CallTimeout: 200 * time.Millisecond, ScanInterval: 50 * time.Millisecond, MaxDrafts: 100,
					Now: func() time.Time { return time.Now().Add(skew) }}
			}
			a, b := NewManager(opts(dbA, time.Hour)), NewManager(opts(dbB, -time.Hour))
			var writes atomic.Int32
			stallAt := int32(3 + run*4)
			a.beforeWrite = func() {
				if writes.Add(1) == stallAt {
					time.Sleep(time.Second) // longer than the lease
				}
			}
			defer a.Close()
			defer b.Close()
			ctx := context.Background()
			j, err := a.CreateKind(ctx, "owners", "alice", "", list)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Start(ctx, j.ID, "alice", "token", time.Time{}); err != nil {
				t.Fatal(err)
			}
			a.Run()
			b.Run()
			end := waitFor(t, b, j.ID, func(j *Job) bool { return j.Status == StatusFinished })
			kind.mu.Lock()
			defer kind.mu.Unlock()
			lost := 0
			for id, owner := range kind.owner {
				if owner != "b" || kind.changes[id] != 1 {
					lost++
				}
			}
			if kind.refused != 0 || lost != 0 || end.Counts().Done != 150 {
				t.Fatalf("%d changes refused as second ones, %d customers not changed once, counts %+v", kind.refused, lost, end.Counts())
			}
			if end.Resumes == 0 {
				t.Fatal("the job was never taken over")
			}
			t.Logf("resumes %d, lines checked %d", end.Resumes, end.Verified())
		})
	}
}
