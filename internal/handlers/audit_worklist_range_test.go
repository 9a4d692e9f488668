package handlers

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestWorklistQuotesChangedInADateRange: "every quote changed in these days" brings the quotes the
// work index lists for the viewer in the range (no id typed), and none outside it; the range needs
// its From day; the export carries the same choice.
func TestWorklistQuotesChangedInADateRange(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	sales := &quoteUser{t: t, p: p, sim: p.sim, c: p.login(t, "sales", "sales-demo")}
	quoteURL := sales.createQuote(1, 1, 11, 102, "Range")
	quoteID := quoteURL[strings.LastIndexByte(quoteURL, '/')+1:]
	today := time.Now().UTC().Format("2006-01-02")
	tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format("2006-01-02")

	res := p.get(t, sales.c, "/audits/worklist?changed=1&from="+today+"&to="+today, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("worklist of today: %d", res.StatusCode)
	}
	doc := parseHTML(t, res.body)
	if doc.Find(`[data-testid="worklist-row"]`).Length() == 0 {
		t.Fatalf("no audit rows for the quotes changed today: %s", doc.Find("main").Text())
	}
	if !strings.Contains(doc.Find(`[data-testid="worklist-table"]`).Text(), quoteID) {
		t.Errorf("the quote %s changed today is not in the worklist", quoteID)
	}
	if note := doc.Find(`[data-testid="worklist-changed-note"]`).Text(); !strings.Contains(note, "Quotes changed in these days") {
		t.Errorf("the note says %q", note)
	}
	if doc.Find(`[data-testid="worklist-changed"][checked]`).Length() != 1 {
		t.Error("the box is not kept ticked")
	}
	export := doc.Find(`[data-testid="worklist-export-csv"]`).AttrOr("href", "")
	if !strings.Contains(export, "changed=1") {
		t.Errorf("the export %q leaves out the range", export)
	}
	csv := p.get(t, sales.c, export, nil)
	if csv.StatusCode != http.StatusOK || !strings.Contains(csv.body, quoteID) {
		t.Errorf("the export of the range: %d without quote %s", csv.StatusCode, quoteID)
	}

	later := parseHTML(t, p.get(t, sales.c, "/audits/worklist?changed=1&from="+tomorrow, nil).body)
	if n := later.Find(`[data-testid="worklist-row"]`).Length(); n != 0 {
		t.Errorf("%d rows for the quotes changed from tomorrow", n)
	}

	// The back office (a team role) gets the team's quotes: the range reads them with their token
	// first (issue 38: a range lists only what the viewer's own token read).
	back := p.login(t, "backoffice", "backoffice-demo")
	team := parseHTML(t, p.get(t, back, "/audits/worklist?changed=1&from="+today, nil).body)
	if !strings.Contains(team.Find(`[data-testid="worklist-table"]`).Text(), quoteID) {
		t.Errorf("the back office does not get quote %s changed today", quoteID)
	}

	missing := p.get(t, sales.c, "/audits/worklist?changed=1", nil)
	if missing.StatusCode != http.StatusBadRequest || !strings.Contains(missing.body, "Enter the From day") {
		t.Errorf("the range without From: %d", missing.StatusCode)
	}
}

// TestWorklistRangeWithTheIndexDown: the date range needs the work index; when it cannot be read
// the page says the lists are unavailable (503), and a worklist of typed ids still works.
func TestWorklistRangeWithTheIndexDown(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{workDown: true})
	sales := p.login(t, "sales", "sales-demo")
	res := p.get(t, sales, "/audits/worklist?changed=1&from="+time.Now().UTC().Format("2006-01-02"), nil)
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(res.body, "Lists unavailable right now") {
		t.Errorf("the range with the index down: %d", res.StatusCode)
	}
	if res := p.get(t, sales, "/audits/worklist", nil); res.StatusCode != http.StatusOK {
		t.Errorf("the worklist form with the index down: %d", res.StatusCode)
	}
}
