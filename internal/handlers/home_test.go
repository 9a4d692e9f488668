package handlers

import (
	"context"
	"database/sql"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/workindex"
)

// TestHomeByRole: the home page at "/" shows a rep their own pipeline, a team lead the team's
// (with the figures by rep), the back office the signed contracts waiting for the archive; every
// figure links to the list that shows the same rows (docs/home.md).
func TestHomeByRole(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	ctx := context.Background()
	sam := workindex.Viewer{Subject: "demo-sales", Name: "Sam Sales"}
	other := workindex.Viewer{Subject: "someone-else", Name: "Olga Other"}
	for _, q := range []struct {
		v  workindex.Viewer
		id int64
	}{{sam, 101}, {other, 102}, {other, 103}} {
		if err := p.h.work.ObserveQuote(ctx, q.v, workindex.QuoteSighting{QuoteID: q.id, CPQID: 1, CustomerID: 1, Customer: "Acme",
			OneOffCents: 100_00, MonthlyCents: 10_00}, workindex.ActCreated); err != nil {
			t.Fatal(err)
		}
	}
	// The team lead's token read the three quotes as they stand (the visibility rule of issue 38:
	// a team role's figures add up only what their own token read).
	leadViewer := workindex.Viewer{Subject: "demo-teamlead", Name: "Giulia Bianchi", Team: true}
	for _, id := range []int64{101, 102, 103} {
		if err := p.h.work.ObserveQuote(ctx, leadViewer, workindex.QuoteSighting{QuoteID: id, CPQID: 1, CustomerID: 1, Customer: "Acme",
			OneOffCents: 100_00, MonthlyCents: 10_00}, workindex.ActRefreshed); err != nil {
			t.Fatal(err)
		}
	}
	// A signed contract the back office read (the stage Signed is inserted directly: its rules
	// come with the signer).
	clerk := workindex.Viewer{Subject: "demo-backoffice", Name: "Bea Backoffice", Team: true}
	if err := p.h.work.ObserveContract(ctx, clerk, workindex.ContractSighting{ContractID: 501, Number: "C-2026-000501", QuoteID: 999,
		CPQID: 1, CustomerID: 1, Customer: "Acme", Facts: workindex.ContractFacts{Status: "GENERATED"}}, workindex.ActOpened); err != nil {
		t.Fatal(err)
	}
	// And one only Sam read: the clerk's home re-reads it with the clerk's token before it counts
	// it; the v2 API does not know it (404), so it is forgotten for the clerk and no figure of
	// theirs counts it (it was counted, shown "not checked yet", before issue 38).
	if err := p.h.work.ObserveContract(ctx, sam, workindex.ContractSighting{ContractID: 502, Number: "C-2026-000502", QuoteID: 998,
		CPQID: 1, CustomerID: 1, Customer: "Secret Customer", Facts: workindex.ContractFacts{Status: "GENERATED"}}, workindex.ActCreated); err != nil {
		t.Fatal(err)
	}
	err := p.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE work_rows SET stage = 'signed', stage_since = $1 WHERE kind = 'contract' AND id IN (501, 502)`,
			statedb.Micros(time.Now().AddDate(0, 0, -3))); err != nil {
			return err
		}
		return workindex.RebuildTotals(ctx, tx)
	})
	if err != nil {
		t.Fatal(err)
	}

	page := func(user *http.Client, path string) *goquery.Document {
		t.Helper()
		resp := p.get(t, user, path, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		return parseHTML(t, resp.body)
	}
	firstCount := func(doc *goquery.Document, chart string) (string, string) {
		a := doc.Find(`[data-testid="` + chart + `-count"]`).First()
		return strings.TrimSpace(a.Text()), a.AttrOr("href", "")
	}

	rep := p.login(t, "sales", "sales-demo")
	doc := page(rep, "/")
	if got := doc.Find("h1").First().Text(); got != "My pipeline" {
		t.Errorf("rep's home: h1 %q", got)
	}
	if n, href := firstCount(doc, "home-pipeline"); n != "1" || href != "/work/quotes?stage=draft" {
		t.Errorf("rep's drafts: %q linked to %q, want 1 and /work/quotes?stage=draft", n, href)
	}
	if doc.Find(`[data-testid="home-reps"]`).Length() != 0 {
		t.Error("a rep sees the figures by rep")
	}
	if got := doc.Find(`[data-testid="home-pipeline-svg"] [data-testid="home-pipeline-bar"]`).Length(); got != 3 {
		t.Errorf("the pipeline chart has %d bars, want one a stage (3)", got)
	}
	if href := doc.Find(`[data-testid="home-pipeline-bar"]`).First().AttrOr("href", ""); href != "/work/quotes?stage=draft" {
		t.Errorf("the drafts' bar links to %q", href)
	}

	lead := p.login(t, "teamlead", "teamlead-demo")
	doc = page(lead, "/")
	if got := doc.Find("h1").First().Text(); got != "Team pipeline" {
		t.Errorf("team lead's home: h1 %q", got)
	}
	if n, href := firstCount(doc, "home-pipeline"); n != "3" || href != "/work/quotes?scope=all&stage=draft" {
		t.Errorf("the team's drafts: %q linked to %q", n, href)
	}
	var samHref string
	doc.Find(`[data-testid="home-reps-table"] tbody tr`).Each(func(_ int, s *goquery.Selection) {
		if s.Find("th").Text() == "Sam Sales" {
			samHref = s.Find("a").AttrOr("href", "")
			if got := s.Find("a").Text(); got != "1" {
				t.Errorf("Sam's open quotes: %q", got)
			}
		}
	})
	if !strings.Contains(samHref, "by="+sam.Key()) {
		t.Fatalf("Sam's figure links to %q", samHref)
	}
	list := page(lead, samHref)
	if got := list.Find(`[data-testid="work-count"]`).Text(); got != "1 found" {
		t.Errorf("Sam's list as the team lead sees it: %q", got)
	}
	if list.Find(`[data-testid="work-narrowing"] input[name="by"]`).AttrOr("value", "") != sam.Key() {
		t.Error("the list's form does not keep the rep filter")
	}
	// The rep filter is a team role's: a rep asking for someone else's rows gets their own.
	if got := page(rep, "/work/quotes?scope=all&stage=draft&by="+other.Key()).Find(`[data-testid="work-count"]`).Text(); got != "1 found" {
		t.Errorf("a rep's list filtered by another person: %q, want their own 1", got)
	}

	clerkClient := p.login(t, "backoffice", "backoffice-demo")
	doc = page(clerkClient, "/")
	if got := strings.TrimSpace(doc.Find(`[data-testid="home-waiting-count"]`).Text()); got != "1" {
		t.Errorf("signed contracts waiting: %q, want the one the clerk's token read", got)
	}
	numbers := doc.Find(`[data-testid="home-waiting-form"] input[name="numbers"]`)
	if numbers.Length() != 1 || numbers.AttrOr("value", "") != "C-2026-000501" {
		t.Errorf("the batch check's numbers: %d, first %q; want only the one the clerk read", numbers.Length(), numbers.AttrOr("value", ""))
	}
	if body := doc.Find("main").Text(); strings.Contains(body, "Secret Customer") || strings.Contains(body, "C-2026-000502") ||
		strings.Contains(body, "#502") {
		t.Errorf("a contract the clerk's token never read is shown: %q", doc.Find(`[data-testid="home-waiting"]`).Text())
	}
	if doc.Find(`[data-testid="home-unchecked"]`).Length() != 0 {
		t.Errorf("a contract the v2 API does not know is still counted as not checked: %q", doc.Find(`[data-testid="home-unchecked"]`).Text())
	}
	var denied int
	if err := p.db.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM work_denied WHERE person = $1 AND kind = 'contract' AND id = 502`,
		clerk.Key()).Scan(&denied); err != nil || denied != 1 {
		t.Errorf("the 404 of the home page's re-read did not forget the contract for the clerk: %d %v", denied, err)
	}
	if got := doc.Find(`[data-testid="home-waiting-form"]`).AttrOr("action", ""); got != "/contracts/batch-archive" {
		t.Errorf("the button goes to %q", got)
	}
	if n, href := firstCount(doc, "home-aging-archive"); n != "1" || !strings.Contains(href, "stage=signed") || !strings.Contains(href, "entered_from=") {
		t.Errorf("aging of what waits: %q linked to %q", n, href)
	}
}

// TestHomeListParametersAreChecked: the lists' filters the home page links with answer 400 with
// a message when malformed, never a 5xx.
func TestHomeListParametersAreChecked(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	user := p.login(t, "sales", "sales-demo")
	for _, path := range []string{
		"/work/contracts?entered_to=2026-13-01", "/work/contracts?entered_from=yesterday", "/work/quotes?by=../../etc",
		"/work/quotes?by=ABCDEF0123456789ABCDEF01", "/work/contracts?signed=yes", "/work/contracts?signed_from=2026-02-30",
		"/work/contracts?signed_to=last-month",
	} {
		resp := p.get(t, user, path, nil)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", path, resp.StatusCode)
		}
	}
	resp := p.get(t, user, "/work/contracts?stage=signature&entered_to=2026-11-01", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.body, "Entered the stage on or before 1") {
		t.Errorf("a list by when rows entered their stage: %d", resp.StatusCode)
	}
	// The contracts signed in a month (the home page's "signed this month"), and ever (conversion).
	resp = p.get(t, user, "/work/contracts?signed_from=2026-11-01&signed_to=2026-11-30", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.body, "Signed on or after 1") || !strings.Contains(resp.body, "Signed on or before 30") {
		t.Errorf("a list by when contracts were signed: %d", resp.StatusCode)
	}
	resp = p.get(t, user, "/work/contracts?signed=1", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.body, "Signed (whatever happened since)") {
		t.Errorf("the list of signed contracts: %d", resp.StatusCode)
	}
}
