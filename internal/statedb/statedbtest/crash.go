package statedbtest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
)

// EachEngine runs fn once per engine, as the subtests "sqlite" and "postgres", for tests whose
// databases more than one process opens (Shared).
func EachEngine(t *testing.T, fn func(t *testing.T, engine statedb.Engine)) {
	t.Helper()
	for _, engine := range []statedb.Engine{statedb.SQLite, statedb.Postgres} {
		t.Run(string(engine), func(t *testing.T) { fn(t, engine) })
	}
}

// Shared is a fresh database of engine that more than one process can open (OpenShared), named
// by a string a child process can be given: SQLite's directory, or PostgreSQL's URL.
func Shared(t testing.TB, engine statedb.Engine) string {
	t.Helper()
	if engine == statedb.Postgres {
		return PostgresURL(t)
	}
	return t.TempDir()
}

// OpenShared opens the database where names (from Shared), closed at the end of t.
func OpenShared(t testing.TB, where string) *statedb.DB {
	t.Helper()
	return open(t, sharedOptions(where))
}

func sharedOptions(where string) statedb.Options {
	if strings.HasPrefix(where, "postgres") {
		// A few connections each: a crash test starts many processes on one cluster.
		return statedb.Options{URL: where, MaxOpenConns: 4}
	}
	return statedb.Options{Dir: where}
}

// ParallelRuns runs fn n times, as the parallel subtests "runs/0", "runs/1"..., each on a fresh
// Shared database of engine, and returns when all of them have ended (so the caller can check
// what they did together).
func ParallelRuns(t *testing.T, engine statedb.Engine, n int, fn func(t *testing.T, run int, where string)) {
	t.Helper()
	t.Run("runs", func(t *testing.T) {
		for run := range n {
			t.Run(fmt.Sprint(run), func(t *testing.T) {
				t.Parallel()
				fn(t, run, Shared(t, engine))
			})
		}
	})
}

// A crash test runs its worker in a child process (the test binary, started again with crashEnv
// set) so it can be killed with SIGKILL at any moment, as a replica dies. crashEnv holds the
// child's database (Shared) and arguments; one name serves every package, as only the children
// of a test binary see it.
const crashEnv = "PORTAL_TEST_CRASH_CHILD"

// CrashMain is the TestMain of a package with a crash test. In a child started by Crash, it opens
// the child's database and calls child with it and the child's arguments, then exits: 0 when child
// returns nil, 2 (the error on stderr) otherwise. In the test process, it runs the tests.
func CrashMain(m *testing.M, child func(db *statedb.DB, args []string) error) {
	if spec := os.Getenv(crashEnv); spec != "" {
		os.Exit(crashChild(spec, child))
	}
	os.Exit(m.Run())
}

func crashChild(spec string, child func(db *statedb.DB, args []string) error) int {
	var parts []string // the database, then the arguments
	if err := json.Unmarshal([]byte(spec), &parts); err != nil || len(parts) == 0 {
		fmt.Fprintf(os.Stderr, "crash child: %q: %v\n", spec, err)
		return 2
	}
	db, err := statedb.Open(context.Background(), sharedOptions(parts[0]))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer db.Close()
	if err := child(db, parts[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// StartChild starts one CrashMain child on the database where with args and returns it running:
// for tests that kill a replica at a moment of their own choosing (the caller kills or waits).
func StartChild(t *testing.T, where string, args ...string) *exec.Cmd {
	t.Helper()
	spec, err := json.Marshal(append([]string{where}, args...))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+string(spec))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// PollUntil calls done every 20 ms until it reports true (nil) or fails (its error): a crash
// child's wait for its job to end.
func PollUntil(done func() (bool, error)) error {
	for {
		ok, err := done()
		if err != nil || ok {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Crash starts a child (CrashMain's child, on the database where with args) and kills it with
// SIGKILL, 2 to 4 times, each one once sent (how many calls the children sent so far) reached a
// random further share of up to nine tenths of total, or after 10 seconds; then it starts one
// last child and fails t unless that one ends without error within a minute. It returns the
// number of kills.
func Crash(t *testing.T, where string, args []string, total int, sent func() int) (kills int) {
	t.Helper()
	spec, err := json.Marshal(append([]string{where}, args...))
	if err != nil {
		t.Fatal(err)
	}
	child := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashEnv+"="+string(spec))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	kills = 2 + rand.IntN(3)
	target := 0
	for k := range kills {
		cmd := child()
		// At a random moment of the job: once a random share of its calls was sent.
		step := (total*9/10 - target) / (kills - k)
		target += 1 + rand.IntN(max(step, 1))
		for deadline := time.Now().Add(10 * time.Second); sent() < target && time.Now().Before(deadline); {
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
	return kills
}
