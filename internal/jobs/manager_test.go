package jobs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// fakeV2 archives contracts in memory, counting calls per number; fail names numbers that fail.
type fakeV2 struct {
	mu       sync.Mutex
	archived map[string]string
	calls    map[string]int
	fail     map[string]bool
	delay    time.Duration
	inFlight atomic.Int32
	maxSeen  atomic.Int32
}

func newFake() *fakeV2 {
	return &fakeV2{archived: map[string]string{}, calls: map[string]int{}, fail: map[string]bool{}}
}

func (f *fakeV2) archiveOld(ctx context.Context, token, number string) (string, error) {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxSeen.Load()
		if n <= m || f.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	if token == "" {
		return "", ErrTokenRejected
	}
	time.Sleep(f.delay)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[number]++
	if f.fail[number] {
		return "", errors.New("503 injected")
	}
	if id, ok := f.archived[number]; ok {
		return id, nil
	}
	f.archived[number] = "ARC-" + number
	return f.archived[number], nil
}

// Archive implements Archiver (the archive's time unsaid).
func (f *fakeV2) Archive(ctx context.Context, token, number string) (string, time.Time, error) {
	id, err := f.archiveOld(ctx, token, number)
	return id, time.Time{}, err
}

func (f *fakeV2) ArchiveID(ctx context.Context, token, number string) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, ok := f.archived[number]
	return id, ok, nil
}

func items(n int) []Item {
	out := make([]Item, n)
	for i := range out {
		out[i] = Item{Line: i + 1, Number: fmt.Sprintf("C-%03d", i+1), Status: ItemPending}
	}
	return out
}

func waitFor(t *testing.T, m *Manager, id string, ok func(*Job) bool) *Job {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		j, err := m.Get(context.Background(), id, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if ok(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job never reached the state; now %s %+v", j.Status, j.Counts())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// putJob stores j (with its lines) as a runner left it, e.g. one that died holding its lease.
func putJob(t *testing.T, db *statedb.DB, j *Job) {
	t.Helper()
	ctx := context.Background()
	if j.ID == "" {
		j.ID = statedb.NewID()
	}
	if j.CreatedAt.IsZero() {
		j.CreatedAt, j.UpdatedAt = time.Now(), time.Now()
	}
	if err := insertJob(ctx, db.SQL, j); err != nil {
		t.Fatal(err)
	}
	if err := insertLines(ctx, db.SQL, j.ID, j.Items); err != nil {
		t.Fatal(err)
	}
}

func TestRunFailuresRetryAndOwnership(t *testing.T) {
	statedbtest.Each(t, testRunFailuresRetryAndOwnership)
}

func testRunFailuresRetryAndOwnership(t *testing.T, db *statedb.DB) {
	v2 := newFake()
	v2.fail["C-003"], v2.fail["C-007"] = true, true
	m := NewManager(Options{DB: db, Archiver: v2, Concurrency: 3})
	defer m.Close()
	ctx := context.Background()
	j, err := m.Create(ctx, "alice", "Alice", items(20))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(ctx, j.ID, "bob"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another user reads the job: %v", err)
	}
	if _, err := m.Start(ctx, j.ID, "bob", "t", time.Time{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another user starts the job: %v", err)
	}
	if _, err := m.Start(ctx, j.ID, "alice", "token", time.Time{}); err != nil {
		t.Fatal(err)
	}
	done := waitFor(t, m, j.ID, func(j *Job) bool { return j.Status == StatusFinished })
	if c := done.Counts(); c.Done != 18 || c.Failed != 2 || c.Left != 0 {
		t.Fatalf("counts %+v", c)
	}
	if v2.maxSeen.Load() > 3 {
		t.Fatalf("%d archive calls at once, concurrency is 3", v2.maxSeen.Load())
	}
	if done.Items[2].Error != "503 injected" || done.Items[2].Status != ItemFailed {
		t.Fatalf("item 3: %+v", done.Items[2])
	}
	v2.mu.Lock()
	v2.fail = map[string]bool{}
	v2.mu.Unlock()
	if _, err := m.RetryFailed(ctx, j.ID, "alice", "token", time.Time{}); err != nil {
		t.Fatal(err)
	}
	done = waitFor(t, m, j.ID, func(j *Job) bool { return j.Status == StatusFinished })
	if c := done.Counts(); c.Done != 20 || c.Failed != 0 {
		t.Fatalf("after retry %+v", c)
	}
	v2.mu.Lock()
	defer v2.mu.Unlock()
	for n, calls := range v2.calls {
		want := 1
		if n == "C-003" || n == "C-007" {
			want = 2
		}
		if calls != want {
			t.Errorf("%s archived %d times, want %d (only the failed ones are retried)", n, calls, want)
		}
	}
}

func TestCancelStopsAfterInFlight(t *testing.T) {
	statedbtest.Each(t, testCancelStopsAfterInFlight)
}

func testCancelStopsAfterInFlight(t *testing.T, db *statedb.DB) {
	v2 := newFake()
	v2.delay = 20 * time.Millisecond
	m := NewManager(Options{DB: db, Archiver: v2, Concurrency: 2})
	defer m.Close()
	ctx := context.Background()
	j, _ := m.Create(ctx, "alice", "", items(200))
	if _, err := m.Start(ctx, j.ID, "alice", "token", time.Time{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, j.ID, func(j *Job) bool { return j.Counts().Done >= 5 })
	if _, err := m.Cancel(ctx, j.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	end := waitFor(t, m, j.ID, func(j *Job) bool { return j.Status == StatusCancelled })
	c := end.Counts()
	if c.Left == 0 || c.Running != 0 || c.Done+c.Left != 200 {
		t.Fatalf("after cancel %+v", c)
	}
	v2.mu.Lock()
	defer v2.mu.Unlock()
	if len(v2.calls) != c.Done {
		t.Fatalf("%d contracts were archived but %d are reported done", len(v2.calls), c.Done)
	}
}

// TestResumeAfterStop: a portal stopping mid-job (Close) and a new one on the same database
// finish the job; every contract is archived exactly once and none is skipped.
func TestResumeAfterStop(t *testing.T) {
	statedbtest.Each(t, testResumeAfterStop)
}

func testResumeAfterStop(t *testing.T, db *statedb.DB) {
	v2 := newFake()
	v2.delay = 10 * time.Millisecond
	m := NewManager(Options{DB: db, Archiver: v2, Concurrency: 4})
	ctx := context.Background()
	j, _ := m.Create(ctx, "alice", "", items(150))
	if _, err := m.Start(ctx, j.ID, "alice", "token", time.Time{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, j.ID, func(j *Job) bool { return j.Counts().Done >= 20 })
	m.Close()

	m2 := NewManager(Options{DB: db, Archiver: v2, Concurrency: 4})
	defer m2.Close()
	stopped, _ := m2.Get(ctx, j.ID, "alice")
	if stopped.Status != StatusQueued || stopped.Lease != "" || stopped.Counts().Running != 0 {
		t.Fatalf("after stop: %s lease %q %+v", stopped.Status, stopped.Lease, stopped.Counts())
	}
	m2.Run()
	end := waitFor(t, m2, j.ID, func(j *Job) bool { return j.Status == StatusFinished })
	if c := end.Counts(); c.Done != 150 || end.Resumes != 1 {
		t.Fatalf("after resume %+v resumes %d", c, end.Resumes)
	}
	v2.mu.Lock()
	defer v2.mu.Unlock()
	for n, calls := range v2.calls {
		if calls != 1 {
			t.Errorf("%s archived %d times", n, calls)
		}
	}
	if len(v2.calls) != 150 {
		t.Fatalf("%d contracts archived, want 150", len(v2.calls))
	}
}

// TestPauseForSignIn: a refused token pauses the job until the owner hands over a new one.
func TestPauseForSignIn(t *testing.T) {
	statedbtest.Each(t, testPauseForSignIn)
}

func testPauseForSignIn(t *testing.T, db *statedb.DB) {
	m := NewManager(Options{DB: db, Archiver: newFake(), Concurrency: 2})
	defer m.Close()
	ctx := context.Background()
	j, _ := m.Create(ctx, "alice", "", items(10))
	if _, err := m.Start(ctx, j.ID, "alice", "", time.Time{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, j.ID, func(j *Job) bool { return j.WaitingForSignIn })
	if err := m.HandOverToken(ctx, j.ID, "alice", "fresh", time.Time{}); err != nil {
		t.Fatal(err)
	}
	end := waitFor(t, m, j.ID, func(j *Job) bool { return j.Status == StatusFinished })
	if c := end.Counts(); c.Done != 10 {
		t.Fatalf("%+v", c)
	}
}

func TestValidate(t *testing.T) {
	entries := ParseText("C-1, C-2\nC-1\n\nbad/one C-404\nC-9")
	items, err := Validate(context.Background(), entries, 2, func(ctx context.Context, n string) (Found, error) {
		switch n {
		case "C-404":
			return Found{}, ErrUnknown
		case "C-9":
			return Found{Archived: true, ArchiveID: "ARC-9", Stage: "archived"}, nil
		}
		return Found{Customer: "Acme", Stage: "signature"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		line   int
		status ItemStatus
		err    string
	}{{1, ItemPending, ""}, {1, ItemPending, ""}, {2, ItemRejected, "batch.line.duplicate"},
		{4, ItemRejected, "batch.line.char_not_allowed"}, {4, ItemRejected, "batch.line.unknown"},
		{5, ItemDone, ""}}
	if len(items) != len(want) {
		t.Fatalf("%d items: %+v", len(items), items)
	}
	for i, w := range want {
		if items[i].Line != w.line || items[i].Status != w.status || items[i].Problem.Key != w.err {
			t.Errorf("item %d: %+v, want %+v", i, items[i], w)
		}
	}
	if got := items[2].Problem.Args; len(got) != 1 || got[0] != "1" {
		t.Errorf("the duplicate names line %v, want 1", got)
	}
	if got := items[3].Problem.Args; len(got) != 1 || got[0] != "'/'" {
		t.Errorf("the malformed number names %v, want '/'", got)
	}
	if items[5].Note != NoteAlreadyArchived || items[5].ArchiveID != "ARC-9" || items[5].Stage != "archived" {
		t.Errorf("archived: %+v", items[5])
	}
	if items[0].Stage != "signature" || items[4].Stage != "" {
		t.Errorf("the stage found is kept on the line, only there: %q, %q", items[0].Stage, items[4].Stage)
	}
}

// TestReplicasShareJobs: a job started on one replica is read, cancelled or resumed on another
// (both on one database), and a replica that stopped hands its job over.
func TestReplicasShareJobs(t *testing.T) {
	statedbtest.Each(t, testReplicasShareJobs)
}

func testReplicasShareJobs(t *testing.T, db *statedb.DB) {
	v2 := newFake()
	v2.delay = 10 * time.Millisecond
	a := NewManager(Options{DB: db, Archiver: v2, Concurrency: 2})
	b := NewManager(Options{DB: db, Archiver: v2, Concurrency: 2})
	defer b.Close()
	ctx := context.Background()
	j, err := a.Create(ctx, "alice", "", items(100))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Start(ctx, j.ID, "alice", "token", time.Time{}); err != nil {
		t.Fatal(err)
	}
	// Replica b shows the progress replica a writes.
	waitFor(t, b, j.ID, func(j *Job) bool { return j.Counts().Done >= 10 && j.Status == StatusRunning })
	a.Close() // replica a stops mid-job
	b.Run()   // replica b picks it up
	end := waitFor(t, b, j.ID, func(j *Job) bool { return j.Status == StatusFinished })
	if c := end.Counts(); c.Done != 100 || end.Resumes != 1 {
		t.Fatalf("%+v resumes %d", c, end.Resumes)
	}
	v2.mu.Lock()
	defer v2.mu.Unlock()
	for n, calls := range v2.calls {
		if calls != 1 {
			t.Errorf("%s archived %d times", n, calls)
		}
	}
}

// TestResumeAfterCrash: a replica died (its lease ran out) with one item in flight that the v2
// API had archived and one it had not; the next replica checks both before archiving, so the
// first is not archived again and the second is.
//
// The dead replica's lease ended a moment ago and the v2 timeout is 300 ms: the lines it may have
// sent are read back only once its last call can no longer be answered.
func TestResumeAfterCrash(t *testing.T) {
	statedbtest.Each(t, testResumeAfterCrash)
}

func testResumeAfterCrash(t *testing.T, db *statedb.DB) {
	v2 := &checkTimingV2{fakeV2: newFake()}
	v2.archived["C-001"] = "ARC-C-001" // archived by the dead replica just before it died
	const callTimeout = 300 * time.Millisecond
	m := NewManager(Options{DB: db, Archiver: v2, Concurrency: 2, CallTimeout: callTimeout, ScanInterval: 20 * time.Millisecond})
	defer m.Close()
	list := items(3)
	list[0].Status, list[1].Status = ItemRunning, ItemRunning
	leaseEnd := time.Now().Add(-50 * time.Millisecond)
	j := &Job{Owner: "alice", Status: StatusRunning, Token: "token", Lease: "dead-replica", LeaseUntil: leaseEnd, Items: list}
	putJob(t, db, j)
	m.Run()
	end := waitFor(t, m, j.ID, func(j *Job) bool { return j.Status == StatusFinished })
	if c := end.Counts(); c.Done != 3 || end.Resumes != 1 {
		t.Fatalf("%+v resumes %d", c, end.Resumes)
	}
	if end.Items[0].Note != "archived before the job was interrupted" || end.Items[0].ArchiveID != "ARC-C-001" {
		t.Errorf("item 1: %+v", end.Items[0])
	}
	v2.mu.Lock()
	defer v2.mu.Unlock()
	if v2.calls["C-001"] != 0 || v2.calls["C-002"] != 1 || v2.calls["C-003"] != 1 {
		t.Errorf("archive calls %v: want none for C-001, one each for the others", v2.calls)
	}
	if v2.firstCheck.Before(leaseEnd.Add(callTimeout)) {
		t.Errorf("a line the dead replica may have sent was read back %v after its lease ended, before the v2 timeout (%v)",
			v2.firstCheck.Sub(leaseEnd), callTimeout)
	}
}

// checkTimingV2 notes when a contract was first read back.
type checkTimingV2 struct {
	*fakeV2
	firstCheck time.Time
}

func (c *checkTimingV2) ArchiveID(ctx context.Context, token, number string) (string, bool, error) {
	c.mu.Lock()
	if c.firstCheck.IsZero() {
		c.firstCheck = time.Now()
	}
	c.mu.Unlock()
	return c.fakeV2.ArchiveID(ctx, token, number)
}

// TestItemProblemSurvivesTheDatabase: a line's problem is stored as a key with string arguments
// (JSON in its row), so it reads back as it was written and is translated when shown.
func TestItemProblemSurvivesTheDatabase(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		items, err := Validate(ctx, ParseText("C-1\nC-1"), 1, func(context.Context, string) (Found, error) {
			return Found{}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		m := NewManager(Options{DB: db})
		j, err := m.Create(ctx, "alice", "", items)
		if err != nil {
			t.Fatal(err)
		}
		back, err := m.Get(ctx, j.ID, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if got := back.Items[1].ProblemMessage(); got.Key != "batch.line.duplicate" || len(got.Args) != 1 || got.Args[0] != "1" {
			t.Errorf("read back %+v", got)
		}
		if (Item{Error: "old English text"}).ProblemMessage().Text != "old English text" {
			t.Error("an item stored before problems were messages lost its error")
		}
	})
}
