package customerimport

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestImportDatabaseOutageNeverCreatesACustomerTwice takes the database away at a random moment
// of an import run by two replicas, for a random time: PostgreSQL is stopped (every connection
// cut) and started again on the same data; SQLite's write lock is held by another connection. The
// runners send nothing without a committed in-flight mark, pause, and resume once the database
// answers: every included line's customer exists once, created by one create and none sent again, and the job
// finishes with nothing pending, nothing left marked as maybe sent, and no token.
func TestImportDatabaseOutageNeverCreatesACustomerTwice(t *testing.T) {
	statedbtest.EachOutage(t, statedbtest.Runs{Full: 3, Short: 1}, statedbtest.Runs{Full: 2, Short: 1}, outageRun)
}

// outageRun runs a 90-line import on two replicas of db against the simulator and calls down,
// then up, at random moments of it.
func outageRun(t *testing.T, db *statedb.DB, down, up func()) {
	const n = 90
	sim, v2URL, cpqID := importSim(t)
	items, taxes := runLines(t, 90+rand.IntN(9), n, cpqID)
	a, err := newManager(db, v2URL, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newManager(db, v2URL, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	j, err := a.CreateKind(ctx, jobs.KindCustomerImport, "alice", "Alice", items)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Start(ctx, j.ID, "alice", "token", time.Time{}); err != nil {
		t.Fatal(err)
	}
	b.Run()
	a.Run()
	time.Sleep(time.Duration(50+rand.IntN(150)) * time.Millisecond)
	down()
	okAtDown, _ := createCalls(sim)
	time.Sleep(time.Duration(100+rand.IntN(600)) * time.Millisecond)
	up()
	var done *jobs.Job
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got, err := a.Get(ctx, j.ID, "alice"); err == nil && got.Status == jobs.StatusFinished {
			done = got
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the import did not finish after the database came back")
		}
	}
	checkCreated(t, sim, v2URL, taxes, skippedOf(items))
	if c := done.Counts(); c.Done != len(taxes) || c.Left != 0 || c.Failed != 0 {
		t.Fatalf("counts %+v", c)
	}
	if done.Token != "" {
		t.Fatal("the finished job still holds its token")
	}
	for _, it := range done.Items {
		if it.MaybeSent {
			t.Fatalf("line %d still marked as maybe sent: %+v", it.Line, it)
		}
	}
	t.Logf("%d created when the database went away, resumes %d, lines checked %d", len(okAtDown), done.Resumes, done.Verified())
}
