package jobs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/v2sim"
)

// The crash test runs the job runner in a child process (this test binary, started again with
// crashChildEnv set) so it can be killed with SIGKILL at any moment, as a replica dies.
const (
	// crashChildEnv is the child's database: a PostgreSQL URL, or the directory of a SQLite one.
	crashChildEnv = "JOBS_CRASH_CHILD_DB"
	crashV2Env    = "JOBS_CRASH_CHILD_V2"
	crashJobEnv   = "JOBS_CRASH_CHILD_JOB"
	crashLease    = 400 * time.Millisecond
	// crashV2Timeout is the child's v2 timeout: lines a killed child may have sent are read back
	// that long after its lease ended.
	crashV2Timeout = 500 * time.Millisecond
)

// crashDBOptions opens the database named as crashChildEnv names it.
func crashDBOptions(where string) statedb.Options {
	if strings.HasPrefix(where, "postgres") {
		return statedb.Options{URL: where, MaxOpenConns: 4}
	}
	return statedb.Options{Dir: where}
}

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		os.Exit(crashChild())
	}
	os.Exit(m.Run())
}

// crashChild runs the job of crashJobEnv with the real v2 client against the simulator until
// the job is no longer active (or until it is killed).
func crashChild() int {
	db, err := statedb.Open(context.Background(), crashDBOptions(os.Getenv(crashChildEnv)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer db.Close()
	api, err := apiclient.New(os.Getenv(crashV2Env), apiclient.WithTimeout(crashV2Timeout))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	m := NewManager(Options{DB: db, Archiver: V2{API: api}, Concurrency: 4, LeaseTerm: crashLease, CallTimeout: crashV2Timeout, ScanInterval: 50 * time.Millisecond})
	m.Run()
	defer m.Close()
	for {
		j, err := loadJob(context.Background(), db.SQL, os.Getenv(crashJobEnv), "")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if !j.Active() {
			return 0
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSIGKILLNeverArchivesTwice kills the process running a batch with SIGKILL at random moments,
// several times a batch, over many batches, on each engine, against the simulator in strict
// archive mode: every contract ends archived exactly once (one successful archive call in the
// simulator's request log, no 409 for a second one), and the job finishes with every line done.
func TestSIGKILLNeverArchivesTwice(t *testing.T) {
	for _, engine := range []statedb.Engine{statedb.SQLite, statedb.Postgres} {
		t.Run(string(engine), func(t *testing.T) { testSIGKILLNeverArchivesTwice(t, engine) })
	}
}

func testSIGKILLNeverArchivesTwice(t *testing.T, engine statedb.Engine) {
	runs, perRun := 6, 80
	if testing.Short() {
		runs = 2
	}
	sim := v2sim.New(v2sim.Options{StrictArchive: true, Faults: v2sim.Faults{Latency: 10 * time.Millisecond}})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = sim.Close() })
	all, err := sim.SeedContracts(runs * perRun)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("runs", func(t *testing.T) {
		for run := range runs {
			numbers := all[run*perRun : (run+1)*perRun]
			t.Run(fmt.Sprint(run), func(t *testing.T) {
				t.Parallel()
				where := t.TempDir()
				if engine == statedb.Postgres {
					where = statedbtest.PostgresURL(t)
				}
				crashRun(t, sim, srv.URL, where, numbers)
			})
		}
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
	db, err := statedb.Open(ctx, crashDBOptions(where))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m := NewManager(Options{DB: db})
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
	child := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+where, crashV2Env+"="+v2URL, crashJobEnv+"="+j.ID)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
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
	kills := 2 + rand.IntN(3)
	target := 0
	for k := range kills {
		cmd := child()
		// At a random moment of the batch: once a random share of its archive calls was sent.
		step := (len(numbers)*9/10 - target) / (kills - k)
		target += 1 + rand.IntN(max(step, 1))
		for deadline := time.Now().Add(10 * time.Second); archiveCalls() < target && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	cmd := child()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("last runner: %v", err)
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the last runner did not finish the job")
	}
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
