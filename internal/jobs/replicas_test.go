package jobs

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestReplicasNeverArchiveTwiceWhenALeaseExpires: two replicas (each its own connection pool)
// on one PostgreSQL, their clocks two hours apart; the one running the batch stalls for longer
// than its lease (a long GC pause, a frozen VM) in the middle of it. The other takes the job over
// by the database's clock; the stalled one, waking, finds its lease version raised and writes and
// sends nothing more. Every contract is archived exactly once and the batch finishes.
func TestReplicasNeverArchiveTwiceWhenALeaseExpires(t *testing.T) {
	url := statedbtest.PostgresURL(t)
	dbA, dbB := statedbtest.OpenURL(t, url), statedbtest.OpenURL(t, url)
	runs := 3
	if testing.Short() {
		runs = 1
	}
	for run := range runs {
		t.Run(fmt.Sprint(run), func(t *testing.T) {
			v2 := &strictV2{archived: map[string]bool{}, delay: 3 * time.Millisecond}
			opts := func(db *statedb.DB, skew time.Duration) Options {
				return Options{DB: db, Archiver: v2, Concurrency: 4, LeaseTerm: 400 * time.Millisecond, CallTimeout: 200 * time.Millisecond,
					ScanInterval: 50 * time.Millisecond, MaxDrafts: 100, Now: func() time.Time { return time.Now().Add(skew) }}
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
			j, err := a.Create(ctx, "alice", "", items(150))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Start(ctx, j.ID, "alice", "token", time.Time{}); err != nil { // a claims it at once
				t.Fatal(err)
			}
			a.Run()
			b.Run()
			end := waitFor(t, b, j.ID, func(j *Job) bool { return j.Status == StatusFinished })
			v2.mu.Lock()
			defer v2.mu.Unlock()
			if v2.doubles != 0 || len(v2.archived) != 150 || end.Counts().Done != 150 {
				t.Fatalf("%d archived, %d twice, counts %+v", len(v2.archived), v2.doubles, end.Counts())
			}
			if end.Resumes == 0 {
				t.Fatal("the job was never taken over")
			}
			t.Logf("resumes %d, lines checked %d", end.Resumes, end.Verified())
		})
	}
}
