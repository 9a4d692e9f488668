package jobs

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/v2sim"
)

const (
	crashLease = 400 * time.Millisecond
	// crashV2Timeout is the child's v2 timeout: lines a killed child may have sent are read back
	// that long after its lease ended.
	crashV2Timeout = 500 * time.Millisecond
)

// TestMain is also the crash test's child: the test runs the batch's runner in a child process
// (statedbtest.Crash) so it can be killed with SIGKILL at any moment, as a replica dies.
func TestMain(m *testing.M) {
	statedbtest.CrashMain(m, crashChild)
}

// crashChild runs the job args[1] with the real v2 client against the simulator at args[0]
// until the job is no longer active (or until it is killed).
func crashChild(db *statedb.DB, args []string) error {
	v2URL, jobID := args[0], args[1]
	api, err := apiclient.New(v2URL, apiclient.WithTimeout(crashV2Timeout))
	if err != nil {
		return err
	}
	m := NewManager(Options{DB: db, Archiver: V2{API: api}, Concurrency: 4, LeaseTerm: crashLease, CallTimeout: crashV2Timeout, ScanInterval: 50 * time.Millisecond})
	m.Run()
	defer m.Close()
	return statedbtest.PollUntil(func() (bool, error) {
		j, err := loadJob(context.Background(), db.SQL, jobID, "")
		if err != nil {
			return false, err
		}
		return !j.Active(), nil
	})
}

// TestSIGKILLNeverArchivesTwice kills the process running a batch with SIGKILL at random moments,
// several times a batch, over many batches, on each engine, against the simulator in strict
// archive mode: every contract ends archived exactly once (one successful archive call in the
// simulator's request log, no 409 for a second one), and the job finishes with every line done.
func TestSIGKILLNeverArchivesTwice(t *testing.T) {
	statedbtest.EachEngine(t, testSIGKILLNeverArchivesTwice)
}

func testSIGKILLNeverArchivesTwice(t *testing.T, engine statedb.Engine) {
	runs, perRun := statedbtest.Runs{Full: 6, Short: 2}.N(), 80
	sim := v2sim.New(v2sim.Options{StrictArchive: true, Faults: v2sim.Faults{Latency: 10 * time.Millisecond}})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = sim.Close() })
	all, err := sim.SeedContracts(runs * perRun)
	if err != nil {
		t.Fatal(err)
	}
	statedbtest.ParallelRuns(t, engine, runs, func(t *testing.T, run int, where string) {
		crashRun(t, sim, srv.URL, where, all[run*perRun:(run+1)*perRun])
	})
	archives := map[string]int{}
	for _, req := range sim.Requests() {
		if req.Endpoint == "contracts.archive" && req.Status == 200 {
			parts := strings.Split(req.EscapedPath, "/")
			archives[parts[len(parts)-2]]++
		}
	}
	for _, n := range all {
		if archives[n] != 1 {
			t.Errorf("contract %s archived %d times", n, archives[n])
		}
	}
	if c := sim.ArchiveConflicts(); c != 0 {
		t.Errorf("%d second archive calls refused by the simulator", c)
	}
}

// crashRun stores a queued job of numbers, starts and kills runner processes a few times, then
// lets one finish, and checks the job's end state.
func crashRun(t *testing.T, sim *v2sim.Server, v2URL, where string, numbers []string) {
	ctx := context.Background()
	m := NewManager(Options{DB: statedbtest.OpenShared(t, where)})
	list := make([]Item, len(numbers))
	for i, n := range numbers {
		list[i] = Item{Line: i + 1, Number: n, Status: ItemPending}
	}
	j, err := m.Create(ctx, "alice", "Alice", list)
	if err != nil {
		t.Fatal(err)
	}
	// Queued by Start on a closed manager: this process never runs it.
	m.Close()
	if _, err := m.Start(ctx, j.ID, "alice", "token", time.Time{}); err != nil {
		t.Fatal(err)
	}
	mine := map[string]bool{}
	for _, n := range numbers {
		mine[n] = true
	}
	archiveCalls := func() int {
		count := 0
		for _, req := range sim.Requests() {
			if parts := strings.Split(req.EscapedPath, "/"); req.Endpoint == "contracts.archive" && mine[parts[len(parts)-2]] {
				count++
			}
		}
		return count
	}
	kills := statedbtest.Crash(t, where, []string{v2URL, j.ID}, len(numbers), archiveCalls)
	end, err := m.Get(ctx, j.ID, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if c := end.Counts(); end.Status != StatusFinished || c.Done != len(numbers) {
		t.Fatalf("job %s, counts %+v", end.Status, c)
	}
	if end.Resumes == 0 {
		t.Fatalf("no runner was killed mid-batch (%d kills)", kills)
	}
	t.Logf("%d kills, %d resumes, %d lines verified", kills, end.Resumes, end.Verified())
}
