package customerimport

import (
	"context"
	"errors"
	"testing"

	"github.com/cpqportal/portal/internal/customerrules"
	"github.com/cpqportal/portal/internal/jobs"
)

// TestRunItemsLeaveOutWhatTheDryRunDid: only included new or possible lines are pending; the
// others are left out with why, and every line carries its fields for the create.
func TestRunItemsLeaveOutWhatTheDryRunDid(t *testing.T) {
	f := customerrules.Fields{Name: "Alfa S.r.l.", TaxID: "IT01234567890", Segment: "BUSINESS"}
	for _, c := range []struct {
		verdict  Verdict
		included bool
		status   jobs.ItemStatus
		problem  string
	}{
		{VerdictNew, true, jobs.ItemPending, ""},
		{VerdictPossible, true, jobs.ItemPending, ""},
		{VerdictNew, false, jobs.ItemRejected, "import.run.skipped"},
		{VerdictDuplicate, true, jobs.ItemRejected, "import.run.skipped_duplicate"},
		{VerdictInvalid, true, jobs.ItemRejected, "import.run.skipped_invalid"},
	} {
		it, err := RunItem("f.csv", StoredLine{Position: 4, Checked: Checked{Line: Line{Row: 6, Fields: f}, Verdict: c.verdict, Included: c.included}}, 7)
		if err != nil {
			t.Fatal(err)
		}
		l, err := RunLineOf(it)
		if err != nil || l.Fields != f || l.Row != 6 || l.CPQID != 7 || l.File != "f.csv" || it.Line != 5 {
			t.Fatalf("%s: line %+v %+v: %v", c.verdict, it, l, err)
		}
		if it.Status != c.status || it.Problem.Key != c.problem {
			t.Errorf("%s included %v: %s %q, want %s %q", c.verdict, c.included, it.Status, it.Problem.Key, c.status, c.problem)
		}
	}
}

// TestCheckOfALineWithoutATaxIDNeverAllowsAResend: a maybe-sent line without a tax id cannot be
// looked up, so its check answers an error (the engine then never sends it again) naming why.
func TestCheckOfALineWithoutATaxIDNeverAllowsAResend(t *testing.T) {
	it, err := RunItem("f.csv", StoredLine{Checked: Checked{Line: Line{Row: 2, Fields: customerrules.Fields{Name: "Beta"}}, Verdict: VerdictNew, Included: true}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, done, err := (&Kind{}).Check(context.Background(), "token", it)
	var pe *jobs.ProblemError
	if done || !errors.As(err, &pe) || pe.Message.Key != "import.run.unverifiable" {
		t.Fatalf("done %v, err %v", done, err)
	}
}
