package handlers

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/jobs/jobstest"
)

// TestBatchArchiveZipBombIsAClear4xx: a 256 MiB zip bomb in a workbook of a few hundred KB is
// answered 422 with a message for the person, and nothing reaches the v2 API.
func TestBatchArchiveZipBombIsAClear4xx(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	bomb, err := jobstest.ZipBombXLSX([]string{"C-1"}, 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("file", "list.xlsx")
	_, _ = part.Write(bomb)
	_ = mw.Close()
	before := len(e.sim.Requests())
	r := e.p.do(t, e.user, http.MethodPost, "/contracts/batch-archive", &body, map[string]string{"Content-Type": mw.FormDataContentType()})
	if r.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("zip bomb: %d", r.StatusCode)
	}
	msg := strings.Join(strings.Fields(parseHTML(t, r.body).Find(`[data-testid="batch-file-error"]`).Text()), " ")
	if !strings.Contains(msg, "unpacks to more than 16 MiB") {
		t.Fatalf("zip bomb message %q", msg)
	}
	if after := len(e.sim.Requests()); after != before {
		t.Fatalf("%d v2 calls for a refused file", after-before)
	}
}

// TestBatchArchiveStoresNoEmptyDraftAndLimitsDrafts: a list with no line to archive is answered
// 422 with the lines' problems and stores nothing (the draft quota proves it), and a user's
// drafts stop at the quota with a clear 429.
func TestBatchArchiveStoresNoEmptyDraftAndLimitsDrafts(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	for range 3 {
		r := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"numbers": {"NO-SUCH-1\nNO-SUCH-2"}})
		text := strings.Join(strings.Fields(parseHTML(t, r.body).Find(`main`).Text()), " ")
		if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(text, "None of the 2 contract numbers needs archiving") ||
			!strings.Contains(text, "line 1: ") {
			t.Fatalf("nothing to archive: %d %q", r.StatusCode, text)
		}
	}
	_, contract := e.newContract(t)
	for i := range jobs.DefaultMaxDrafts {
		r := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"numbers": {contract.ContractNumber}, "include_unsent": {"1"}})
		if r.StatusCode != http.StatusSeeOther {
			t.Fatalf("draft %d: %d", i+1, r.StatusCode)
		}
	}
	r := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"numbers": {contract.ContractNumber}, "include_unsent": {"1"}})
	text := strings.Join(strings.Fields(parseHTML(t, r.body).Find(`main`).Text()), " ")
	if r.StatusCode != http.StatusTooManyRequests || !strings.Contains(text, "You already have 20 batches that were checked but not started") {
		t.Fatalf("over the draft quota: %d %q", r.StatusCode, text)
	}
}
