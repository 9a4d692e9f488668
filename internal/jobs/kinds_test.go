package jobs

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// echoKind is a kind whose line's result is its payload after "done:"; it records the owner its
// calls ran for.
type echoKind struct {
	mu     sync.Mutex
	sent   map[string]int
	owners map[string]bool
}

func (k *echoKind) Send(ctx context.Context, _ string, it Item) (Outcome, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sent[it.Payload]++
	k.owners[OwnerOf(ctx)] = true
	return Outcome{Result: "done:" + it.Payload, Note: "echoed"}, nil
}

func (k *echoKind) Check(_ context.Context, _ string, it Item) (Outcome, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.sent[it.Payload] > 0 {
		return Outcome{Result: "done:" + it.Payload, Note: "found"}, true, nil
	}
	return Outcome{}, false, nil
}

// TestKinds: a job of another kind keeps its payload and result per line, runs only on a
// replica that knows its kind (an archive-only replica leaves it queued), is told whose job a call
// runs for, and is kept apart from the batch archive's list and pages.
func TestKinds(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		archiveOnly := NewManager(Options{DB: db, Archiver: &strictV2{archived: map[string]bool{}}, ScanInterval: 20 * time.Millisecond})
		archiveOnly.Run()
		list := items(5)
		for i := range list {
			list[i].Payload = list[i].Number
		}
		j, err := archiveOnly.CreateKind(ctx, "echo", "alice", "Alice", list)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := archiveOnly.Start(ctx, j.ID, "alice", "token", time.Time{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // a few scans of a replica that must leave the job alone
		if got, _ := archiveOnly.Get(ctx, j.ID, "alice"); got.Status != StatusQueued || got.Lease != "" {
			t.Fatalf("a replica without the kind took the job: %s lease %q", got.Status, got.Lease)
		}
		archiveOnly.Close()

		kind := &echoKind{sent: map[string]int{}, owners: map[string]bool{}}
		m := NewManager(Options{DB: db, Kinds: map[string]Kind{"echo": kind}, ScanInterval: 20 * time.Millisecond})
		m.Run()
		defer m.Close()
		end := waitFor(t, m, j.ID, func(j *Job) bool { return j.Status == StatusFinished })
		for _, it := range end.Items {
			if it.Status != ItemDone || it.Payload != it.Number || it.Result != "done:"+it.Number || it.Note != "echoed" {
				t.Fatalf("line %+v", it)
			}
		}
		if !kind.owners["alice"] || len(kind.owners) != 1 {
			t.Errorf("calls ran for %v, want alice", kind.owners)
		}
		if _, err := m.GetKind(ctx, KindArchive, j.ID, "alice"); !errors.Is(err, ErrNotFound) {
			t.Errorf("the echo job read as an archive: %v", err)
		}
		if got, err := m.GetKind(ctx, "echo", j.ID, "alice"); err != nil || got.Kind != "echo" {
			t.Errorf("GetKind: %v %+v", err, got)
		}
		archives, err := m.List(ctx, "alice")
		if err != nil || len(archives) != 0 {
			t.Errorf("the batch archive list names %d jobs (%v)", len(archives), err)
		}
		echoes, err := m.OverviewKind(ctx, "echo", "alice")
		if err != nil || len(echoes) != 1 || echoes[0].Counts().Done != 5 {
			t.Errorf("the echo list: %v %+v", err, echoes)
		}
	})
}
