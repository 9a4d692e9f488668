package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/web/templates/backoffice"
)

// TestBatchArchiveEndedListsItsLines: a finished batch's page lists every line (archived ones too,
// not only the failures), each contract the check found linked to its page by number; a page number
// that is not one answers 400.
func TestBatchArchiveEndedListsItsLines(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	_, first := e.newContract(t)
	_, second := e.newContract(t)
	posted := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"numbers": {first.ContractNumber + "\n" + second.ContractNumber + "\nC-0000-404"}, "include_unsent": {"1"}})
	batch := posted.Header.Get("Location")
	if started := postForm(t, e.p, e.user, batch+"/start", url.Values{}); started.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d", started.StatusCode)
	}
	var doc *goquery.Document
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		doc = parseHTML(t, e.p.get(t, e.user, batch, nil).body)
		if doc.Find(`[data-testid="batch-progress"]`).AttrOr("data-status", "") == "Finished" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the batch did not finish")
		}
	}
	rows := doc.Find(`[data-testid="batch-row"]`)
	if rows.Length() != 3 {
		t.Fatalf("%d lines listed, want 3", rows.Length())
	}
	for i, number := range []string{first.ContractNumber, second.ContractNumber} {
		link := rows.Eq(i).Find(`[data-testid="batch-row-link"]`)
		if want := "/contracts/lookup?q=" + url.QueryEscape(number); link.AttrOr("href", "") != want {
			t.Errorf("line %d links %q, want %q", i+1, link.AttrOr("href", ""), want)
		}
	}
	if rows.Eq(2).Find(`[data-testid="batch-row-link"]`).Length() != 0 {
		t.Error("a contract the check did not find is linked")
	}
	opened := e.p.get(t, e.user, "/contracts/lookup?q="+url.QueryEscape(first.ContractNumber), nil)
	if opened.StatusCode != http.StatusSeeOther && opened.StatusCode != http.StatusOK {
		t.Errorf("the link answers %d", opened.StatusCode)
	}
	if bad := e.p.get(t, e.user, batch+"?page=x", nil); bad.StatusCode != http.StatusBadRequest {
		t.Errorf("?page=x: %d", bad.StatusCode)
	}
}

// TestBatchLinesArePaged: 250 lines are 3 pages of 100, 100 and 50 in the list's order, with a
// pager; a page past the last shows the last.
func TestBatchLinesArePaged(t *testing.T) {
	t.Parallel()
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	tr := bundle.Translator(i18n.Languages[0])
	job := &jobs.Job{ID: "0123456789abcdef0123456789abcdef", Status: jobs.StatusFinished}
	for i := range 250 {
		job.Items = append(job.Items, jobs.Item{Line: i + 1, Number: fmt.Sprintf("C-2026-%06d", i), Status: jobs.ItemDone, ArchiveID: "A"})
	}
	for page, want := range map[int][2]int{1: {1, 100}, 2: {101, 200}, 3: {201, 250}, 9: {201, 250}} {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest(http.MethodGet, batchPath(job.ID)+"?page="+fmt.Sprint(page), nil)
		var vm backoffice.BatchVM
		batchLinesPage(c, tr, job, page, &vm)
		if first, last := vm.Rows[0].Line, vm.Rows[len(vm.Rows)-1].Line; first != want[0] || last != want[1] {
			t.Errorf("page %d: lines %d to %d, want %v", page, first, last, want)
		}
		if vm.Pager.Pages != 3 || !strings.Contains(vm.LinesShown, "of 250") {
			t.Errorf("page %d: %d pages, %q", page, vm.Pager.Pages, vm.LinesShown)
		}
	}
}
