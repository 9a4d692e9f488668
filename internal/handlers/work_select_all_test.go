package handlers

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestWorkContractsSelectAll: the contracts list offers "Select all on this page" (the page's
// contracts go to the batch check even with no box ticked) and "Archive all N matching" (the list's
// filters, resolved on the server to every matching contract), and refuses filters it cannot read.
func TestWorkContractsSelectAll(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	var numbers []string
	for range 3 {
		_, c := e.newContract(t)
		numbers = append(numbers, c.ContractNumber)
		// Opened through the portal: the work index lists it (docs/work-index.md).
		if res := e.p.get(t, e.user, "/contracts/"+strconv.Itoa(int(c.ContractID)), nil); res.StatusCode != http.StatusOK {
			t.Fatalf("open contract %d: %d", c.ContractID, res.StatusCode)
		}
	}
	doc := parseHTML(t, e.p.get(t, e.user, "/work/contracts", nil).body)
	if got := strings.TrimSpace(doc.Find(`[data-testid="work-archive-form"] label.checkbox`).Text()); got != "Select all on this page (3)" {
		t.Errorf("select all: %q", got)
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid="work-archive-matching"]`).Text()); got != "Archive all 3 matching" {
		t.Errorf("archive all matching: %q", got)
	}

	// The whole page, no box ticked.
	page := url.Values{"all_on_page": {"1"}, "include_unsent": {"1"}}
	doc.Find(`[data-testid="work-archive-form"] input[name="page_numbers"]`).Each(func(_ int, s *goquery.Selection) {
		page.Add("page_numbers", s.AttrOr("value", ""))
	})
	e.expectDraftOf(t, page, numbers)

	// Every matching contract, from the list's filters.
	matching := url.Values{"include_unsent": {"1"}}
	doc.Find(`[data-testid="work-archive-matching-form"] input`).Each(func(_ int, s *goquery.Selection) {
		matching.Add(s.AttrOr("name", ""), s.AttrOr("value", ""))
	})
	if matching.Get("matching") != "1" {
		t.Fatalf("the matching form posts %v", matching)
	}
	e.expectDraftOf(t, matching, numbers)
	// The list's filters hold: a stage none of them is in matches nothing.
	none := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"matching": {"1"}, "filters": {"stage=archived"}})
	if none.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("no contract archived yet: %d", none.StatusCode)
	}

	bad := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"matching": {"1"}, "filters": {"stage=bogus"}})
	if bad.StatusCode != http.StatusBadRequest {
		t.Errorf("bad filters: %d", bad.StatusCode)
	}
}

// expectDraftOf posts the batch check and expects a draft of exactly numbers (in any order).
func (e *docsEnv) expectDraftOf(t *testing.T, form url.Values, numbers []string) {
	t.Helper()
	posted := postForm(t, e.p, e.user, "/contracts/batch-archive", form)
	if posted.StatusCode != http.StatusSeeOther {
		t.Fatalf("check %v: %d", form, posted.StatusCode)
	}
	draft := parseHTML(t, e.p.get(t, e.user, posted.Header.Get("Location"), nil).body)
	var got []string
	draft.Find(`[data-testid="batch-row"]`).Each(func(_ int, s *goquery.Selection) { got = append(got, s.AttrOr("data-number", "")) })
	if len(got) != len(numbers) {
		t.Fatalf("draft of %v, want %v", got, numbers)
	}
	for _, n := range numbers {
		if !strings.Contains(strings.Join(got, " "), n) {
			t.Errorf("draft of %v lacks %s", got, n)
		}
	}
}
