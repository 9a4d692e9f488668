package handlers

import (
	"bytes"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/xuri/excelize/v2"

	"github.com/cpqportal/portal/internal/people"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestAuditShowsAColleaguesName: user A (sales) signs in and creates a quote; user B (back
// office) signs in and reads its audit, the worklist and its CSV and XLSX exports: A's entries
// show A's name as A's sign-in gave it ("Sam Sales"), not the login the v2 API wrote ("sales"),
// which stays in the tooltip. The simulator checks the tokens of the portal's provider here, so
// its audit names each user by preferred_username, as A7 says.
func TestAuditShowsAColleaguesName(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	sales := &quoteUser{t: t, p: p, sim: p.sim, c: p.login(t, "sales", "sales-demo")}
	quoteURL := sales.createQuote(1, 1, 11, 102, "People")
	quoteID := quoteURL[strings.LastIndexByte(quoteURL, '/')+1:]
	back := p.login(t, "backoffice", "backoffice-demo")

	var actors []string
	audit := p.get(t, back, auditURL(mustParseQuoteID(quoteID)), nil)
	if audit.StatusCode != http.StatusOK {
		t.Fatalf("audit: %d", audit.StatusCode)
	}
	doc := parseHTML(t, audit.body)
	doc.Find(`[data-testid="audit-entry"] [data-testid="audit-actor"]`).Each(func(_ int, s *goquery.Selection) {
		actors = append(actors, strings.TrimSpace(s.Text()))
		if login := s.Find("[data-login]").AttrOr("data-login", ""); login != "sales" {
			t.Errorf("the actor %q keeps login %q, want sales", strings.TrimSpace(s.Text()), login)
		}
		if title := s.Find("[title]").AttrOr("title", ""); title != "Signs in as sales" {
			t.Errorf("the actor's tooltip is %q", title)
		}
	})
	if len(actors) == 0 {
		t.Fatal("the audit has no entries")
	}
	for _, a := range actors {
		if a != "Sam Sales" {
			t.Errorf("the audit names %q, want Sam Sales (all entries are the sales user's): %q", a, actors)
		}
	}

	wl := parseHTML(t, p.get(t, back, "/audits/worklist?quotes="+quoteID, nil).body)
	cells := wl.Find(`[data-testid="worklist-who"]`)
	if cells.Length() == 0 {
		t.Fatal("the worklist has no rows")
	}
	cells.Each(func(_ int, s *goquery.Selection) {
		if got := strings.TrimSpace(s.Text()); got != "Sam Sales" {
			t.Errorf("the worklist names %q", got)
		}
	})
	// The user filter finds the person by name, and by login.
	for _, user := range []string{"sam", "SALES"} {
		filtered := parseHTML(t, p.get(t, back, "/audits/worklist?quotes="+quoteID+"&user="+user, nil).body)
		if n := filtered.Find(`[data-testid="worklist-row"]`).Length(); n != cells.Length() {
			t.Errorf("user filter %q keeps %d rows of %d", user, n, cells.Length())
		}
	}

	csvExport := p.get(t, back, "/audits/worklist/export?format=csv&quotes="+quoteID, nil)
	rows := parseExportCSV(t, csvExport.body, ',')
	if len(rows) < 2 || rows[0][4] != "who" {
		t.Fatalf("CSV export %q", rows)
	}
	for _, row := range rows[1:] {
		if row[4] != "Sam Sales" {
			t.Errorf("CSV row names %q: %q", row[4], row)
		}
	}
	xlsxExport := p.get(t, back, "/audits/worklist/export?format=xlsx&quotes="+quoteID, nil)
	book, err := excelize.OpenReader(bytes.NewReader([]byte(xlsxExport.body)))
	if err != nil {
		t.Fatal(err)
	}
	defer book.Close()
	sheet := book.GetSheetName(0)
	xrows, err := book.GetRows(sheet)
	if err != nil || len(xrows) < 2 {
		t.Fatalf("XLSX rows %q %v", xrows, err)
	}
	for _, row := range xrows[1:] {
		if row[4] != "Sam Sales" {
			t.Errorf("XLSX row names %q: %q", row[4], row)
		}
	}
	// Nowhere is the colleague shown by the bare login.
	bare := regexp.MustCompile(`>\s*sales\s*<`)
	for what, body := range map[string]string{"audit": audit.body, "worklist": p.get(t, back, "/audits/worklist?quotes="+quoteID, nil).body} {
		if bare.MatchString(body) {
			t.Errorf("the %s shows the bare login sales", what)
		}
	}
}

// TestSeededEntriesAreTheSystemsInWords: the simulator records its seed quotes (900001 is the
// first) as made by "system": the audit says so in the reader's language, with no login tooltip.
func TestSeededEntriesAreTheSystemsInWords(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	user := p.login(t, "sales", "sales-demo")
	resp := p.get(t, user, auditURL(900001), italian)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the audit of the first seed quote: %d", resp.StatusCode)
	}
	actors := parseHTML(t, resp.body).Find(`[data-testid="audit-actor"]`)
	if actors.Length() == 0 {
		t.Fatal("the seed quote's audit has no entries")
	}
	actors.Each(func(_ int, s *goquery.Selection) {
		if got := strings.TrimSpace(s.Text()); got != "Sistema" || s.Find("[data-login]").Length() != 0 {
			t.Errorf("a seeded entry's actor reads %q (with %d logins), want Sistema", got, s.Find("[data-login]").Length())
		}
	})
}

// TestAuditActorsWhenTheDirectoryIsDown: with the state database failing, the audit page still
// answers 200 and shows the v2's actor as written (the directory was never read on this replica).
func TestAuditActorsWhenTheDirectoryIsDown(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	sales := &quoteUser{t: t, p: p, sim: p.sim, c: p.login(t, "sales", "sales-demo")}
	quoteURL := sales.createQuote(1, 1, 11, 102, "People down")
	quoteID := quoteURL[strings.LastIndexByte(quoteURL, '/')+1:]
	back := p.login(t, "backoffice", "backoffice-demo")
	// A replica whose database fails from its start.
	down := statedbtest.SQLite(t)
	_ = down.Close()
	p.h.people = people.New(down, people.Options{})
	audit := p.get(t, back, auditURL(mustParseQuoteID(quoteID)), nil)
	if audit.StatusCode != http.StatusOK {
		t.Fatalf("audit with the store down: %d", audit.StatusCode)
	}
	doc := parseHTML(t, audit.body)
	if got := strings.TrimSpace(doc.Find(`[data-testid="audit-actor"]`).First().Text()); got != "sales" {
		t.Errorf("with the store down the actor reads %q, want the login as written", got)
	}
}
