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

// strictV2 is an Archiver that refuses a second archive of a contract (as the simulator's strict
// archive mode does) and counts it: doubles is the number of contracts archived twice.
type strictV2 struct {
	mu       sync.Mutex
	archived map[string]bool
	doubles  int
	delay    time.Duration
}

func (s *strictV2) archiveOld(ctx context.Context, _, number string) (string, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return "", ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.archived[number] {
		s.doubles++
		return "", errors.New("409 archived already")
	}
	s.archived[number] = true
	return "ARC-" + number, nil
}

// Archive implements Archiver (the archive's time unsaid).
func (s *strictV2) Archive(ctx context.Context, tok, number string) (string, time.Time, error) {
	id, err := s.archiveOld(ctx, tok, number)
	return id, time.Time{}, err
}

func (s *strictV2) ArchiveID(_ context.Context, _, number string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.archived[number] {
		return "ARC-" + number, true, nil
	}
	return "", false, nil
}

// TestRecordVanishedStopsAndTellsWhy: the job's row disappears mid-run (deleted, or a database
// restored from an older backup): the runner stops sending, writes back its own copy as stopped
// with the reason, and the owner resumes it; every contract ends archived exactly once.
func TestRecordVanishedStopsAndTellsWhy(t *testing.T) {
	statedbtest.Each(t, testRecordVanishedStopsAndTellsWhy)
}

func testRecordVanishedStopsAndTellsWhy(t *testing.T, db *statedb.DB) {
	v2 := &strictV2{archived: map[string]bool{}, delay: 5 * time.Millisecond}
	m := NewManager(Options{DB: db, Archiver: v2, Concurrency: 3, LeaseTerm: time.Second, ScanInterval: 50 * time.Millisecond})
	defer m.Close()
	m.Run()
	ctx := context.Background()
	j, _ := m.Create(ctx, "alice", "", items(150))
	if _, err := m.Start(ctx, j.ID, "alice", "token", time.Time{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, j.ID, func(j *Job) bool { return j.Counts().Done >= 10 })
	if _, err := db.SQL.ExecContext(ctx, `DELETE FROM jobs WHERE id = $1`, j.ID); err != nil {
		t.Fatal(err)
	}
	var stopped *Job
	for deadline := time.Now().Add(10 * time.Second); stopped == nil; {
		if got, err := m.Get(ctx, j.ID, "alice"); err == nil {
			stopped = got
		} else if time.Now().After(deadline) {
			t.Fatalf("the vanished record was never written back: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if stopped.Status != StatusStopped || stopped.StopReason != StopRecordLost || stopped.Token != "" || stopped.Lease != "" {
		t.Fatalf("written back as %s (%q), token kept %v, lease %q", stopped.Status, stopped.StopReason, stopped.Token != "", stopped.Lease)
	}
	c := stopped.Counts()
	if c.Left == 0 || c.Running != 0 || c.Done+c.Left != 150 {
		t.Fatalf("stopped counts %+v", c)
	}
	v2.mu.Lock()
	archived := len(v2.archived)
	v2.mu.Unlock()
	if archived != c.Done {
		t.Fatalf("%d archived, %d reported done: the runner went on after its record vanished", archived, c.Done)
	}
	if _, err := m.RetryFailed(ctx, j.ID, "alice", "token2", time.Time{}); err != nil {
		t.Fatal(err)
	}
	end := waitFor(t, m, j.ID, func(j *Job) bool { return j.Status == StatusFinished })
	v2.mu.Lock()
	defer v2.mu.Unlock()
	if end.Counts().Done != 150 || len(v2.archived) != 150 || v2.doubles != 0 {
		t.Fatalf("after resume %+v, %d archived, %d twice", end.Counts(), len(v2.archived), v2.doubles)
	}
}

// TestCancelChecksLinesThatMayHaveBeenSent: cancelling a job whose runner died with lines in
// flight does not call those lines "not archived" unchecked: a runner reads each contract first.
func TestCancelChecksLinesThatMayHaveBeenSent(t *testing.T) {
	statedbtest.Each(t, testCancelChecksLinesThatMayHaveBeenSent)
}

func testCancelChecksLinesThatMayHaveBeenSent(t *testing.T, db *statedb.DB) {
	v2 := &strictV2{archived: map[string]bool{"C-001": true}}
	m := NewManager(Options{DB: db, Archiver: v2, Concurrency: 2, ScanInterval: 50 * time.Millisecond, CallTimeout: 100 * time.Millisecond})
	defer m.Close()
	ctx := context.Background()
	// A job as a runner that died leaves it: three lines claimed, its lease over.
	list := items(10)
	for i := range 3 {
		list[i].Status, list[i].MaybeSent = ItemRunning, true
	}
	dead := Job{ID: statedb.NewID(), Owner: "alice", Status: StatusRunning, Items: list, Token: "token", Lease: "dead", LeaseUntil: time.Now().Add(-time.Second)}
	putJob(t, db, &dead)
	cancelling, err := m.Cancel(ctx, dead.ID, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if !cancelling.Active() {
		t.Fatalf("cancelled at once (%s) with lines that may have been sent", cancelling.Status)
	}
	m.Run()
	end := waitFor(t, m, dead.ID, func(j *Job) bool { return j.Status == StatusCancelled })
	first := end.Items[0]
	if first.Status != ItemDone || !first.Verified || first.Note != NoteArchivedBeforeInterruption {
		t.Fatalf("line 1 (archived before the runner died): %+v", first)
	}
	for _, it := range end.Items[1:3] {
		if it.Status != ItemPending || !it.Verified || it.MaybeSent {
			t.Fatalf("line %d (checked, not archived): %+v", it.Line, it)
		}
	}
	for _, it := range end.Items[3:] {
		if it.Status != ItemPending || it.Verified {
			t.Fatalf("line %d (never sent): %+v", it.Line, it)
		}
	}
	v2.mu.Lock()
	defer v2.mu.Unlock()
	if len(v2.archived) != 1 {
		t.Fatalf("a cancelled job archived: %v", v2.archived)
	}
	if end.Token != "" {
		t.Fatal("the cancelled job keeps its token")
	}
}

// refusingV2 refuses the token "old" for one contract (401 at the end of a batch).
type refusingV2 struct {
	*strictV2
	number string
}

func (r refusingV2) archiveOld(ctx context.Context, token, number string) (string, error) {
	if number == r.number && token == "old" {
		return "", ErrTokenRejected
	}
	return r.strictV2.archiveOld(ctx, token, number)
}

// Archive implements Archiver (the archive's time unsaid).
func (r refusingV2) Archive(ctx context.Context, token, number string) (string, time.Time, error) {
	id, err := r.archiveOld(ctx, token, number)
	return id, time.Time{}, err
}

// TestTokenRefusedAtTheEndKeepsTheBatchPaused: a line sent back to pending by a 401 at the end
// keeps the batch paused (never "finished" with a line left), until a fresh token finishes it.
func TestTokenRefusedAtTheEndKeepsTheBatchPaused(t *testing.T) {
	statedbtest.Each(t, testTokenRefusedAtTheEndKeepsTheBatchPaused)
}

func testTokenRefusedAtTheEndKeepsTheBatchPaused(t *testing.T, db *statedb.DB) {
	v2 := refusingV2{&strictV2{archived: map[string]bool{}}, "C-010"}
	m := NewManager(Options{DB: db, Archiver: v2, Concurrency: 2})
	defer m.Close()
	ctx := context.Background()
	j, _ := m.Create(ctx, "alice", "", items(10))
	if _, err := m.Start(ctx, j.ID, "alice", "old", time.Time{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, j.ID, func(j *Job) bool { return j.WaitingForSignIn && j.Counts().Done == 9 })
	time.Sleep(3 * flushInterval) // would the runner call it finished?
	paused, _ := m.Get(ctx, j.ID, "alice")
	if paused.Status == StatusFinished || !paused.Active() || paused.Counts().Left != 1 {
		t.Fatalf("paused batch is %s with %+v", paused.Status, paused.Counts())
	}
	if err := m.HandOverToken(ctx, j.ID, "alice", "fresh", time.Time{}); err != nil {
		t.Fatal(err)
	}
	end := waitFor(t, m, j.ID, func(j *Job) bool { return j.Status == StatusFinished })
	if c := end.Counts(); c.Done != 10 || c.Left != 0 {
		t.Fatalf("%+v", c)
	}
}

// TestQuotasAndNoEmptyDraft: a list with nothing to archive is not stored; a user's drafts and
// running batches stop at their quotas (another user is not counted).
func TestQuotasAndNoEmptyDraft(t *testing.T) {
	statedbtest.Each(t, testQuotasAndNoEmptyDraft)
}

func testQuotasAndNoEmptyDraft(t *testing.T, db *statedb.DB) {
	v2 := &strictV2{archived: map[string]bool{}, delay: 50 * time.Millisecond}
	m := NewManager(Options{DB: db, Archiver: v2, MaxDrafts: 2, MaxActive: 1})
	defer m.Close()
	ctx := context.Background()
	rejected := []Item{{Line: 1, Number: "x", Status: ItemRejected}, {Line: 2, Number: "y", Status: ItemDone, Note: NoteAlreadyArchived}}
	if _, err := m.Create(ctx, "alice", "", rejected); !errors.Is(err, ErrNothingToArchive) {
		t.Fatalf("nothing to archive: %v", err)
	}
	a, _ := m.Create(ctx, "alice", "", items(20))
	b, _ := m.Create(ctx, "alice", "", items(2))
	var quota *QuotaError
	if _, err := m.Create(ctx, "alice", "", items(2)); !errors.As(err, &quota) || quota.Message.Key != "batch.quota.drafts" {
		t.Fatalf("third draft: %v", err)
	}
	if _, err := m.Create(ctx, "bob", "", items(2)); err != nil {
		t.Fatalf("another user's draft: %v", err)
	}
	if _, err := m.Start(ctx, a.ID, "alice", "token", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(ctx, b.ID, "alice", "token", time.Time{}); !errors.As(err, &quota) || quota.Message.Key != "batch.quota.running" {
		t.Fatalf("second running batch: %v", err)
	}
	waitFor(t, m, a.ID, func(j *Job) bool { return j.Status == StatusFinished })
	if _, err := m.Start(ctx, b.ID, "alice", "token", time.Time{}); err != nil {
		t.Fatalf("after the first ended: %v", err)
	}
	if list, _ := m.List(ctx, "alice"); len(list) != 2 {
		t.Fatalf("alice lists %d batches", len(list))
	}
}
