package customerimport

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/customerrules"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/jobs/kindtest"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/v2sim"
)

// kind is the import, for kindtest's crash and outage runs.
var kind = kindtest.Kind{Name: jobs.KindCustomerImport, New: func(api *apiclient.Client) jobs.Kind { return &Kind{API: api} }}

// TestMain is also the crash test's child: the test runs the import's runner in a child process
// (statedbtest.Crash) so it can be killed with SIGKILL at any moment, as a replica dies; the
// simulator judges: every line's tax id belongs to exactly one customer (0 lost), created by
// exactly one successful create, and no create refused for a tax id already used (a line sent
// twice: the v2 API refuses the second, so a create sent again without the check shows as a 409).
func TestMain(m *testing.M) {
	statedbtest.CrashMain(m, kind.CrashChild)
}

// importSim is a simulator (10 ms a call), its URL and a configurator id.
func importSim(t *testing.T) (*v2sim.Server, string, int64) {
	t.Helper()
	sim, v2URL, api := kindtest.Simulator(t, v2sim.Options{Faults: v2sim.Faults{Latency: 10 * time.Millisecond}})
	cfgs, err := api.CPQ.List(apiclient.WithToken(context.Background(), "token"))
	if err != nil || len(cfgs) == 0 {
		t.Fatalf("configurators %v: %v", cfgs, err)
	}
	return sim, v2URL, int64(cfgs[0].ID)
}

// taxID is the tax id of line i of run (unique, and none contains another).
func taxID(run, i int) string { return fmt.Sprintf("ZZ%02d%06d", run, i) }

// runLines are n included new lines of run, each a customer with its own tax id; every fifth one
// skipped by the person (left out, never sent).
func runLines(t *testing.T, run, n int, cpqID int64) (items []jobs.Item, included []string) {
	t.Helper()
	for i := range n {
		l := StoredLine{Position: i, Checked: Checked{Line: Line{Row: i + 2, Fields: customerrules.Fields{
			Name: fmt.Sprintf("Crash %d line %d", run, i), TaxID: taxID(run, i), Segment: "BUSINESS", City: "Milano", Country: "IT"}},
			Verdict: VerdictNew, Included: i%5 != 4}}
		it, err := RunItem("crash.csv", l, cpqID)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
		if l.Included {
			included = append(included, l.Fields.TaxID)
		}
	}
	return items, included
}

// createCalls counts the creates per tax id: answered 201, and refused.
func createCalls(sim *v2sim.Server) (ok, refused map[string]int) {
	ok, refused = map[string]int{}, map[string]int{}
	for _, req := range sim.Requests() {
		if req.Method != http.MethodPost || strings.TrimSuffix(req.EscapedPath, "/") != "/v2/customer" {
			continue
		}
		_, rest, _ := strings.Cut(req.Body, `"taxId":"`)
		tax, _, _ := strings.Cut(rest, `"`)
		switch {
		case req.Status == http.StatusCreated || req.Status == http.StatusOK:
			ok[tax]++
		case req.Status >= 400:
			refused[tax]++
		}
	}
	return ok, refused
}

// checkCreated fails the test unless every tax id of want has exactly one customer, created by
// one successful create and no refused one, and no other tax id of the runs was created.
func checkCreated(t *testing.T, sim *v2sim.Server, v2URL string, want []string, skipped []string) {
	t.Helper()
	api := kindtest.Reader(t, v2URL)
	ok, refused := createCalls(sim)
	have := map[string]int{}
	if _, _, err := api.Customers.ListEach(apiclient.WithToken(context.Background(), "token"), "", func(c *apiclient.Customer) error {
		have[c.TaxID]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	lost, doubled := 0, 0
	for _, tax := range want {
		if ok[tax] != 1 || refused[tax] > 0 || have[tax] != 1 {
			t.Errorf("tax id %s: %d creates, %d refused, %d customers", tax, ok[tax], refused[tax], have[tax])
		}
		if have[tax] == 0 {
			lost++
		}
		if have[tax] > 1 || ok[tax] > 1 || refused[tax] > 0 {
			doubled++
		}
	}
	for _, tax := range skipped {
		if have[tax] > 0 || ok[tax]+refused[tax] > 0 {
			t.Errorf("skipped tax id %s was sent", tax)
		}
	}
	if lost > 0 || doubled > 0 {
		t.Fatalf("%d customers lost, %d created (or sent) twice", lost, doubled)
	}
}

func skippedOf(items []jobs.Item) []string {
	var out []string
	for _, it := range items {
		if it.Status == jobs.ItemRejected {
			out = append(out, it.Number)
		}
	}
	return out
}

// TestImportSIGKILLNeverCreatesACustomerTwice kills the process running an import with SIGKILL at
// random moments, several times a job, over several jobs, on each engine: every included line's
// customer exists once (0 lost), created by one create and none sent again (0 doubled), the
// skipped lines are never sent, and the job finishes with every included line done.
func TestImportSIGKILLNeverCreatesACustomerTwice(t *testing.T) {
	statedbtest.EachEngine(t, testSIGKILL)
}

func testSIGKILL(t *testing.T, engine statedb.Engine) {
	runs, perRun := statedbtest.Runs{Full: 4, Short: 2}.N(), 60
	sim, v2URL, cpqID := importSim(t)
	var want, skipped []string
	type plan struct {
		items []jobs.Item
		taxes []string
	}
	plans := make([]plan, runs)
	for run := range runs {
		items, included := runLines(t, run, perRun, cpqID)
		plans[run] = plan{items, included}
		want = append(want, included...)
		skipped = append(skipped, skippedOf(items)...)
	}
	statedbtest.ParallelRuns(t, engine, runs, func(t *testing.T, run int, where string) {
		crashRun(t, sim, v2URL, where, plans[run].items, plans[run].taxes)
	})
	checkCreated(t, sim, v2URL, want, skipped)
}

// crashRun stores a queued import of items, starts and kills runner processes a few times, then
// lets one finish, and checks the job's end state.
func crashRun(t *testing.T, sim *v2sim.Server, v2URL, where string, items []jobs.Item, taxes []string) {
	mine := map[string]bool{}
	for _, tax := range taxes {
		mine[tax] = true
	}
	sent := func() int {
		ok, refused := createCalls(sim)
		n := 0
		for tax := range mine {
			n += ok[tax] + refused[tax]
		}
		return n
	}
	end := kind.Crash(t, where, v2URL, items, len(taxes), sent)
	if c := end.Counts(); end.Status != jobs.StatusFinished || c.Done != len(taxes) || c.Rejected != len(items)-len(taxes) {
		t.Fatalf("job %s, counts %+v, e.g. %+v", end.Status, c, end.Items[0])
	}
	for _, it := range end.Items {
		if it.Status == jobs.ItemDone && RunResultOf(it).CustomerID <= 0 {
			t.Fatalf("line %d done without the new customer's id: %+v", it.Line, it)
		}
	}
}
