package customercache

import (
	"context"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/jobs"
)

// TestJobEffectsPutAJobsCustomerInItsOwnersList: a customer a job's line created (an import's)
// is in the list of the job's owner at once, with no new download, and in nobody else's; a line
// without a customer (the batch archive's) changes nothing.
func TestJobEffectsPutAJobsCustomerInItsOwnersList(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 8, Options{TTL: time.Hour})
	for _, user := range []string{"ann", "bob"} {
		if _, err := f.cache.Get(userCtx(user), SubjectKey(user)); err != nil {
			t.Fatal(err)
		}
	}
	created, err := f.api.Customers.Create(userCtx("ann"), apiclient.CustomerInput{Name: "Quarzo Import S.p.A.", TaxID: "IT10987654321", Segment: "BUSINESS"})
	if err != nil {
		t.Fatal(err)
	}
	effects := jobs.AllEffects{JobEffects{Cache: f.cache}}
	effects.LineDone(context.Background(), jobs.LineDone{Kind: jobs.KindArchive, Owner: "ann", Item: jobs.Item{Number: "C-2026-000001"}})
	effects.LineDone(context.Background(), jobs.LineDone{Kind: jobs.KindCustomerImport, Owner: "ann", Outcome: jobs.Outcome{Customer: created}})

	ann, err := f.cache.Get(userCtx("ann"), SubjectKey("ann"))
	if err != nil {
		t.Fatal(err)
	}
	if res := ann.Search(Query{Text: "quarzo import", Limit: 10}); res.Total != 1 || res.Rows[0].ID != created.ID {
		t.Fatalf("the owner's list after the line: %+v", res)
	}
	bob, err := f.cache.Get(userCtx("bob"), SubjectKey("bob"))
	if err != nil {
		t.Fatal(err)
	}
	if res := bob.Search(Query{Text: "quarzo import", Limit: 10}); res.Total != 0 {
		t.Errorf("another person's list has the job's customer: %+v", res)
	}
	if got := len(f.listRequests(2)); got != 2 {
		t.Errorf("%d list requests, want the two first loads only", got)
	}
}
