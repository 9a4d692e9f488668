package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/v2sim"
)

// workRows lists the rows of a work list as id -> stage.
func workRows(t *testing.T, e *docsEnv, path string) map[string]string {
	t.Helper()
	resp := e.p.do(t, e.user, http.MethodGet, path, nil, nil)
	doc := quoteMust(t, path, resp, http.StatusOK)
	rows := map[string]string{}
	doc.Find(`[data-testid="work-row"]`).Each(func(_ int, s *goquery.Selection) {
		rows[s.AttrOr("data-id", "")] = s.AttrOr("data-stage", "")
	})
	return rows
}

// TestWorkStageRulesThroughHandlers follows one quote and its contract through every stage rule,
// each stage read from the portal's own answers (docs/work-index.md, "Stage rules").
func TestWorkStageRulesThroughHandlers(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	hx := map[string]string{"HX-Request": "true", "Origin": e.p.URL, "Content-Type": "application/x-www-form-urlencoded"}

	// Rule: a quote without a contract is a draft.
	ref := e.newQuote(t)
	quoteMust(t, "quote page", e.p.do(t, e.user, http.MethodGet, ref.URL(), nil, nil), http.StatusOK)
	quoteID := strconv.FormatInt(ref.QuoteID, 10)
	if got := workRows(t, e, "/work/quotes?scope=all")[quoteID]; got != "draft" {
		t.Fatalf("new quote: stage %q, want draft", got)
	}

	// "Generate contract" confirms with a summary first, read when the person clicks.
	docs := quoteMust(t, "documents", e.p.do(t, e.user, http.MethodGet, ref.URL()+"/documents", nil, map[string]string{"HX-Request": "true"}), http.StatusOK)
	confirmURL := docs.Find(`[data-testid="generate-form"]`).AttrOr("data-confirm-url", "")
	confirmation := e.p.get(t, e.user, confirmURL, htmx)
	if !strings.Contains(confirmation.body, "quote "+quoteID) || !strings.Contains(confirmation.body, "1 cart") {
		t.Errorf("generate confirmation from %q: %q", confirmURL, confirmation.body)
	}

	// Rule: a generated contract (GENERATED, no request) is "generated", and so is its quote.
	resp := e.p.do(t, e.user, http.MethodPost, ref.URL()+"/contract", strings.NewReader(confirmedGenerate(t, confirmation).Encode()), hx)
	quoteMust(t, "generate", resp, http.StatusOK)
	contract := e.quote(t, ref).Contract
	if contract == nil {
		t.Fatal("no contract generated")
	}
	contractID := strconv.Itoa(int(contract.ContractID))
	if got := workRows(t, e, "/work/contracts?stage=generated")[contractID]; got != "generated" {
		t.Errorf("generated contract: %q", got)
	}
	if got := workRows(t, e, "/work/quotes?scope=all&stage=generated")[quoteID]; got != "generated" {
		t.Errorf("quote of a generated contract: %q", got)
	}

	// Rule: a SENT signature request is "out for signature".
	form := url.Values{"email": {"signer@example.com"}, "signerName": {"Signer"}}
	quoteMust(t, "send for signature", e.p.do(t, e.user, http.MethodPost, "/contracts/"+contractID+"/signature", strings.NewReader(form.Encode()), hx), http.StatusOK)
	if got := workRows(t, e, "/work/contracts?stage=signature")[contractID]; got != "signature" {
		t.Errorf("sent for signature: %q", got)
	}
	if rows := workRows(t, e, "/work/contracts?stage=generated"); rows[contractID] != "" {
		t.Errorf("contract out for signature still listed as generated")
	}

	// The quote page says so at the top and asks before every change.
	doc := quoteMust(t, "quote page with a contract", e.p.do(t, e.user, http.MethodGet, ref.URL(), nil, nil), http.StatusOK)
	banner := doc.Find(`[data-testid="quote-contract-banner"]`)
	if banner.Length() != 1 || banner.AttrOr("data-stage-label", "") != "Out for signature" ||
		!strings.Contains(doc.Find(`[data-testid="quote-page"]`).AttrOr("data-change-confirm", ""), "out for signature") {
		t.Errorf("contract banner: %q / confirm %q", banner.Text(), doc.Find(`[data-testid="quote-page"]`).AttrOr("data-change-confirm", ""))
	}
	if src := doc.Find(`script[src*="change-confirm"]`).AttrOr("src", ""); !strings.HasPrefix(src, "/static/") || strings.Contains(src, "missing") {
		t.Errorf("change-confirm script: %q", src)
	}

	// Rule: a removed request takes the contract back to "generated".
	quoteMust(t, "remove the request", e.p.do(t, e.user, http.MethodDelete, "/contracts/"+contractID+"/signature", nil, hx), http.StatusOK)
	if got := workRows(t, e, "/work/contracts?stage=generated")[contractID]; got != "generated" {
		t.Errorf("after removing the request: %q", got)
	}

	// Rule: archived wins.
	quoteMust(t, "archive", e.p.do(t, e.user, http.MethodPost, "/contracts/"+contractID+"/archive", strings.NewReader(""), hx), http.StatusOK)
	if got := workRows(t, e, "/work/contracts?stage=archived")[contractID]; got != "archived" {
		t.Errorf("archived: %q", got)
	}
	if got := workRows(t, e, "/work/quotes?scope=all")[quoteID]; got != "archived" {
		t.Errorf("quote of an archived contract: %q", got)
	}

	// The customer page lists the customer's quote and contract with their stages.
	customer := quoteMust(t, "customer page", e.p.do(t, e.user, http.MethodGet, "/customers/"+strconv.Itoa(int(ref.CustomerID)), nil, nil), http.StatusOK)
	if got := customer.Find(`[data-testid="customer-quotes"] [data-id="`+quoteID+`"]`).AttrOr("data-stage", ""); got != "archived" {
		t.Errorf("customer page, quote: %q", got)
	}
	if got := customer.Find(`[data-testid="customer-contracts"] [data-id="`+contractID+`"]`).AttrOr("data-stage", ""); got != "archived" {
		t.Errorf("customer page, contract: %q", got)
	}
}

// TestWorkListBadFilters: malformed filters answer 400 with the form, never a 5xx.
func TestWorkListBadFilters(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	for _, q := range []string{
		"from=31-12-2026", "to=2026-02-30", "from=2026-03-02&to=2026-03-01", "page=0", "page=abc", "page=99999999999",
		"stage=bogus", "customer=-1", "customer=1e3", "cpq=x", "sort=price", "dir=up", "scope=everyone",
		"q=" + strings.Repeat("x", 201),
	} {
		for _, path := range []string{"/work/quotes?", "/work/contracts?"} {
			resp := e.p.do(t, e.user, http.MethodGet, path+q, nil, nil)
			doc := quoteMust(t, path+q, resp, http.StatusBadRequest)
			if doc.Find(`[data-testid="work-filters"]`).Length() != 1 || doc.Find(".error-summary").Length() != 1 {
				t.Errorf("%s%s: no form with its errors", path, q)
			}
		}
	}
	if resp := e.p.do(t, e.user, http.MethodGet, "/work/contracts?stage=draft", nil, nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a contract cannot be a draft: %d", resp.StatusCode)
	}
	quoteMust(t, "good filters", e.p.do(t, e.user, http.MethodGet, "/work/quotes?stage=draft&stage=archived&from=2026-01-01&to=2026-12-31&sort=value&dir=asc&page=3&q=acme&customer=1&cpq=1", nil, nil), http.StatusOK)
}

// TestWorkRowLeavesOn404: a row the v2 API answers 404 for, read with the viewer's token, leaves
// the viewer's lists.
func TestWorkRowLeavesOn404(t *testing.T) {
	t.Parallel()
	var hide atomic.Value
	hide.Store("")
	e := newDocsEnv(t, docsOptions{wrap: func(sim http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p := hide.Load().(string); p != "" && r.URL.Path == p {
				http.Error(w, `{"code":"NOT_FOUND","message":"no such contract"}`, http.StatusNotFound)
				return
			}
			sim.ServeHTTP(w, r)
		})
	}})
	_, contract := e.newContract(t)
	id := strconv.Itoa(int(contract.ContractID))
	quoteMust(t, "contract page", e.p.do(t, e.user, http.MethodGet, "/contracts/"+id, nil, nil), http.StatusOK)
	if _, ok := workRows(t, e, "/work/contracts")[id]; !ok {
		t.Fatal("the opened contract is not listed")
	}
	hide.Store("/v2/contract/" + id)
	rows := workRows(t, e, "/work/contracts?refresh=1")
	if _, ok := rows[id]; ok {
		t.Error("the row the v2 API answers 404 for is still shown")
	}
	hide.Store("")
	if _, ok := workRows(t, e, "/work/contracts")[id]; ok {
		t.Error("the row came back without a successful read")
	}
}

// TestWorkStartPageByRole: sales lands on My quotes, back office on the contracts list.
func TestWorkStartPageByRole(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	for user, want := range map[string]string{"sales": "/work/quotes", "backoffice": "/work/contracts"} {
		c := p.login(t, user, user+"-demo")
		resp := p.get(t, c, "/work", nil)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
			t.Errorf("%s: /work answered %d to %q, want %s", user, resp.StatusCode, resp.Header.Get("Location"), want)
		}
	}
}

// TestWorkBatchLeavesOutUnsent: "Archive selected" from the contracts list (one numbers value per
// contract) leaves out a contract never sent for signature, with the reason and its stage, keeps
// the signed one, and the person can include the other.
func TestWorkBatchLeavesOutUnsent(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	_, unsent := e.newContract(t)
	_, sent := e.newContract(t)
	hx := map[string]string{"HX-Request": "true", "Origin": e.p.URL, "Content-Type": "application/x-www-form-urlencoded"}
	form := url.Values{"email": {"signer@example.com"}, "signerName": {"Signer"}}
	quoteMust(t, "send for signature", e.p.do(t, e.user, http.MethodPost, "/contracts/"+strconv.Itoa(int(sent.ContractID))+"/signature", strings.NewReader(form.Encode()), hx), http.StatusOK)
	if err := e.sim.AnswerSignature(sent.ContractNumber, "SIGNED", ""); err != nil {
		t.Fatal(err)
	}

	posted := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"numbers": {unsent.ContractNumber, sent.ContractNumber}})
	if posted.StatusCode != http.StatusSeeOther {
		t.Fatalf("check: %d", posted.StatusCode)
	}
	doc := parseHTML(t, e.p.get(t, e.user, posted.Header.Get("Location"), nil).body)
	if got := strings.Join(strings.Fields(doc.Find(`[data-testid="batch-preview-summary"]`).Text()), " "); !strings.HasPrefix(got, "1 contract will be archived") {
		t.Errorf("preview: %q", got)
	}
	if msg := doc.Find(`[data-testid="batch-row-message"]`).Text(); !strings.Contains(msg, "never sent for signature") {
		t.Errorf("no reason given: %q", msg)
	}
	if stages := doc.Find(`[data-testid="batch-row-stage"]`).Text(); !strings.Contains(stages, "Signed") || !strings.Contains(stages, "Contract generated") {
		t.Errorf("stages: %q", stages)
	}
	include := doc.Find(`[data-testid="batch-include-unsent"]`)
	if include.Length() != 1 {
		t.Fatal("no way to include the contract left out")
	}
	values := url.Values{}
	include.Find("input").Each(func(_ int, s *goquery.Selection) { values.Add(s.AttrOr("name", ""), s.AttrOr("value", "")) })
	again := postForm(t, e.p, e.user, "/contracts/batch-archive", values)
	doc = parseHTML(t, e.p.get(t, e.user, again.Header.Get("Location"), nil).body)
	if got := strings.Join(strings.Fields(doc.Find(`[data-testid="batch-preview-summary"]`).Text()), " "); !strings.HasPrefix(got, "2 contracts will be archived") {
		t.Errorf("after including: %q", got)
	}
}

// TestWorkStoreUnreachable: the lists say "lists unavailable right now"; creating, showing and
// changing a quote keep working (index writes are logged, never fail an action).
func TestWorkStoreUnreachable(t *testing.T) {
	t.Parallel()
	sim := v2sim.New(v2sim.Options{Customers: 5, Seed: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); _ = sim.Close() })
	p := newPortal(t, portalOptions{v2URL: srv.URL, workDown: true})
	u := newQuoteUser(t, p, sim)
	quoteURL := u.createQuote(1, 1, 11, 102, "Store down")
	doc, _ := u.page(quoteURL)
	if doc.Find(`[data-testid="quote-page"]`).Length() != 1 {
		t.Fatal("the quote page is not shown")
	}
	for _, path := range []string{"/work/quotes", "/work/contracts"} {
		list := quoteMust(t, path, u.get(path, false), http.StatusOK)
		if !strings.Contains(list.Find(`[data-testid="work-unavailable"]`).Text(), "Lists unavailable right now") {
			t.Errorf("%s does not say the lists are unavailable", path)
		}
	}
	customer := quoteMust(t, "customer page", u.get("/customers/1", false), http.StatusOK)
	if customer.Find(`[data-testid="customer-work"] [data-testid="work-unavailable"]`).Length() != 1 {
		t.Error("the customer page does not say its lists are unavailable")
	}
	if !strings.Contains(p.logs.String(), "work index: quote not recorded") {
		t.Error("the failed index write was not logged")
	}
}

// TestTeamRowsAreCheckedWithTheViewersToken: a team role lists a colleague's contract, but its
// customer and stage reach the team member only after their own token read it: a re-read that
// fails shows the row unchecked (link only); one that succeeds shows it, read with their token.
func TestTeamRowsAreCheckedWithTheViewersToken(t *testing.T) {
	t.Parallel()
	var fail atomic.Bool
	var reads atomic.Int32
	var contractPath atomic.Value
	contractPath.Store("")
	e := newDocsEnv(t, docsOptions{wrap: func(sim http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p := contractPath.Load().(string); p != "" && r.URL.Path == p {
				reads.Add(1)
				if fail.Load() {
					http.Error(w, `{"code":"UNAVAILABLE","message":"down"}`, http.StatusServiceUnavailable)
					return
				}
			}
			sim.ServeHTTP(w, r)
		})
	}})
	_, contract := e.newContract(t)
	id := strconv.Itoa(int(contract.ContractID))
	quoteMust(t, "contract page", e.p.do(t, e.user, http.MethodGet, "/contracts/"+id, nil, nil), http.StatusOK)
	contractPath.Store("/v2/contract/" + id)

	lead := e.p.login(t, "backoffice", "backoffice-demo")
	var page *goquery.Document
	row := func() *goquery.Selection {
		page = quoteMust(t, "contracts list", e.p.do(t, lead, http.MethodGet, "/work/contracts", nil, nil), http.StatusOK)
		return page.Find(`[data-testid="work-row"][data-id="` + id + `"]`)
	}
	fail.Store(true)
	// Since the visibility rule is by construction (issue 38), a row the lead's token could not
	// read is not listed at all (it was listed with its link alone): it is only counted apart,
	// with no stage, value or filter.
	if unchecked := row(); unchecked.Length() != 0 {
		t.Errorf("a row the lead's token could not read is listed: %q", unchecked.Text())
	}
	if got := strings.TrimSpace(page.Find(`[data-testid="work-unchecked-notice-count"]`).Text()); got != "1 not checked yet" {
		t.Errorf("the unchecked row is counted apart as %q", got)
	}
	if n := page.Find(`[data-testid="work-count"]`).Text(); n != "0 found" {
		t.Errorf("the list counts a row the lead's token never read: %q", n)
	}
	if reads.Load() == 0 {
		t.Error("the row was not re-read with the lead's token")
	}
	fail.Store(false)
	checked := row()
	if checked.Find(`[data-testid="work-customer"]`).Length() != 1 || checked.AttrOr("data-stage", "") != "generated" {
		t.Errorf("after a successful read with the lead's token the row is still hidden: %q", checked.Text())
	}
	if page.Find(`[data-testid="work-unchecked-notice"]`).Length() != 0 {
		t.Error("a row the lead's token read is still counted as not checked")
	}
	before := reads.Load()
	row()
	if reads.Load() != before {
		t.Error("a row the lead's token read a moment ago was read again")
	}
}
