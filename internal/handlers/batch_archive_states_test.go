package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/jobs"
)

// TestBatchArchivePageShowsLostRecordAndCheckedLines: a batch whose row the database lost (written
// back stopped by its runner) says so and offers to resume; lines checked after an interruption
// are listed as such, and a line that may have been archived and could not be checked is never
// called "not archived". Resuming finishes the batch.
func TestBatchArchivePageShowsLostRecordAndCheckedLines(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	_, first := e.newContract(t)
	_, second := e.newContract(t)
	_, third := e.newContract(t)
	id := strings.Repeat("ab", 16)
	stopped := jobs.Job{ID: id, Owner: "demo-backoffice", Status: jobs.StatusStopped, StopReason: jobs.StopRecordLost,
		CreatedAt: time.Now(), UpdatedAt: time.Now(), Resumes: 1, Items: []jobs.Item{
			{Line: 1, Number: first.ContractNumber, Status: jobs.ItemDone, ArchiveID: "ARC-1", Verified: true, Note: jobs.NoteArchivedBeforeInterruption},
			{Line: 2, Number: second.ContractNumber, Status: jobs.ItemPending, MaybeSent: true},
			{Line: 3, Number: third.ContractNumber, Status: jobs.ItemPending},
		}}
	if err := e.p.jobs.Import(context.Background(), &stopped); err != nil {
		t.Fatal(err)
	}
	page := e.p.get(t, e.user, "/contracts/batch-archive/"+id, nil)
	if page.StatusCode != http.StatusOK {
		t.Fatalf("stopped batch page: %d", page.StatusCode)
	}
	doc := parseHTML(t, page.body)
	text := func(sel string) string { return strings.Join(strings.Fields(doc.Find(sel).Text()), " ") }
	if got := text(`[data-testid="batch-status"]`); got != "Stopped: the portal lost this batch's record" {
		t.Errorf("status %q", got)
	}
	if !strings.Contains(text(`[data-testid="batch-record-lost"]`), "lost this batch's record") || doc.Find(`[data-testid="batch-resume"]`).Length() != 1 {
		t.Error("the lost record is not explained, or there is no way to resume")
	}
	if got := text(`[data-testid="batch-verified"]`); !strings.Contains(got, "1 line was checked on the CPQ service") {
		t.Errorf("checked lines: %q", got)
	}
	if got := text(`[data-testid="batch-row"][data-number="` + second.ContractNumber + `"]`); !strings.Contains(got, "maybe archived (not checked)") {
		t.Errorf("the unchecked line reads %q", got)
	}
	if doc.Find(`[data-testid="batch-row"][data-verified]`).Length() != 1 {
		t.Error("the checked line is not marked")
	}

	if r := postForm(t, e.p, e.user, "/contracts/batch-archive/"+id+"/retry", url.Values{}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("resume: %d", r.StatusCode)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		doc = parseHTML(t, e.p.get(t, e.user, "/contracts/batch-archive/"+id, nil).body)
		if strings.Contains(doc.Find(`[data-testid="batch-status"]`).Text(), "Finished") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the resumed batch did not finish: %q", doc.Find(`[data-testid="batch-status"]`).Text())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := len(e.requestsTo("contracts.archive")); n != 2 {
		t.Errorf("%d archive calls on resume, want 2 (the line archived before is not archived again)", n)
	}
}
