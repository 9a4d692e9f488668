package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/v2sim"
)

// paletteEnv is a signed-in portal in front of its own simulator, and a v2 client that talks to the
// simulator directly (it accepts any token without IssuerURL) to make quotes and contracts.
type paletteEnv struct {
	p    *testPortal
	sim  *v2sim.Server
	api  *apiclient.Client
	user *http.Client
}

func newPaletteEnv(t *testing.T) *paletteEnv {
	t.Helper()
	sim := v2sim.New(v2sim.Options{Customers: 12, Seed: 7, TempDir: t.TempDir()})
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); _ = sim.Close() })
	api, err := apiclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	p := newPortal(t, portalOptions{v2URL: srv.URL})
	return &paletteEnv{p: p, sim: sim, api: api, user: p.login(t, "sales", "sales-demo")}
}

func (e *paletteEnv) ctx() context.Context {
	return apiclient.WithToken(context.Background(), "palette-test-token")
}

// quote makes a quote with one cart for the customer in configurator 1, through the v2 API (so the
// portal's session knows nothing of it).
func (e *paletteEnv) quote(t *testing.T, customerID int32) int64 {
	t.Helper()
	ctx := e.ctx()
	init, err := e.api.CPQ.Init(ctx, 1, customerID)
	if err != nil {
		t.Fatalf("init: %v", err)
	}
	tofID := init.TOFList[0].ID
	products, err := e.api.CPQ.ValidProducts(ctx, init.SessionID, 1, tofID)
	if err != nil {
		t.Fatalf("valid products: %v", err)
	}
	for _, p := range products {
		if p.Kind == "MAIN" {
			q, err := e.api.CPQ.AddCart(ctx, init.SessionID, 1, tofID, apiclient.AddCartRequest{
				ProductID: p.ProductID, TOFProductID: p.TOFProductID, CustomerID: customerID, Label: "Palette test",
			})
			if err != nil {
				t.Fatalf("add cart: %v", err)
			}
			return q.QuoteID
		}
	}
	t.Fatal("no MAIN product")
	return 0
}

// search asks the palette for q as htmx does and returns the partial.
func (e *paletteEnv) search(t *testing.T, q string) (response, *goquery.Document) {
	t.Helper()
	resp := e.p.get(t, e.user, "/palette?"+url.Values{"q": {q}}.Encode(), htmx)
	return resp, parseHTML(t, resp.body)
}

type paletteOption struct{ kind, href, text string }

func paletteOptions(doc *goquery.Document) []paletteOption {
	var out []paletteOption
	doc.Find(`#palette-listbox [role="option"]`).Each(func(_ int, s *goquery.Selection) {
		out = append(out, paletteOption{kind: s.AttrOr("data-kind", ""), href: s.AttrOr("data-href", ""),
			text: strings.Join(strings.Fields(s.Text()), " ")})
	})
	return out
}

func hasOption(opts []paletteOption, kind, href string) bool {
	for _, o := range opts {
		if o.kind == kind && o.href == href {
			return true
		}
	}
	return false
}

func v2Calls(sim *v2sim.Server, prefix string) int {
	n := 0
	for _, r := range sim.Requests() {
		if strings.HasPrefix(r.EscapedPath, prefix) {
			n++
		}
	}
	return n
}

func TestPaletteFindsCustomersByNameAndByID(t *testing.T) {
	t.Parallel()
	e := newPaletteEnv(t)
	customer, err := e.api.Customers.Get(e.ctx(), 7)
	if err != nil {
		t.Fatal(err)
	}
	e.sim.ResetRequests()

	resp, doc := e.search(t, strings.ToLower(customer.Name))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, resp.body)
	}
	opts := paletteOptions(doc)
	if !hasOption(opts, "customer", "/customers/7") {
		t.Fatalf("searching %q does not offer customer 7: %+v", customer.Name, opts)
	}
	for _, o := range opts {
		if o.href == "/customers/7" && !strings.Contains(o.text, customer.Name) {
			t.Errorf("the option reads %q, want the customer's name %q", o.text, customer.Name)
		}
	}
	if n := v2Calls(e.sim, "/v2/contract"); n != 0 && strings.ContainsFunc(customer.Name, func(r rune) bool { return r == ' ' }) {
		t.Errorf("a name with spaces cost %d contract calls", n)
	}
	found := doc.Find(`[data-palette-found]`)
	if found.AttrOr("data-query", "") != strings.ToLower(customer.Name) || found.AttrOr("data-count", "") != strconv.Itoa(len(opts)) {
		t.Errorf("the partial says query %q, count %q; want %q, %d", found.AttrOr("data-query", ""), found.AttrOr("data-count", ""),
			strings.ToLower(customer.Name), len(opts))
	}
	if doc.Find(`#palette-listbox[role="listbox"]`).Length() != 1 || doc.Find(`[role="option"][aria-selected]`).Length() != len(opts) {
		t.Error("the results are not a listbox of options with aria-selected")
	}

	_, doc = e.search(t, "7")
	opts = paletteOptions(doc)
	if len(opts) == 0 || opts[0].href != "/customers/7" {
		t.Errorf("searching the id 7: the first option is not customer 7: %+v", opts)
	}
	if !hasOption(opts, "quote", "/palette/quotes/7") {
		t.Errorf("a number is also offered as a quote id: %+v", opts)
	}
}

func TestPaletteFindsContractsByIDAndNumber(t *testing.T) {
	t.Parallel()
	e := newPaletteEnv(t)
	quoteID := e.quote(t, 2)
	generated, err := e.api.Contracts.Generate(e.ctx(), quoteID)
	if err != nil {
		t.Fatal(err)
	}
	_ = generated.Close()
	contract, err := e.api.Contracts.Get(e.ctx(), generated.ContractID)
	if err != nil {
		t.Fatal(err)
	}
	href := fmt.Sprintf("/contracts/%d", contract.ContractID)

	e.sim.ResetRequests()
	_, doc := e.search(t, contract.ContractNumber)
	if opts := paletteOptions(doc); !hasOption(opts, "contract", href) {
		t.Errorf("searching the number %s does not offer %s: %+v", contract.ContractNumber, href, opts)
	}
	if n := v2Calls(e.sim, "/v2/contract/bycontractnumber/"); n != 1 {
		t.Errorf("%d calls by contract number, want 1", n)
	}

	e.sim.ResetRequests()
	_, doc = e.search(t, strconv.Itoa(int(contract.ContractID)))
	if opts := paletteOptions(doc); !hasOption(opts, "contract", href) {
		t.Errorf("searching the id %d does not offer %s: %+v", contract.ContractID, href, opts)
	}
	if n := v2Calls(e.sim, fmt.Sprintf("/v2/contract/%d", contract.ContractID)); n != 1 {
		t.Errorf("%d calls of the contract by id, want 1", n)
	}

	// A number nobody has: no contract, no error.
	resp, doc := e.search(t, "C-1999-424242")
	if resp.StatusCode != http.StatusOK || doc.Find(`[data-kind="contract"]`).Length() != 0 || doc.Find(`[data-testid="palette-note"]`).Length() != 0 {
		t.Errorf("an unknown number: status %d, body %s", resp.StatusCode, resp.body)
	}
}

func TestPaletteListsPagesWithoutCallingTheAPI(t *testing.T) {
	t.Parallel()
	e := newPaletteEnv(t)
	e.sim.ResetRequests()
	_, doc := e.search(t, "")
	var hrefs []string
	for _, o := range paletteOptions(doc) {
		if o.kind == "page" {
			hrefs = append(hrefs, o.href)
		}
	}
	// A rep is offered no back-office tool (PORTAL_*_ROLES); the back office is offered all three.
	if got := strings.Join(hrefs, " "); got != "/customers /customers/new /quotes/new /contracts /audits /audits/worklist" {
		t.Errorf("empty query lists pages %q to a rep", got)
	}
	if n := len(e.sim.Requests()); n != 0 {
		t.Errorf("an empty query made %d v2 calls", n)
	}
	clerk := e.p.login(t, "backoffice", "backoffice-demo")
	e.sim.ResetRequests()
	hrefs = nil
	for _, o := range paletteOptions(parseHTML(t, e.p.get(t, clerk, "/palette?q=", htmx).body)) {
		if o.kind == "page" {
			hrefs = append(hrefs, o.href)
		}
	}
	if got := strings.Join(hrefs, " "); got != "/customers /customers/new /quotes/new /contracts /audits /audits/worklist /contracts/batch-archive /customers/handover /customers/import" {
		t.Errorf("empty query lists pages %q to the back office", got)
	}
	if n := len(e.sim.Requests()); n != 0 {
		t.Errorf("an empty query made %d v2 calls", n)
	}
	_, doc = e.search(t, "new")
	var labels []string
	for _, o := range paletteOptions(doc) {
		if o.kind == "page" {
			labels = append(labels, o.href)
		}
	}
	if got := strings.Join(labels, " "); got != "/customers/new /quotes/new" {
		t.Errorf("\"new\" lists pages %q", got)
	}
	_, doc = e.search(t, "zzzz-nothing")
	if doc.Find(`#palette-listbox`).Length() != 0 || !strings.Contains(doc.Find(`[data-testid="palette-empty"]`).Text(), "No results for “zzzz-nothing”") {
		t.Errorf("no results: %s", doc.Text())
	}
}

func TestPaletteOpensAQuoteByItsNumberAlone(t *testing.T) {
	t.Parallel()
	e := newPaletteEnv(t)
	quoteID := e.quote(t, 4)
	_, doc := e.search(t, strconv.FormatInt(quoteID, 10))
	open := fmt.Sprintf("/palette/quotes/%d", quoteID)
	if !hasOption(paletteOptions(doc), "quote", open) {
		t.Fatalf("the quote id is not offered: %+v", paletteOptions(doc))
	}
	resp := e.p.get(t, e.user, open, nil)
	if want := fmt.Sprintf("/quotes/1/4/%d", quoteID); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
		t.Errorf("opening the quote: %d to %q, want 303 to %s", resp.StatusCode, resp.Header.Get("Location"), want)
	}

	resp = e.p.get(t, e.user, "/palette/quotes/987654321", nil)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(resp.body, "There is no quote 987654321") {
		t.Errorf("an unknown quote: %d", resp.StatusCode)
	}

	e.sim.ResetRequests()
	for _, bad := range []string{"abc", "0", "-1", "99999999999999999999"} {
		resp := e.p.get(t, e.user, "/palette/quotes/"+bad, nil)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("quote id %q answered %d, want 400", bad, resp.StatusCode)
		}
	}
	if n := len(e.sim.Requests()); n != 0 {
		t.Errorf("bad quote ids made %d v2 calls", n)
	}
}

// A quote started in a configurator its customer's record does not list is still found: the
// customer's own configurators are tried first, then every other one.
func TestPaletteOpensAQuoteOutsideItsCustomersConfigurators(t *testing.T) {
	t.Parallel()
	e := newPaletteEnv(t)
	var customerID int32
	for id := int32(1); id <= 5 && customerID == 0; id++ {
		customer, err := e.api.Customers.Get(e.ctx(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(customer.CPQIDs) > 0 && !slices.Contains(customer.CPQIDs, 1) {
			customerID = id
		}
	}
	if customerID == 0 {
		t.Fatal("no seeded customer outside configurator 1: the test needs one (change the seed)")
	}
	quoteID := e.quote(t, customerID) // started in configurator 1
	resp := e.p.get(t, e.user, fmt.Sprintf("/palette/quotes/%d", quoteID), nil)
	if want := fmt.Sprintf("/quotes/1/%d/%d", customerID, quoteID); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
		t.Errorf("opening quote %d of customer %d: %d to %q, want 303 to %s", quoteID, customerID, resp.StatusCode, resp.Header.Get("Location"), want)
	}
}

func TestPaletteRefusesBadQueriesBeforeAnyCall(t *testing.T) {
	t.Parallel()
	e := newPaletteEnv(t)
	e.sim.ResetRequests()
	long := strings.Repeat("a", 201)
	resp := e.p.get(t, e.user, "/palette?q="+long, nil)
	doc := parseHTML(t, resp.body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(doc.Find(`[data-testid="error-summary"]`).Text(), "at most 200") {
		t.Errorf("a long query as a page: %d, summary %q", resp.StatusCode, doc.Find(`[data-testid="error-summary"]`).Text())
	}
	if doc.Find(`#palette-page-q`).AttrOr("value", "") != "" {
		t.Error("the page repeats a refused query")
	}
	resp = e.p.get(t, e.user, "/palette?q="+long, htmx)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("HX-Retarget") != "#toasts" {
		t.Errorf("a long query for htmx: %d, retarget %q", resp.StatusCode, resp.Header.Get("HX-Retarget"))
	}
	resp = e.p.get(t, e.user, "/palette?q="+url.QueryEscape("a\x00b"), htmx)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a control character: %d", resp.StatusCode)
	}
	if n := len(e.sim.Requests()); n != 0 {
		t.Errorf("refused queries made %d v2 calls", n)
	}
}

func TestPalettePageWorksWithoutJavaScript(t *testing.T) {
	t.Parallel()
	e := newPaletteEnv(t)
	customer, err := e.api.Customers.Get(e.ctx(), 3)
	if err != nil {
		t.Fatal(err)
	}
	resp := e.p.get(t, e.user, "/palette?"+url.Values{"q": {customer.Name}}.Encode(), nil)
	doc := parseHTML(t, resp.body)
	if resp.StatusCode != http.StatusOK || doc.Find("title").Text() != "Go to – CPQ Portal" {
		t.Fatalf("page: %d %q", resp.StatusCode, doc.Find("title").Text())
	}
	link := doc.Find(`[data-testid="palette-page-result"] a[href="/customers/3"]`)
	if link.Text() != customer.Name {
		t.Errorf("the page links customer 3 as %q", link.Text())
	}
	if doc.Find(`#palette-page-q`).AttrOr("value", "") != customer.Name {
		t.Error("the search field does not keep the query")
	}
	// Every signed-in page carries the trigger (a link to this page) and the closed dialog.
	list := parseHTML(t, e.p.get(t, e.user, "/customers", nil).body)
	if list.Find(`header a#palette-trigger[href="/palette"][aria-haspopup="dialog"]`).Length() != 1 {
		t.Error("the header has no palette trigger")
	}
	input := list.Find(`dialog#palette input#palette-input[role="combobox"]`)
	if input.AttrOr("hx-get", "") != "/palette" || !strings.Contains(input.AttrOr("hx-trigger", ""), "delay:200ms") ||
		input.AttrOr("aria-controls", "") != "palette-listbox" || input.AttrOr("aria-expanded", "") != "false" {
		t.Errorf("the palette input is not a debounced combobox: %v", input.Nodes)
	}
	if list.Find(`dialog#palette[open]`).Length() != 0 {
		t.Error("the dialog is open in the page as sent")
	}
}

func TestPaletteKeepsOtherResultsWhenContractsFail(t *testing.T) {
	t.Parallel()
	e := newPaletteEnv(t)
	e.sim.SetFault("contracts.get", v2sim.Fault{Status: http.StatusServiceUnavailable})
	e.sim.SetFault("contracts.bynumber", v2sim.Fault{Status: http.StatusServiceUnavailable})
	resp, doc := e.search(t, "5")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if !hasOption(paletteOptions(doc), "customer", "/customers/5") {
		t.Errorf("customer 5 is not offered when contracts fail: %+v", paletteOptions(doc))
	}
	if note := doc.Find(`[data-testid="palette-note"]`).Text(); !strings.Contains(note, "Contracts could not be searched") {
		t.Errorf("no note about contracts: %q", note)
	}
}

// A recent quote in the palette names its customer when the portal knows the name (the quote page
// read it), never "customer #4".
func TestPaletteNamesTheCustomerOfARecentQuote(t *testing.T) {
	t.Parallel()
	e := newPaletteEnv(t)
	quoteID := e.quote(t, 4)
	customer, err := e.api.Customers.Get(e.ctx(), 4)
	if err != nil {
		t.Fatal(err)
	}
	href := fmt.Sprintf("/quotes/1/4/%d", quoteID)
	quoteMust(t, "quote page", e.p.get(t, e.user, href, nil), http.StatusOK)
	_, doc := e.search(t, strconv.FormatInt(quoteID, 10))
	for _, o := range paletteOptions(doc) {
		if o.href != href {
			continue
		}
		if !strings.Contains(o.text, customer.Name) || strings.Contains(o.text, "customer #") {
			t.Fatalf("the recent quote reads %q, want its customer %q by name", o.text, customer.Name)
		}
		return
	}
	t.Fatalf("the recent quote is not offered: %+v", paletteOptions(doc))
}
