package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cpqportal/portal/internal/v2sim"
)

// TestBatchArchiveRefusedContractIsARefusedLine: a contract the v2 API does not let the person
// read (403: the simulator refuses the first look-up) is a refused line with its reason, next to
// the other lines' own reasons, never a 403 page for the whole list nor a Go error chain.
func TestBatchArchiveRefusedContractIsARefusedLine(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	_, refused := e.newContract(t)
	e.sim.SetFault("contracts.getbynumber", v2sim.Fault{Status: http.StatusForbidden, Times: 1})
	r := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"numbers": {refused.ContractNumber + "\nC-0000-404404"}, "include_unsent": {"1"}})
	if r.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("a list of a refused and an unknown contract: %d, want 422 with each line's reason: %.300s", r.StatusCode, r.body)
	}
	for _, want := range []string{"not allowed: the CPQ service does not let you read this contract", "unknown contract", refused.ContractNumber} {
		if !strings.Contains(r.body, want) {
			t.Errorf("the answer lacks %q", want)
		}
	}
	for _, leak := range []string{"apiclient:", ": GET /v2", "%!"} {
		if strings.Contains(r.body, leak) {
			t.Errorf("the answer shows %q", leak)
		}
	}
}
