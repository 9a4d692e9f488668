package handover

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/jobs/kindtest"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/v2sim"
)

// fromOwner's customers go to toOwner (the simulator's directory, A8).
const fromOwner, toOwner, otherOwner = 1001, 1002, 1005

// kind is the handover, for kindtest's crash and outage runs.
var kind = kindtest.Kind{Name: jobs.KindHandover, New: func(api *apiclient.Client) jobs.Kind { return &Kind{API: api} }}

// TestMain is also the crash test's child: the test runs the handover's runner in a child process
// (statedbtest.Crash) so it can be killed with SIGKILL at any moment, as a replica dies; the
// simulator's request log judges: every customer's owner changed by exactly one successful call,
// none refused for naming an owner the customer no longer has (a change sent twice), and every
// customer owned by the new owner in the end.
func TestMain(m *testing.M) {
	statedbtest.CrashMain(m, kind.CrashChild)
}

// simWithCustomers is a simulator (10 ms a call) whose first n customers are owned by fromOwner
// (every third one shared with otherOwner), and their ids.
func simWithCustomers(t *testing.T, n int) (*v2sim.Server, string, []int32) {
	t.Helper()
	sim, v2URL, api := kindtest.Simulator(t, v2sim.Options{Customers: n, Faults: v2sim.Faults{Latency: 10 * time.Millisecond}})
	ctx := apiclient.WithToken(context.Background(), "token")
	var ids []int32
	if _, _, err := api.Customers.ListItems(ctx, "", func(it *apiclient.CustomerListItem) error {
		ids = append(ids, it.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(ids) < n {
		t.Fatalf("the simulator has %d customers, want %d", len(ids), n)
	}
	ids = ids[:n]
	var wg sync.WaitGroup
	errs := make(chan error, len(ids))
	sem := make(chan struct{}, 8)
	for i, id := range ids {
		owners := []int64{fromOwner}
		if i%3 == 0 {
			owners = append(owners, otherOwner)
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := api.Customers.SetOwners(ctx, id, owners); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return sim, v2URL, ids
}

// lines are the handover lines of ids, fromOwner to toOwner.
func lines(t *testing.T, ids []int32) []jobs.Item {
	t.Helper()
	out := make([]jobs.Item, len(ids))
	for i, id := range ids {
		it, err := Item(i, Line{CustomerID: id, From: fromOwner, To: toOwner}, "customer "+strconv.Itoa(int(id)))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = it
	}
	return out
}

// changeCalls counts the owner change calls per customer id: answered 200, and refused.
func changeCalls(sim *v2sim.Server) (ok, refused map[string]int) {
	ok, refused = map[string]int{}, map[string]int{}
	for _, req := range sim.Requests() {
		if req.Method != http.MethodPut || !strings.HasSuffix(req.EscapedPath, "/owner/change") {
			continue
		}
		parts := strings.Split(req.EscapedPath, "/")
		id := parts[len(parts)-3]
		switch {
		case req.Status == http.StatusOK:
			ok[id]++
		case req.Status >= 400:
			refused[id]++
		}
	}
	return ok, refused
}

// checkHandedOver fails the test unless every customer of ids changed owner exactly once and is
// owned by toOwner (not fromOwner, and otherOwner kept) now.
func checkHandedOver(t *testing.T, sim *v2sim.Server, v2URL string, ids []int32) {
	t.Helper()
	api := kindtest.Reader(t, v2URL)
	ok, refused := changeCalls(sim)
	ctx := apiclient.WithToken(context.Background(), "token")
	lost, doubled := 0, 0
	for i, id := range ids {
		key := strconv.Itoa(int(id))
		if ok[key] > 1 || refused[key] > 0 {
			doubled++
			t.Errorf("customer %d: %d owner changes, %d refused", id, ok[key], refused[key])
		}
		c, err := api.Customers.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var owners []int64
		for _, o := range c.Owners {
			owners = append(owners, o.OwnerID)
		}
		if !slices.Contains(owners, toOwner) || slices.Contains(owners, fromOwner) || (i%3 == 0 && !slices.Contains(owners, otherOwner)) {
			lost++
			t.Errorf("customer %d owned by %v after the handover", id, owners)
		}
	}
	if lost > 0 || doubled > 0 {
		t.Fatalf("%d owner changes lost, %d done twice", lost, doubled)
	}
}

// TestHandoverSIGKILLNeverLosesOrDoublesAChange kills the process running a handover with
// SIGKILL at random moments, several times a job, over several jobs, on each engine: every
// customer ends owned by the new owner (0 lost), with one successful owner change call each and
// no second one (0 doubled), and the job finishes with every line done.
func TestHandoverSIGKILLNeverLosesOrDoublesAChange(t *testing.T) {
	statedbtest.EachEngine(t, testSIGKILL)
}

func testSIGKILL(t *testing.T, engine statedb.Engine) {
	runs, perRun := statedbtest.Runs{Full: 4, Short: 2}.N(), 60
	sim, v2URL, all := simWithCustomers(t, runs*perRun)
	statedbtest.ParallelRuns(t, engine, runs, func(t *testing.T, run int, where string) {
		crashRun(t, sim, v2URL, where, all[run*perRun:(run+1)*perRun])
	})
	checkHandedOver(t, sim, v2URL, all)
}

// crashRun stores a queued handover of ids, starts and kills runner processes a few times, then
// lets one finish, and checks the job's end state.
func crashRun(t *testing.T, sim *v2sim.Server, v2URL, where string, ids []int32) {
	mine := map[string]bool{}
	for _, id := range ids {
		mine[strconv.Itoa(int(id))] = true
	}
	sent := func() int {
		n := 0
		for _, req := range sim.Requests() {
			parts := strings.Split(req.EscapedPath, "/")
			if req.Method == http.MethodPut && strings.HasSuffix(req.EscapedPath, "/owner/change") && mine[parts[len(parts)-3]] {
				n++
			}
		}
		return n
	}
	end := kind.Crash(t, where, v2URL, lines(t, ids), len(ids), sent)
	if c := end.Counts(); end.Status != jobs.StatusFinished || c.Done != len(ids) {
		t.Fatalf("job %s, counts %+v, lines %+v", end.Status, c, failedLines(end))
	}
}

func failedLines(j *jobs.Job) []jobs.Item {
	var out []jobs.Item
	for _, it := range j.Items {
		if it.Status != jobs.ItemDone {
			out = append(out, it)
		}
	}
	return out
}
