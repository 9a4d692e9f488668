// Package kindtest runs a job kind (a jobs.Kind that calls the v2 API) through the job engine's
// hard cases for the kind's own tests: two replicas through a database outage
// (statedbtest.EachOutage), and runner processes killed with SIGKILL (statedbtest.Crash). What
// the v2 API must have seen afterwards (nothing sent twice, nothing lost) is the kind's to check.
//
// The job engine's own tests cannot use it (it imports package jobs); they have the same cases
// for the batch archive.
package kindtest

import (
	"context"
	"math/rand/v2"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/v2sim"
)

const (
	// Lease is the replicas' lease term: short, so the job of a killed or stalled runner is taken
	// over soon.
	Lease = 400 * time.Millisecond
	// CrashV2Timeout is a crash child's v2 timeout: lines a killed child may have sent are read
	// back that long after its lease ended.
	CrashV2Timeout = 500 * time.Millisecond
	// OutageV2Timeout is the outage replicas' v2 timeout.
	OutageV2Timeout = 200 * time.Millisecond
)

// Kind is the kind under test.
type Kind struct {
	// Name is the kind's name in jobs.Options.Kinds (jobs.KindHandover...).
	Name string
	// New is the kind's runner calling the v2 API through api.
	New func(api *apiclient.Client) jobs.Kind
}

// Replica is a manager running the kind's jobs against the v2 API at v2URL, with timeout for
// each v2 call, as one replica of several does.
func (k Kind) Replica(db *statedb.DB, v2URL string, timeout time.Duration) (*jobs.Manager, error) {
	api, err := apiclient.New(v2URL, apiclient.WithTimeout(timeout))
	if err != nil {
		return nil, err
	}
	return jobs.NewManager(jobs.Options{DB: db, Kinds: map[string]jobs.Kind{k.Name: k.New(api)}, Concurrency: 4,
		LeaseTerm: Lease, CallTimeout: timeout, ScanInterval: 50 * time.Millisecond, MaxDrafts: 100}), nil
}

// CrashChild is the child of statedbtest.CrashMain (the TestMain of the kind's package): it runs the job args[1] against the v2 API
// at args[0] until the job is no longer active (or until it is killed).
func (k Kind) CrashChild(db *statedb.DB, args []string) error {
	v2URL, jobID := args[0], args[1]
	m, err := k.Replica(db, v2URL, CrashV2Timeout)
	if err != nil {
		return err
	}
	m.Run()
	defer m.Close()
	return statedbtest.PollUntil(func() (bool, error) {
		j, err := m.Get(context.Background(), jobID, "alice")
		if err != nil {
			return false, err
		}
		return !j.Active(), nil
	})
}

// Crash stores a queued job of items in the database where (statedbtest.Shared), starts and
// kills runner processes (statedbtest.Crash, against the v2 API at v2URL) a few times,
// each once sent (the job's calls the v2 API saw so far) reached a random share of total, then
// lets one finish. It fails t unless a runner was killed mid-job, and returns the job as it ended
// for the caller to check its lines.
func (k Kind) Crash(t *testing.T, where, v2URL string, items []jobs.Item, total int, sent func() int) *jobs.Job {
	t.Helper()
	ctx := context.Background()
	m := jobs.NewManager(jobs.Options{DB: statedbtest.OpenShared(t, where)})
	j, err := m.CreateKind(ctx, k.Name, "alice", "Alice", items)
	if err != nil {
		t.Fatal(err)
	}
	m.Close() // a manager that runs nothing: Start only queues the job
	if _, err := m.Start(ctx, j.ID, "alice", "token", time.Time{}); err != nil {
		t.Fatal(err)
	}
	kills := statedbtest.Crash(t, where, []string{v2URL, j.ID}, total, sent)
	end, err := m.Get(ctx, j.ID, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if end.Resumes == 0 {
		t.Fatalf("no runner was killed mid-job (%d kills)", kills)
	}
	t.Logf("%d kills, %d resumes, %d lines checked", kills, end.Resumes, end.Verified())
	return end
}

// Outage runs a job of items on two replicas of db against the v2 API at v2URL and calls down,
// then up, at random moments of it (statedbtest.EachOutage's). It waits for the job to finish and
// fails t unless it ends with done lines done, none left or failed, no token, and no line still
// marked as maybe sent. sent counts the job's calls the v2 API answered so far (for the log).
func (k Kind) Outage(t *testing.T, db *statedb.DB, v2URL string, items []jobs.Item, done int, down, up func(), sent func() int) {
	t.Helper()
	a, err := k.Replica(db, v2URL, OutageV2Timeout)
	if err != nil {
		t.Fatal(err)
	}
	b, err := k.Replica(db, v2URL, OutageV2Timeout)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	j, err := a.CreateKind(ctx, k.Name, "alice", "Alice", items)
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
	sentAtDown := sent()
	time.Sleep(time.Duration(100+rand.IntN(600)) * time.Millisecond)
	up()
	var end *jobs.Job
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got, err := a.Get(ctx, j.ID, "alice"); err == nil && got.Status == jobs.StatusFinished {
			end = got
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the %s job did not finish after the database came back", k.Name)
		}
	}
	if c := end.Counts(); c.Done != done || c.Left != 0 || c.Failed != 0 {
		t.Fatalf("counts %+v", c)
	}
	if end.Token != "" {
		t.Fatal("the finished job still holds its token")
	}
	for _, it := range end.Items {
		if it.MaybeSent {
			t.Fatalf("line %d still marked as maybe sent: %+v", it.Line, it)
		}
	}
	t.Logf("%d sent when the database went away, resumes %d, lines checked %d", sentAtDown, end.Resumes, end.Verified())
}

// Reader waits for the simulator's records of its last answers (it records a call after
// answering it) and returns a client reading the v2 API at v2URL: what a check of the v2 API's
// end state starts with.
func Reader(t *testing.T, v2URL string) *apiclient.Client {
	t.Helper()
	time.Sleep(50 * time.Millisecond)
	api, err := apiclient.New(v2URL)
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// Simulator starts the v2 simulator with opts for the rest of t and returns it, its URL and a
// client of it.
func Simulator(t *testing.T, opts v2sim.Options) (*v2sim.Server, string, *apiclient.Client) {
	t.Helper()
	sim := v2sim.New(opts)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = sim.Close() })
	api, err := apiclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return sim, srv.URL, api
}
