package jobs

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestDatabaseOutageNeverArchivesTwice takes the database away at a random moment of a batch run
// by two replicas, for a random time: PostgreSQL is stopped (fast shutdown: every connection cut)
// and started again on the same data; SQLite's write lock is held by another connection, so no
// write of the replicas passes. The runners send nothing without a committed in-flight mark,
// pause, and resume on their own once the database answers (no restart): every contract ends
// archived exactly once (the strict v2 counts any second archive), the job finishes with nothing
// pending and nothing left marked as maybe sent, and its token is gone.
func TestDatabaseOutageNeverArchivesTwice(t *testing.T) {
	statedbtest.EachOutage(t, statedbtest.Runs{Full: 6, Short: 2}, statedbtest.Runs{Full: 2, Short: 1}, outageRun)
}

// outageRun runs a 120-line batch on two replicas of db and calls down, then up, at random
// moments of it.
func outageRun(t *testing.T, db *statedb.DB, down, up func()) {
	v2 := &strictV2{archived: map[string]bool{}, delay: time.Millisecond}
	opts := Options{DB: db, Archiver: v2, Concurrency: 4, LeaseTerm: 400 * time.Millisecond, CallTimeout: 200 * time.Millisecond, ScanInterval: 50 * time.Millisecond}
	a, b := NewManager(opts), NewManager(opts)
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	j, err := a.Create(ctx, "alice", "Alice", items(120))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Start(ctx, j.ID, "alice", "token", time.Time{}); err != nil {
		t.Fatal(err)
	}
	b.Run()
	a.Run()
	time.Sleep(time.Duration(rand.IntN(60)) * time.Millisecond)
	down()
	v2.mu.Lock()
	archivedAtDown := len(v2.archived)
	v2.mu.Unlock()
	time.Sleep(time.Duration(100+rand.IntN(600)) * time.Millisecond)
	up()
	// The pages' reads may fail a moment longer (connections cut by the outage).
	var done *Job
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got, err := a.Get(ctx, j.ID, "alice"); err == nil && got.Status == StatusFinished {
			done = got
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the batch did not finish after the database came back")
		}
	}
	v2.mu.Lock()
	defer v2.mu.Unlock()
	if v2.doubles != 0 {
		t.Fatalf("%d contracts archived twice", v2.doubles)
	}
	if c := done.Counts(); c.Done != 120 || c.Left != 0 || c.Failed != 0 {
		t.Fatalf("counts %+v", c)
	}
	if len(v2.archived) != 120 {
		t.Fatalf("%d contracts archived, want 120", len(v2.archived))
	}
	if done.Token != "" {
		t.Fatal("the finished job still holds its token")
	}
	for _, it := range done.Items {
		if it.MaybeSent {
			t.Fatalf("line %d still marked as maybe sent: %+v", it.Line, it)
		}
	}
	t.Logf("%d archived when the database went away, resumes %d, lines checked %d", archivedAtDown, done.Resumes, done.Verified())
}
