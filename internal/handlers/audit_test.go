package handlers

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/cpqportal/portal/internal/apiclient"
)

func TestAuditShowsCustomerChangeBeforeAfter(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	ref := e.newQuote(t)
	customer, err := e.api.Customers.Get(e.ctx(), ref.CustomerID)
	if err != nil {
		t.Fatal(err)
	}
	const xss = `<script>alert("x")</script>`
	newName := "Renamed " + xss
	if _, err := e.api.Customers.Update(e.ctx(), apiclient.CustomerUpdate{ID: customer.ID, Name: newName}); err != nil {
		t.Fatal(err)
	}

	resp := e.p.get(t, e.user, auditURL(ref.QuoteID), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("audit: %d %s", resp.StatusCode, resp.body)
	}
	if strings.Contains(resp.body, xss) || parseHTML(t, resp.body).Find("main script").Length() != 0 {
		t.Fatal("the audit's values were not escaped")
	}
	doc := parseHTML(t, resp.body)
	if got := doc.Find("h1").Text(); !strings.Contains(got, "quote") {
		t.Errorf("h1 %q", got)
	}
	entry := doc.Find(`[data-testid="audit-entry"][data-action="CUSTOMER_UPDATED"]`)
	if entry.Length() != 1 {
		t.Fatalf("%d customer updates shown", entry.Length())
	}
	if actor := entry.Find(`[data-testid="audit-actor"]`).Text(); actor == "" {
		t.Error("no actor")
	}
	if entry.Find("time").AttrOr("datetime", "") == "" {
		t.Error("no time")
	}
	change := entry.Find(`[data-testid="audit-change"][data-field="name"]`)
	if change.AttrOr("data-changed", "") != "true" || !change.HasClass("audit-change--changed") {
		t.Errorf("the name change is not highlighted: %v", change.Nodes)
	}
	if got := change.Find(`del[data-testid="audit-before"]`).Text(); got != customer.Name {
		t.Errorf("before %q, want %q", got, customer.Name)
	}
	if got := change.Find(`ins[data-testid="audit-after"]`).Text(); got != newName {
		t.Errorf("after %q, want %q", got, newName)
	}
	if entries := doc.Find(`[data-testid="audit-entry"]`).Length(); entries < 3 {
		t.Errorf("%d entries, want the quote's whole history", entries)
	}
	raw := doc.Find(`details[data-testid="audit-raw"]`)
	if raw.Length() != 1 || raw.AttrOr("open", "none") != "none" || raw.Find(`[data-testid="json-tree"]`).Length() != 1 {
		t.Error("the raw JSON is not one click away (a closed <details> with the tree)")
	}
	if !strings.Contains(raw.Text(), "CUSTOMER_UPDATED") {
		t.Error("the raw JSON lacks the entry")
	}
	if doc.Find(`iframe[data-testid="audit-pdf-preview"]`).AttrOr("src", "") != auditURL(ref.QuoteID)+"/pdf?inline=1" {
		t.Error("no inline PDF audit")
	}

	pdf := e.p.get(t, e.user, auditURL(ref.QuoteID)+"/pdf", nil)
	if pdf.StatusCode != http.StatusOK || !strings.HasPrefix(pdf.body, "%PDF-") || pdf.Header.Get("Content-Type") != "application/pdf" {
		t.Errorf("PDF audit: %d %q", pdf.StatusCode, pdf.Header.Get("Content-Type"))
	}
	if cd := pdf.Header.Get("Content-Disposition"); cd != "attachment; filename=validation-audit-"+strings.TrimPrefix(auditURL(ref.QuoteID), "/audits/")+".pdf" {
		t.Errorf("Content-Disposition %q", cd)
	}
}

func TestAuditSearch(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	start := e.p.get(t, e.user, "/audits", nil)
	if start.StatusCode != http.StatusOK || parseHTML(t, start.body).Find(`input[name=quoteId]`).Length() != 1 {
		t.Fatalf("/audits: %d", start.StatusCode)
	}
	go1 := e.p.get(t, e.user, "/audits?quoteId=+900001+", nil)
	if go1.StatusCode != http.StatusSeeOther || go1.Header.Get("Location") != "/audits/900001" {
		t.Errorf("search: %d to %q", go1.StatusCode, go1.Header.Get("Location"))
	}
	e.sim.ResetRequests()
	for _, bad := range []string{"", "abc", "-1", "0", "12345678901234567890", "1/2"} {
		resp := e.p.get(t, e.user, "/audits?quoteId="+bad, nil)
		doc := parseHTML(t, resp.body)
		if resp.StatusCode != http.StatusBadRequest || doc.Find(`#audit-quote-id[aria-invalid="true"]`).Length() != 1 {
			t.Errorf("quoteId=%q: %d", bad, resp.StatusCode)
		}
	}
	if n := len(e.sim.Requests()); n != 0 {
		t.Errorf("%d bad searches reached the simulator", n)
	}
	if r := e.p.get(t, e.user, "/audits/424242", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown quote: %d", r.StatusCode)
	}
}

func TestAuditValue(t *testing.T) {
	t.Parallel()
	cases := []struct{ raw, want string }{
		{`"text"`, "text"},
		{`""`, ""},
		{`null`, ""},
		{``, ""},
		{`[1, 2]`, "[1,2]"},
		{`{"a": 1}`, `{"a":1}`},
		{`42`, "42"},
		{`"` + strings.Repeat("é", 600) + `"`, strings.Repeat("é", 600)},
	}
	for _, tc := range cases {
		if got := auditValue(json.RawMessage(tc.raw)); got != tc.want {
			t.Errorf("auditValue(%.20s) = %.20q, want %.20q", tc.raw, got, tc.want)
		}
	}
	if got := cut(strings.Repeat("é", 600)); got != strings.Repeat("é", 500)+"…" {
		t.Errorf("cut: %.20q", got)
	}
}
