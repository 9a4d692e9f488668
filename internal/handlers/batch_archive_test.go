package handlers

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/v2sim"
)

func postForm(t *testing.T, p *testPortal, client *http.Client, path string, form url.Values) response {
	t.Helper()
	return p.do(t, client, http.MethodPost, path, strings.NewReader(form.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
}

// TestBatchArchiveJourneyAndOwnership: a checked list becomes a draft batch of its owner only;
// confirmed, it archives the contracts on the v2 API; the result CSV names every line with the
// formula-like one neutralised.
func TestBatchArchiveJourneyAndOwnership(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	_, first := e.newContract(t)
	_, second := e.newContract(t)

	empty := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"numbers": {"  \n "}})
	if empty.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(empty.body, "Enter at least one contract number") {
		t.Fatalf("empty list: %d", empty.StatusCode)
	}

	posted := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"numbers": {first.ContractNumber + "\n" + second.ContractNumber + ", =cmd|x"}, "include_unsent": {"1"}})
	batchPath := posted.Header.Get("Location")
	if posted.StatusCode != http.StatusSeeOther || !strings.HasPrefix(batchPath, "/contracts/batch-archive/") {
		t.Fatalf("check: %d to %q", posted.StatusCode, batchPath)
	}
	checked := e.p.get(t, e.user, batchPath, nil)
	doc := parseHTML(t, checked.body)
	if got := strings.Join(strings.Fields(doc.Find(`[data-testid="batch-preview-summary"]`).Text()), " "); !strings.HasPrefix(got, "2 contracts will be archived; 0 are already archived") {
		t.Fatalf("preview: %q", got)
	}
	if len(e.requestsTo("contracts.archive")) != 0 {
		t.Fatal("the check archived something")
	}

	other := e.p.login(t, "clerk", "clerk-demo") // another clerk: a batch is its owner's only
	for _, r := range []response{
		e.p.get(t, other, batchPath, nil),
		e.p.get(t, other, batchPath+"/result.csv", nil),
		postForm(t, e.p, other, batchPath+"/start", url.Values{}),
	} {
		if r.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s by someone else: %d, want 404", r.Request.Method, r.Request.URL.Path, r.StatusCode)
		}
	}
	if r := e.p.get(t, e.user, "/contracts/batch-archive/not-a-batch", nil); r.StatusCode != http.StatusBadRequest {
		t.Errorf("a malformed batch id: %d, want 400", r.StatusCode)
	}

	started := postForm(t, e.p, e.user, batchPath+"/start", url.Values{})
	if started.StatusCode != http.StatusSeeOther || started.Header.Get("Location") != batchPath {
		t.Fatalf("start: %d", started.StatusCode)
	}
	if again := postForm(t, e.p, e.user, batchPath+"/start", url.Values{}); again.StatusCode != http.StatusConflict {
		t.Errorf("starting twice: %d, want 409", again.StatusCode)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		progress := e.p.get(t, e.user, batchPath+"/progress", map[string]string{"HX-Request": "true"})
		status := parseHTML(t, progress.body).Find(`[data-testid="batch-progress"]`).AttrOr("data-status", "")
		if status == "Finished" {
			if strings.Contains(progress.body, "hx-trigger") {
				t.Error("a finished batch still polls")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the batch did not finish: %q", status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := len(e.requestsTo("contracts.archive")); n != 2 {
		t.Fatalf("%d archive calls, want 2", n)
	}
	result := e.p.get(t, e.user, batchPath+"/result.csv", nil)
	if !strings.HasPrefix(result.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("Content-Disposition %q", result.Header.Get("Content-Disposition"))
	}
	rows := parseExportCSV(t, result.body, ',')
	if len(rows) != 4 {
		t.Fatalf("CSV %q", rows)
	}
	if rows[1][0] != first.ContractNumber || rows[1][1] != "archived" || rows[1][2] == "" || rows[2][1] != "archived" {
		t.Errorf("archived lines: %q", rows[1:3])
	}
	if rows[3][0] != "'=cmd|x" || rows[3][1] != "left out" || rows[3][4] != "2" {
		t.Errorf("the formula-like line: %q (want it neutralised and left out)", rows[3])
	}
}

// TestWorklistAndExportsRefuseBadInput: malformed input is a 400 with a message, never a v2 call.
func TestWorklistAndExportsRefuseBadInput(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	for path, want := range map[string]string{
		"/audits/worklist?quotes=12a":                             "is not a quote id",
		"/audits/worklist?quotes=1&from=yesterday":                "From must be a day",
		"/audits/worklist?quotes=1&action=DROP":                   "Choose an action",
		"/audits/worklist?quotes=1&from=2026-11-02&to=2026-11-01": "before the",
		"/audits/worklist/export?format=pdf&quotes=1":             "csv or xlsx",
		"/customers/export?format=doc":                            "csv or xlsx",
	} {
		r := e.p.get(t, e.user, path, nil)
		if r.StatusCode != http.StatusBadRequest || !strings.Contains(r.body, want) {
			t.Errorf("%s: %d, want 400 with %q", path, r.StatusCode, want)
		}
	}
	if n := len(e.requestsTo("contracts.audit")); n != 0 {
		t.Errorf("%d audit calls for refused requests", n)
	}
}

// parseExportCSV reads an export as a spreadsheet in the reader's locale would: it must start
// with a UTF-8 byte-order mark and separate cells with comma.
func parseExportCSV(t *testing.T, body string, comma rune) [][]string {
	t.Helper()
	rest, ok := strings.CutPrefix(body, "\uFEFF")
	if !ok {
		t.Fatalf("the CSV has no byte-order mark: %.40q", body)
	}
	r := csv.NewReader(strings.NewReader(rest))
	r.Comma = comma
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("CSV with %q: %v", comma, err)
	}
	return rows
}

// TestBatchProgressWaitsForTheNextState (issue 27): the running batch's region asks for its next
// state with ?after=; the portal holds that request until the state differs (woken by the jobs
// manager), so the page follows the batch with a request per change, not one a second, and gets
// the end in the answer that was waiting for it.
func TestBatchProgressWaitsForTheNextState(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	var numbers []string
	for range 3 {
		_, contract := e.newContract(t)
		numbers = append(numbers, contract.ContractNumber)
	}
	// Each archive call takes a while, so the batch runs long enough to be watched.
	e.sim.SetFault("contracts.archive", v2sim.Fault{Delay: 300 * time.Millisecond})
	posted := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"numbers": {strings.Join(numbers, "\n")}, "include_unsent": {"1"}})
	batchPath := posted.Header.Get("Location")
	if started := postForm(t, e.p, e.user, batchPath+"/start", url.Values{}); started.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d", started.StatusCode)
	}
	next := parseHTML(t, e.p.get(t, e.user, batchPath, nil).body).Find(`[data-testid="batch-progress"]`).AttrOr("hx-get", "")
	requests := 0
	for next != "" {
		if !strings.Contains(next, "/progress?after=") {
			t.Fatalf("the running region asks for %q, not for its next state", next)
		}
		if requests++; requests > 20 {
			t.Fatal("the region kept asking without the batch ending")
		}
		asked := time.Now()
		answer := e.p.get(t, e.user, next, map[string]string{"HX-Request": "true"})
		region := parseHTML(t, answer.body).Find(`[data-testid="batch-progress"]`)
		following := region.AttrOr("hx-get", "")
		if following == next && time.Since(asked) < batchProgressHold {
			t.Fatalf("the portal answered the state the page already shows (%q) before the hold ended", next)
		}
		next = following
		if next == "" && region.AttrOr("data-status", "") != "Finished" {
			t.Fatalf("the region stopped asking while %q", region.AttrOr("data-status", ""))
		}
	}
	if n := len(e.requestsTo("contracts.archive")); n != 3 {
		t.Fatalf("%d archive calls, want 3", n)
	}
}
