package handlers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/v2sim"
)

// Customer list: the page, search as you type (htmx partial), sort, pages, result count.
func TestCustomerListSearchSortAndPages(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{simCustomers: 60, customerCacheTTL: time.Minute})
	user := p.login(t, "sales", "sales-demo")

	page := p.get(t, user, "/customers", nil)
	if page.StatusCode != http.StatusOK {
		t.Fatalf("GET /customers: %d", page.StatusCode)
	}
	doc := parseHTML(t, page.body)
	q := doc.Find(`[data-testid="customer-q"]`)
	if _, ok := q.Attr("autofocus"); !ok || q.AttrOr("name", "") != "q" {
		t.Error("the search box is not focused on load or not named q")
	}
	if got := doc.Find(`[data-testid="customer-search"]`).AttrOr("hx-replace-url", ""); got != "true" {
		t.Errorf("the search form's hx-replace-url = %q: the URL would not follow the query", got)
	}
	if got := len(rowIDs(doc)); got != customerPageSize {
		t.Fatalf("first page has %d rows, want %d", got, customerPageSize)
	}
	if got := doc.Find(`[data-testid="result-count"]`).Text(); got != "60 customers in all, showing 1–25." {
		t.Errorf("result count %q", got)
	}
	if doc.Find(`[data-testid="pagination"]`).Length() != 1 {
		t.Error("no pagination for 60 customers")
	}
	// Default order: by name, ascending.
	names := doc.Find(`[data-testid="customer-link"]`).Map(func(_ int, s *goquery.Selection) string { return strings.ToLower(s.Text()) })
	for i := 1; i < len(names); i++ {
		if names[i-1] > names[i] {
			t.Fatalf("rows not sorted by name: %q before %q", names[i-1], names[i])
		}
	}
	// The configurators are offered as sources.
	if n := doc.Find(`[data-testid="customer-source"] option`).Length(); n < 2 {
		t.Errorf("the source select has %d options, want the list plus the configurators", n)
	}

	// A keystroke: htmx asks for the region only.
	firstName := doc.Find(`[data-testid="customer-link"]`).First().Text()
	word := strings.Fields(firstName)[0]
	part := p.get(t, user, "/customers?q="+url.QueryEscape(strings.ToLower(word))+"&sort=name&dir=asc", htmx)
	if part.StatusCode != http.StatusOK {
		t.Fatalf("search partial: %d", part.StatusCode)
	}
	if strings.Contains(part.body, "<html") {
		t.Fatal("the htmx search answered a whole page, want the region only")
	}
	pdoc := parseHTML(t, part.body)
	if pdoc.Find("#customer-results").Length() != 1 {
		t.Fatal("the partial has no #customer-results region")
	}
	rows := pdoc.Find(`[data-testid="customer-row"]`)
	if rows.Length() == 0 || rows.Length() >= 60 {
		t.Fatalf("search %q gave %d rows: it did not narrow the list", word, rows.Length())
	}
	rows.Each(func(_ int, r *goquery.Selection) {
		if !strings.Contains(strings.ToLower(r.Text()), strings.ToLower(word)) {
			t.Errorf("row %q does not match %q", r.Text(), word)
		}
	})
	if got := part.Header.Get("HX-Trigger"); !strings.Contains(got, "announce") {
		t.Errorf("HX-Trigger %q: the result count is not announced", got)
	}

	// An exact tax id finds one customer.
	taxID := strings.TrimSpace(doc.Find(`[data-testid="customer-row"] td.mono`).Eq(3).Text())
	one := parseHTML(t, p.get(t, user, "/customers?q="+strings.ToLower(taxID), htmx).body)
	if got := rowIDs(one); len(got) != 1 || one.Find(`[data-testid="result-count"]`).Text() != "1 customer found." {
		t.Errorf("search by tax id %s: rows %v, count %q", taxID, got, one.Find(`[data-testid="result-count"]`).Text())
	}
	// Nothing matches: an empty state, not an error.
	none := parseHTML(t, p.get(t, user, "/customers?q=zzzz-no-such-customer", htmx).body)
	if none.Find(`[data-testid="empty-state"]`).Length() != 1 || none.Find(`[data-testid="result-count"]`).Text() != "No customers found." {
		t.Error("no empty state for a search without matches")
	}

	// Sort by number, descending; page 3 holds the last 10.
	desc := parseHTML(t, p.get(t, user, "/customers?sort=id&dir=desc&page=3", htmx).body)
	ids := rowIDs(desc)
	if len(ids) != 10 || ids[0] != "10" || ids[9] != "1" {
		t.Errorf("page 3 by number descending: %v, want 10 down to 1", ids)
	}
	if got := desc.Find(`th[aria-sort="descending"]`).Text(); !strings.Contains(got, "Number") {
		t.Errorf("aria-sort marks %q, want the Number column", got)
	}
	// Sort links and pager links keep the query and push the URL.
	sortLink := pdoc.Find(`[data-testid="sort-name"]`)
	if href := sortLink.AttrOr("href", ""); !strings.Contains(href, "dir=desc") || !strings.Contains(href, "q="+url.QueryEscape(strings.ToLower(word))) {
		t.Errorf("the name header links to %q: want the same query, descending", href)
	}
	if sortLink.AttrOr("hx-push-url", "") != "true" {
		t.Error("sorting does not push the URL")
	}
	next := doc.Find(`[data-testid="pagination"] a[rel="next"]`)
	if next.AttrOr("href", "") != "/customers?dir=asc&page=2&sort=name" || next.AttrOr("hx-target", "") != "#customer-results" {
		t.Errorf("next page link %q target %q", next.AttrOr("href", ""), next.AttrOr("hx-target", ""))
	}
	// A page past the end shows the last one.
	last := parseHTML(t, p.get(t, user, "/customers?page=99", nil).body)
	if got := last.Find(`[data-testid="result-count"]`).Text(); got != "60 customers in all, showing 51–60." {
		t.Errorf("page 99: %q", got)
	}
	// All of it came from one download of the list (the cache).
	if got := len(awaitSimCalls(t, p.sim, http.MethodGet, "/v2/customer/", 1)); got != 1 {
		t.Errorf("the list was fetched %d times, want once", got)
	}
}

// Online search by configurator: the same search box, the configurator's answer, the source on
// each row.
func TestCustomerListOnlineSearch(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{simCustomers: 30})
	user := p.login(t, "sales", "sales-demo")
	p.settleAfterLogin(t)

	resp := p.get(t, user, "/customers?cpqId=2&q=s", htmx)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("online search: %d %s", resp.StatusCode, resp.body)
	}
	doc := parseHTML(t, resp.body)
	if len(rowIDs(doc)) == 0 {
		t.Fatal("the online search found nobody")
	}
	doc.Find(`[data-testid="customer-row"] [data-testid="badge"]`).Each(func(_ int, s *goquery.Selection) {
		if !strings.HasPrefix(s.Text(), "Online search: ") {
			t.Errorf("row source %q, want the configurator", s.Text())
		}
	})
	calls := awaitSimCalls(t, p.sim, http.MethodGet, "/v2/customer/onlinesearch/2", 1)
	if len(calls) != 1 || !strings.Contains(calls[0].RequestURI, "query=s") {
		t.Fatalf("online search calls: %+v", calls)
	}
	if n := len(simCalls(p.sim, http.MethodGet, "/v2/customer/")) - len(calls); n != 0 {
		t.Errorf("the online search also fetched the whole list (%d calls)", n)
	}
	// The full page keeps the chosen configurator selected.
	page := parseHTML(t, p.get(t, user, "/customers?cpqId=2", nil).body)
	if page.Find(`[data-testid="customer-source"] option[selected]`).AttrOr("value", "") != "2" {
		t.Error("the page does not show configurator 2 as the source")
	}
	// An unknown configurator is a message in the region.
	unknown := p.get(t, user, "/customers?cpqId=999", htmx)
	udoc := parseHTML(t, unknown.body)
	if unknown.StatusCode != http.StatusNotFound || !strings.Contains(udoc.Find(`[data-testid="customer-list-error"]`).Text(), "Product catalogue 999") {
		t.Errorf("unknown configurator: %d %s", unknown.StatusCode, unknown.body)
	}
}

// The list region reports an upstream failure in place; the rest of the page works.
func TestCustomerListUpstreamFaultStaysInRegion(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{simCustomers: 10})
	user := p.login(t, "sales", "sales-demo")
	p.sim.SetFault(apiclient.EndpointCustomerList, v2sim.Fault{Status: http.StatusServiceUnavailable})

	resp := p.get(t, user, "/customers", nil)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status %d, want 200 (the page works; the region says what failed)", resp.StatusCode)
	}
	doc := parseHTML(t, resp.body)
	region := doc.Find(`#customer-results [data-testid="customer-list-error"]`)
	if region.Length() != 1 || !strings.Contains(region.Text(), "CPQ service answered with an error") {
		t.Fatalf("no error in the region: %s", doc.Find("#customer-results").Text())
	}
	if doc.Find(`[data-testid="customer-search"]`).Length() != 1 || doc.Find(`[data-testid="main-nav"]`).Length() != 1 {
		t.Error("the search form or the navigation is missing: the page is not usable")
	}
	if doc.Find(`[data-testid="error-page"]`).Length() != 0 {
		t.Error("a whole error page was shown instead of a message in the region")
	}
	if retry := region.Find(`[data-testid="customer-list-retry"]`); retry.AttrOr("hx-get", "") == "" {
		t.Error("no way to try again")
	}
	// The same for a keystroke: the region, not a toast.
	part := p.get(t, user, "/customers?q=x", htmx)
	if part.StatusCode != http.StatusBadGateway || part.Header.Get("HX-Retarget") != "" || !strings.Contains(part.body, `data-testid="customer-list-error"`) {
		t.Errorf("the htmx search answered %q with %s", part.Header.Get("HX-Retarget"), part.body)
	}
	// The service is back: trying again works.
	p.sim.ClearFaults()
	back := parseHTML(t, p.get(t, user, "/customers?q=", htmx).body)
	if len(rowIDs(back)) != 10 {
		t.Errorf("after the outage: %d rows, want 10", len(rowIDs(back)))
	}
}

// A slow list: the region says the service did not answer in time (504), the page still works.
func TestCustomerListSlowUpstream(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{simCustomers: 5, v2Timeout: 200 * time.Millisecond})
	user := p.login(t, "sales", "sales-demo")
	p.sim.SetFault(apiclient.EndpointCustomerList, v2sim.Fault{Hang: true})
	resp := p.get(t, user, "/customers", nil)
	doc := parseHTML(t, resp.body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(doc.Find(`[data-testid="customer-list-error"]`).Text(), "did not answer in time") {
		t.Errorf("slow list: %d, region %q", resp.StatusCode, doc.Find("#customer-results").Text())
	}
	if part := p.get(t, user, "/customers?q=a", htmx); part.StatusCode != http.StatusGatewayTimeout {
		t.Errorf("slow list, htmx region: %d, want 504", part.StatusCode)
	}
	if doc.Find(`[data-testid="customer-q"]`).Length() != 1 {
		t.Error("the search box is missing")
	}
}

// A list that takes longer than the page waits: the page comes at once with a region that loads
// itself, and that request gets the table.
func TestCustomerListLoadsLazilyWhenSlow(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{simCustomers: 5, v2Timeout: 5 * time.Second})
	user := p.login(t, "sales", "sales-demo")
	p.settleAfterLogin(t)
	p.sim.SetFault(apiclient.EndpointCustomerList, v2sim.Fault{Delay: customerListPageWait + time.Second, Times: 1})
	resp := p.get(t, user, "/customers?q=s", nil)
	doc := parseHTML(t, resp.body)
	loading := doc.Find(`[data-testid="customer-list-loading"]`)
	if resp.StatusCode != http.StatusOK || loading.Length() != 1 {
		t.Fatalf("slow first load: %d, region %s", resp.StatusCode, doc.Find("#customer-results").Text())
	}
	if loading.AttrOr("hx-trigger", "") != "load" || !strings.Contains(loading.AttrOr("hx-get", ""), "q=s") {
		t.Errorf("the loading region does not load itself: %v", loading.Nodes[0].Attr)
	}
	part := parseHTML(t, p.get(t, user, loading.AttrOr("hx-get", ""), htmx).body)
	if len(rowIDs(part)) == 0 {
		t.Error("the region's own request got no rows")
	}
	if got := len(awaitSimCalls(t, p.sim, http.MethodGet, "/v2/customer/", 1)); got != 1 {
		t.Errorf("the list was fetched %d times, want once (the page's fetch went on)", got)
	}
}

// Each user's list is their own: fetched with their token, never shared; their own changes show
// at once without a new download.
func TestCustomerListCachePerUserAndUpdatedAfterMutation(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{simCustomers: 20, customerCacheTTL: time.Hour})
	// Signing in opens /customers: each user's list is fetched then, once.
	sales := p.login(t, "sales", "sales-demo")
	back := p.login(t, "backoffice", "backoffice-demo")
	p.get(t, sales, "/customers", nil)
	p.get(t, sales, "/customers?q=a", htmx)
	p.get(t, back, "/customers", nil)
	lists := awaitSimCalls(t, p.sim, http.MethodGet, "/v2/customer/", 2)
	if len(lists) != 2 {
		t.Fatalf("%d list fetches, want one per user", len(lists))
	}
	if lists[0].Header.Get("Authorization") == lists[1].Header.Get("Authorization") {
		t.Error("both users' lists were fetched with the same token")
	}

	name := uniqueName("Cache Check")
	created := p.postForm(t, sales, "/customers", validCustomerForm(name, uniqueTaxID()), true)
	if created.StatusCode != http.StatusOK {
		t.Fatalf("create: %d %s", created.StatusCode, created.body)
	}
	found := parseHTML(t, p.get(t, sales, "/customers?q="+url.QueryEscape(name), htmx).body)
	if len(rowIDs(found)) != 1 {
		t.Errorf("the creator's list does not show %q at once", name)
	}
	if got := len(simCalls(p.sim, http.MethodGet, "/v2/customer/")); got != 2 {
		t.Errorf("%d list fetches after the create, want still 2 (the change went into the cache)", got)
	}
	// The other user's list is theirs: not touched by the creator's change.
	other := parseHTML(t, p.get(t, back, "/customers?q="+url.QueryEscape(name), htmx).body)
	if len(rowIDs(other)) != 0 {
		t.Error("the creator's change appeared in another user's cached list")
	}
}

// Detail: summary, owners, profiles, attributes, every other field as key/value, the quote link.
func TestCustomerDetail(t *testing.T) {
	t.Parallel()
	// A v2 API that sends fields the portal does not know (a newer service): the simulator
	// behind a proxy adding them to the customer document.
	sim := v2sim.New(v2sim.Options{Customers: 10, Seed: 3})
	t.Cleanup(func() { _ = sim.Close() })
	proxy := httptest.NewServer(withExtraCustomerFields(sim))
	t.Cleanup(proxy.Close)
	p := newPortal(t, portalOptions{v2URL: proxy.URL})
	user := p.login(t, "sales", "sales-demo")

	// Customer 9 of this seed has profiles and exactly one configurator.
	resp := p.get(t, user, "/customers/9", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /customers/9: %d", resp.StatusCode)
	}
	doc := parseHTML(t, resp.body)
	summary := summaryValues(doc)
	if summary["Customer number"] != "9" || summary["Tax id"] == "" || summary["Address"] == "" ||
		!slices.Contains([]string{"Business", "Consumer", "Public"}, summary["Segment"]) || summary["Status"] != "Active" {
		t.Errorf("summary %v (segment and status in words)", summary)
	}
	if catalogues := summary["Product catalogues"]; catalogues == "" || regexp.MustCompile(`\d`).MatchString(catalogues) || strings.Contains(catalogues, "Product catalogue ") {
		t.Errorf("product catalogues %q are not named (or carry their numbers)", catalogues)
	}
	if doc.Find(`[data-testid="owner"]`).Length() == 0 || doc.Find(`[data-testid="owner-name"]`).First().Text() == "" {
		t.Error("no owners with names")
	}
	if doc.Find(`[data-testid="known-owners"] option`).Length() == 0 {
		t.Error("no owner suggestions")
	}
	if doc.Find(`[data-testid="profile-row"]`).Length() == 0 {
		t.Error("no profiles")
	}
	// The trees are folded and loaded when opened (issue 43): the page has the sections and where
	// their content comes from, htmx gets the tree alone, a browser without it a page of its own.
	for section, href := range map[string]string{"customer-attributes": "/customers/9/attributes", "customer-other-fields": "/customers/9/other-fields"} {
		folded := doc.Find(`[data-testid="` + section + `"] details[hx-get]`)
		if folded.AttrOr("hx-get", "") != href || folded.Find(`[data-testid="json-tree"]`).Length() != 0 {
			t.Errorf("%s: hx-get %q (want %s), %d trees in the page", section, folded.AttrOr("hx-get", ""), href, folded.Find(`[data-testid="json-tree"]`).Length())
		}
		own := p.get(t, user, href, nil)
		if ownDoc := parseHTML(t, own.body); own.StatusCode != http.StatusOK || ownDoc.Find(`main [data-testid="json-tree"]`).Length() != 1 ||
			ownDoc.Find(`main a[href="/customers/9"]`).Length() == 0 {
			t.Errorf("%s without htmx: %d, not a page with the tree and the way back", href, own.StatusCode)
		}
	}
	attrs := p.get(t, user, "/customers/9/attributes", htmx)
	if adoc := parseHTML(t, attrs.body); attrs.StatusCode != http.StatusOK || adoc.Find(`[data-testid="json-tree"]`).Length() != 1 || adoc.Find("main").Length() != 0 {
		t.Error("the attributes are not answered as a tree alone")
	}
	otherResp := p.get(t, user, "/customers/9/other-fields", htmx)
	other := parseHTML(t, otherResp.body).Selection
	if otherResp.StatusCode != http.StatusOK || other.Find(`[data-testid="json-tree"]`).Length() != 1 {
		t.Fatalf("the unknown fields are not shown: %d %s", otherResp.StatusCode, otherResp.body)
	}
	keys := other.Find("dt").Map(func(_ int, s *goquery.Selection) string { return s.Text() })
	for _, want := range []string{"loyalty", "level", "legacyCode", "address", "region"} {
		if !strings.Contains(strings.Join(keys, " "), want) {
			t.Errorf("other fields lack %q (keys %v)", want, keys)
		}
	}
	for _, known := range []string{"taxId", "owners", "profiles", "street"} {
		for _, k := range keys {
			if k == known {
				t.Errorf("known field %q repeated among the other fields", known)
			}
		}
	}
	if other.Find(`details[data-type="object"]`).Length() < 2 {
		t.Error("nested values are not collapsible")
	}
	if strings.Contains(resp.body, `<pre`) || strings.Contains(otherResp.body, `<pre`) {
		t.Error("a raw JSON dump is on the page")
	}
	// The payload in an unknown field stays text.
	if other.Find("script:not([src])").Length() != 0 || !strings.Contains(other.Text(), "<script>alert(2)</script>") {
		t.Error("the unknown field's payload was not shown escaped")
	}
	if quote := doc.Find(`[data-testid="start-quote"]`).AttrOr("href", ""); quote != "/quotes/new?customerId=9&cpqId=2" {
		t.Errorf("start-quote link %q, want the customer and its one configurator", quote)
	}
	if doc.Find(`[data-testid="edit-customer"]`).AttrOr("href", "") != "/customers/9/edit" {
		t.Error("no edit link")
	}
}

// withExtraCustomerFields adds fields the portal does not know to GET /v2/customer/{id}.
func withExtraCustomerFields(sim http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !regexp.MustCompile(`^/v2/customer/\d+$`).MatchString(r.URL.Path) {
			sim.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, r)
		var doc map[string]json.RawMessage
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &doc) != nil {
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
			return
		}
		doc["loyalty"] = json.RawMessage(`{"level":"gold","history":[{"year":2024,"points":120}]}`)
		doc["legacyCode"] = json.RawMessage(`"<script>alert(2)</script>"`)
		var addr map[string]json.RawMessage
		_ = json.Unmarshal(doc["address"], &addr)
		addr["region"] = json.RawMessage(`"Lombardia"`)
		doc["address"], _ = json.Marshal(addr)
		body, _ := json.Marshal(doc)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
}

// A name with markup stays text on the list and the detail page.
func TestCustomerNameWithMarkupStaysEscaped(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	user := p.login(t, "sales", "sales-demo")
	const payload = `<script>alert(1)</script><img src=x onerror=alert(1)> & Co`
	resp := p.postForm(t, user, "/customers", validCustomerForm(payload, uniqueTaxID()), false)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d %s", resp.StatusCode, resp.body)
	}
	for _, path := range []string{resp.Header.Get("Location"), "/customers?q=" + url.QueryEscape("& Co")} {
		page := p.get(t, user, path, nil)
		doc := parseHTML(t, page.body)
		if doc.Find("script:not([src])").Length() != 0 || doc.Find("img").Length() != 0 {
			t.Errorf("%s: the name became markup", path)
		}
		if !strings.Contains(doc.Find("main").Text(), payload) {
			t.Errorf("%s: the name is not shown as text", path)
		}
	}
}

// Bad ids in the URL or a form: 400 (or a field error), and nothing is sent to the v2 API.
func TestCustomerBadIDsSendNothingUpstream(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	user := p.login(t, "sales", "sales-demo")
	p.settleAfterLogin(t)

	for _, path := range []string{"/customers/abc", "/customers/0", "/customers/-3", "/customers/2147483648",
		"/customers/99999999999999999999", "/customers/1e3/edit", "/customers?cpqId=abc", "/customers?page=0",
		"/customers?sort=password", "/customers?dir=up", "/customers?q=" + strings.Repeat("x", 201)} {
		resp := p.get(t, user, path, nil)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", path, resp.StatusCode)
			continue
		}
		if parseHTML(t, resp.body).Find(`[data-testid="error-page"]`).AttrOr("data-status", "") != "400" {
			t.Errorf("GET %s: no 400 page", path)
		}
	}
	for _, path := range []string{"/customers/x/owners/add", "/customers/0/owners", "/customers/abc/owners/change",
		"/customers/1/profiles/abc/delete", "/customers/abc/profiles", "/customers/99999999999"} {
		resp := p.postForm(t, user, path, url.Values{"ownerId": {"1001"}}, true)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("POST %s: %d, want 400", path, resp.StatusCode)
		}
	}
	// Ids typed into forms: a field error.
	for _, tc := range []struct{ path, field, value string }{
		{"/customers/1/owners/add", "ownerId", "abc"},
		{"/customers/1/owners/add", "ownerId", "0"},
		{"/customers/1/owners/add", "ownerId", "99999999999999999999"},
		{"/customers/1/owners", "ownerIds", "1001, x"},
	} {
		resp := p.postForm(t, user, tc.path, url.Values{tc.field: {tc.value}}, true)
		doc := parseHTML(t, resp.body)
		if resp.StatusCode != http.StatusUnprocessableEntity || doc.Find(`[data-testid="field-error"]`).Length() != 1 {
			t.Errorf("POST %s %s=%q: %d without a field error", tc.path, tc.field, tc.value, resp.StatusCode)
		}
	}
	change := p.postForm(t, user, "/customers/1/owners/change", url.Values{"currentOwnerId": {"abc"}, "newOwnerId": {"1002"}}, true)
	if change.StatusCode != http.StatusBadRequest {
		t.Errorf("change with a malformed current owner: %d, want 400", change.StatusCode)
	}
	if calls := customerSimCalls(p.sim); len(calls) != 0 {
		t.Errorf("bad input reached the v2 API: %d calls, first %s %s", len(calls), calls[0].Method, calls[0].RequestURI)
	}
}

// An unknown customer: 404 "Customer N not found" with the way back.
func TestCustomerNotFound(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	user := p.login(t, "sales", "sales-demo")
	for _, path := range []string{"/customers/999", "/customers/999/edit"} {
		resp := p.get(t, user, path, nil)
		doc := parseHTML(t, resp.body)
		if resp.StatusCode != http.StatusNotFound || doc.Find(`[data-testid="error-title"]`).Text() != "Customer 999 not found" {
			t.Errorf("GET %s: %d %q", path, resp.StatusCode, doc.Find(`[data-testid="error-title"]`).Text())
		}
		if doc.Find(`[data-testid="error-back"]`).AttrOr("href", "") != "/customers" {
			t.Errorf("GET %s: no way back to the list", path)
		}
	}
	// An htmx action on an unknown customer: a toast saying so.
	resp := p.postForm(t, user, "/customers/999/owners/add", url.Values{"ownerId": {"1001"}}, true)
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("HX-Retarget") != "#toasts" || !strings.Contains(resp.body, "Customer 999 not found") {
		t.Errorf("htmx action on an unknown customer: %d %q %s", resp.StatusCode, resp.Header.Get("HX-Retarget"), resp.body)
	}
}

// Create: our validation first (field errors, summary, input kept, nothing sent), then the v2
// API's refusals mapped onto the fields, then success.
func TestCustomerCreateValidation(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	user := p.login(t, "sales", "sales-demo")

	form := p.get(t, user, "/customers/new", nil)
	fdoc := parseHTML(t, form.body)
	if fdoc.Find(`[data-testid="customer-form"]`).AttrOr("hx-sync", "") != "this:drop" ||
		fdoc.Find(`[data-testid="customer-form"]`).AttrOr("hx-disabled-elt", "") == "" {
		t.Error("the form is not protected against a double submit")
	}
	if n := fdoc.Find(`input[name="cpqIds"][checked]`).Length(); n == 0 {
		t.Error("no configurator is offered")
	}

	awaitSimCalls(t, p.sim, http.MethodGet, "/v2/cpq/list", 2) // the form's own calls are recorded
	p.sim.ResetRequests()
	bad := url.Values{"name": {""}, "taxId": {"it12"}, "segment": {"BUSINESS"}, "email": {"not-an-email"},
		"phone": {"12"}, "country": {"Italy"}, "cpqShown": {"1"}, "attributes": {"[1,2]"}, "city": {"Milano <b>"}}
	resp := p.postForm(t, user, "/customers", bad, true)
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("invalid create: %d", resp.StatusCode)
	}
	doc := parseHTML(t, resp.body)
	for field, want := range map[string]string{
		"name": "Enter the name", "taxId": "two letters", "email": "e-mail address", "phone": "phone number",
		"country": "Country: choose a country from the list (“ITALY” is not one of its codes)", "cpqIds": "at least one product catalogue", "attributes": "JSON object",
	} {
		if got := fieldError(doc, field); !strings.Contains(got, want) {
			t.Errorf("field %s: error %q, want %q", field, got, want)
		}
	}
	links := doc.Find(`[data-testid="error-summary"] a`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("href", "") })
	for _, want := range []string{"#field-name", "#field-taxId", "#field-email", "#field-cpqIds", "#field-attributes"} {
		if !strings.Contains(strings.Join(links, " "), want) {
			t.Errorf("the error summary has no link to %s (%v)", want, links)
		}
	}
	if doc.Find(`#field-email`).AttrOr("value", "") != "not-an-email" || doc.Find(`#field-city`).AttrOr("value", "") != "Milano <b>" {
		t.Error("the user's input was not kept")
	}
	if doc.Find(`#field-taxId`).AttrOr("aria-invalid", "") != "true" {
		t.Error("the tax id is not marked invalid")
	}
	if n := len(simCalls(p.sim, http.MethodPost, "/v2/customer")); n != 0 {
		t.Errorf("invalid input was sent to the v2 API (%d POSTs)", n)
	}

	// The v2 API refuses a tax id another customer has (409 with a fieldError on taxId).
	existing := summaryValues(parseHTML(t, p.get(t, user, "/customers/1", nil).body))["Tax id"]
	dup := validCustomerForm(uniqueName("Another"), existing)
	dup.Set("confirmedDuplicate", strings.ToLower(dup.Get("name"))+"|"+existing) // past our own warning
	resp = p.postForm(t, user, "/customers", dup, true)
	doc = parseHTML(t, resp.body)
	if resp.StatusCode != http.StatusConflict || fieldError(doc, "taxId") != "Tax id is already used by another customer" {
		t.Errorf("taken tax id: %d, field error %q", resp.StatusCode, fieldError(doc, "taxId"))
	}
	if doc.Find(`[data-testid="error-summary"] a[href="#field-taxId"]`).Length() != 1 {
		t.Error("the API's field error is not in the summary")
	}
	// An unknown configurator: the API's cpqIds[0] error lands on the configurators.
	unknownCPQ := validCustomerForm(uniqueName("Cfg"), uniqueTaxID())
	unknownCPQ.Set("cpqIds", "77")
	resp = p.postForm(t, user, "/customers", unknownCPQ, true)
	doc = parseHTML(t, resp.body)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(fieldError(doc, "cpqIds"), "configurator 77 does not exist") {
		t.Errorf("unknown configurator: %d %q", resp.StatusCode, fieldError(doc, "cpqIds"))
	}

	// Fixed: created, the customer's page replaces <main>, its URL is pushed, a toast says so.
	name := uniqueName("Nuova Impresa")
	taxID := uniqueTaxID()
	good := validCustomerForm(name, strings.ToLower(taxID))
	resp = p.postForm(t, user, "/customers", good, true)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("valid create: %d %s", resp.StatusCode, resp.body)
	}
	if resp.Header.Get("HX-Retarget") != "#main" || !regexp.MustCompile(`^/customers/\d+$`).MatchString(resp.Header.Get("HX-Push-Url")) {
		t.Errorf("create answered HX-Retarget %q, HX-Push-Url %q", resp.Header.Get("HX-Retarget"), resp.Header.Get("HX-Push-Url"))
	}
	if !strings.Contains(resp.Header.Get("HX-Trigger"), "showToast") || !strings.Contains(resp.Header.Get("HX-Trigger"), "created") {
		t.Errorf("no success toast: %q", resp.Header.Get("HX-Trigger"))
	}
	doc = parseHTML(t, resp.body)
	if doc.Find(`[data-testid="customer-name"]`).Text() != name || doc.Find("title").Text() != name+" – CPQ Portal" {
		t.Error("the response is not the new customer's page")
	}
	posts := awaitSimCalls(t, p.sim, http.MethodPost, "/v2/customer", 3) // the refused two, then this one
	var sent map[string]any
	if err := json.Unmarshal([]byte(posts[len(posts)-1].Body), &sent); err != nil {
		t.Fatal(err)
	}
	if sent["taxId"] != taxID || sent["name"] != name || sent["address"].(map[string]any)["country"] != "IT" {
		t.Errorf("sent %v: the tax id and country are not normalised", sent)
	}
}

// Before create, a customer with the same name is a warning the user can confirm past.
func TestCustomerDuplicateWarning(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{simCustomers: 10})
	user := p.login(t, "sales", "sales-demo")
	existing := parseHTML(t, p.get(t, user, "/customers/4", nil).body)
	name := existing.Find(`[data-testid="customer-name"]`).Text()
	awaitSimCalls(t, p.sim, http.MethodGet, "/v2/customer/4", 1)
	p.sim.ResetRequests()

	form := validCustomerForm(strings.ToUpper(name), uniqueTaxID())
	resp := p.postForm(t, user, "/customers", form, true)
	doc := parseHTML(t, resp.body)
	warning := doc.Find(`[data-testid="duplicate-warning"]`)
	if resp.StatusCode != http.StatusOK || warning.Length() != 1 {
		t.Fatalf("no duplicate warning: %d %s", resp.StatusCode, resp.body)
	}
	if warning.Find(`a[href="/customers/4"]`).Length() != 1 || !strings.Contains(warning.Text(), "same name") {
		t.Errorf("the warning does not name customer 4: %s", warning.Text())
	}
	anyway := doc.Find(`[data-testid="create-anyway"]`)
	if anyway.Length() != 1 {
		t.Fatal("no Create anyway button")
	}
	if n := len(simCalls(p.sim, http.MethodPost, "/v2/customer")); n != 0 {
		t.Fatalf("the warning came after a create (%d POSTs)", n)
	}
	// Create anyway: the form carries the confirmation.
	form.Set("confirmedDuplicate", doc.Find(`input[name="confirmedDuplicate"]`).AttrOr("value", ""))
	resp = p.postForm(t, user, "/customers", form, true)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("HX-Push-Url") == "" {
		t.Fatalf("create anyway: %d %s", resp.StatusCode, resp.body)
	}
	creates := 0 // the creates alone: the rep then becomes the new customer's owner (POST …/owner/{id})
	for _, call := range awaitSimCalls(t, p.sim, http.MethodPost, "/v2/customer", 1) {
		if call.EscapedPath == "/v2/customer" {
			creates++
		}
	}
	if creates != 1 {
		t.Errorf("%d creates, want 1", creates)
	}
}

// Edit: the form is filled in; saving sends PUT with the version; a stale version is shown whole.
func TestCustomerEdit(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{customerCacheTTL: time.Hour})
	user := p.login(t, "sales", "sales-demo")
	p.get(t, user, "/customers", nil) // the list is cached

	resp := p.get(t, user, "/customers/3/edit", nil)
	form := customerFormValues(parseHTML(t, resp.body))
	if form.Get("name") == "" || form.Get("taxId") == "" || form.Get("version") == "" || len(form["cpqIds"]) == 0 {
		t.Fatalf("the edit form is not filled in: %v", form)
	}
	if !strings.Contains(form.Get("attributes"), "{") {
		t.Errorf("the attributes are not in the form: %q", form.Get("attributes"))
	}
	version := form.Get("version")
	newName := uniqueName("Renamed")
	form.Set("name", newName)
	resp = p.postForm(t, user, "/customers/3", form, true)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("HX-Push-Url") != "/customers/3" {
		t.Fatalf("save: %d %s", resp.StatusCode, resp.body)
	}
	if got := parseHTML(t, resp.body).Find(`[data-testid="customer-name"]`).Text(); got != newName {
		t.Errorf("after saving the page shows %q", got)
	}
	puts := awaitSimCalls(t, p.sim, http.MethodPut, "/v2/customer", 1)
	var sent struct {
		ID      int32  `json:"id"`
		Version int64  `json:"version"`
		Name    string `json:"name"`
	}
	if len(puts) != 1 || json.Unmarshal([]byte(puts[0].Body), &sent) != nil || sent.ID != 3 || strconv.FormatInt(sent.Version, 10) != version || sent.Name != newName {
		t.Errorf("PUT sent %+v (%d calls), want id 3, version %s", sent, len(puts), version)
	}
	// The cached list has the new name at once.
	list := parseHTML(t, p.get(t, user, "/customers?q="+url.QueryEscape(newName), htmx).body)
	if ids := rowIDs(list); len(ids) != 1 || ids[0] != "3" {
		t.Errorf("the list does not show the new name: %v", ids)
	}

	// Saving the same (now stale) form again: the service's 409 is shown whole, input kept.
	form.Set("name", newName+" again")
	resp = p.postForm(t, user, "/customers/3", form, true)
	doc := parseHTML(t, resp.body)
	summary := doc.Find(`[data-testid="error-summary"] li`).Text()
	if resp.StatusCode != http.StatusConflict || !strings.Contains(summary, "Someone changed this customer") || !strings.Contains(summary, "stale") {
		t.Errorf("stale save: %d, summary %q", resp.StatusCode, summary)
	}
	if doc.Find(`#field-name`).AttrOr("value", "") != newName+" again" {
		t.Error("the user's input was lost")
	}
	// Without JavaScript a save redirects to the customer.
	form.Set("version", strconv.Itoa(int(sent.Version)+1))
	form.Set("email", "office@example.com")
	resp = p.postForm(t, user, "/customers/3", form, false)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/customers/3" {
		t.Errorf("plain save: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// Edit: emptying optional fields in the form clears them (A8: the PUT sends them as ""); the
// fields the user left as they were are kept.
func TestCustomerEditClearsOptionalFields(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	user := p.login(t, "sales", "sales-demo")
	name, taxID := uniqueName("Clearing"), uniqueTaxID()
	created := p.postForm(t, user, "/customers", validCustomerForm(name, taxID), false)
	path := created.Header.Get("Location")
	if created.StatusCode != http.StatusSeeOther || !strings.HasPrefix(path, "/customers/") {
		t.Fatalf("create: %d to %q", created.StatusCode, path)
	}
	form := customerFormValues(parseHTML(t, p.get(t, user, path+"/edit", nil).body))
	if form.Get("phone") == "" || form.Get("city") == "" {
		t.Fatalf("the edit form does not show the phone and the city: %v", form)
	}

	// The user empties the phone and the city and saves.
	form.Set("phone", "")
	form.Set("city", "")
	resp := p.postForm(t, user, path, form, true)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("HX-Push-Url") != path {
		t.Fatalf("save: %d %s", resp.StatusCode, resp.body)
	}
	// The PUT named the emptied fields with "", and every other field with its value.
	puts := awaitSimCalls(t, p.sim, http.MethodPut, "/v2/customer", 1)
	if len(puts) != 1 {
		t.Fatalf("%d PUTs, want 1", len(puts))
	}
	var sent map[string]any
	if err := json.Unmarshal([]byte(puts[0].Body), &sent); err != nil {
		t.Fatalf("PUT body %q: %v", puts[0].Body, err)
	}
	address, _ := sent["address"].(map[string]any)
	if phone, ok := sent["phone"]; !ok || phone != "" || address == nil || address["city"] != "" {
		t.Errorf("PUT body %s: want \"phone\": \"\" and \"address\": {\"city\": \"\"}", puts[0].Body)
	}
	if sent["email"] != "info@example.com" || address["street"] != "Via Roma 1" || address["postalCode"] != "20121" || address["country"] != "IT" {
		t.Errorf("PUT body %s: the untouched fields are not sent as they were", puts[0].Body)
	}

	// The answer and the customer read again from the v2 API show them gone, the rest kept.
	for label, body := range map[string]string{"answer": resp.body, "detail page": p.get(t, user, path, nil).body} {
		summary := summaryValues(parseHTML(t, body))
		if summary["Phone"] != "—" || strings.Contains(summary["Address"], "Milano") {
			t.Errorf("%s: phone %q, address %q; want no phone and no city", label, summary["Phone"], summary["Address"])
		}
		if summary["Name"] != name || summary["Tax id"] != taxID || summary["E-mail"] != "info@example.com" ||
			summary["Address"] != "Via Roma 1, 20121, Italy" || summary["Segment"] != "Business" {
			t.Errorf("%s: the untouched fields changed: %v", label, summary)
		}
	}
	form = customerFormValues(parseHTML(t, p.get(t, user, path+"/edit", nil).body))
	if form.Get("phone") != "" || form.Get("city") != "" || form.Get("email") != "info@example.com" || form.Get("street") != "Via Roma 1" {
		t.Errorf("the edit form opened again shows %v", form)
	}

	// A hand-made post without the e-mail and street inputs leaves them out of the PUT: they are
	// kept, not cleared.
	form.Del("email")
	form.Del("street")
	form.Set("phone", "+39 02 555 0101")
	if resp := p.postForm(t, user, path, form, true); resp.StatusCode != http.StatusOK {
		t.Fatalf("save without e-mail and street inputs: %d %s", resp.StatusCode, resp.body)
	}
	puts = awaitSimCalls(t, p.sim, http.MethodPut, "/v2/customer", 2)
	if len(puts) != 2 {
		t.Fatalf("%d PUTs, want 2", len(puts))
	}
	if body := puts[1].Body; strings.Contains(body, `"email"`) || strings.Contains(body, `"street"`) {
		t.Errorf("PUT body %s names fields the form did not send", body)
	}
	summary := summaryValues(parseHTML(t, p.get(t, user, path, nil).body))
	if summary["E-mail"] != "info@example.com" || !strings.HasPrefix(summary["Address"], "Via Roma 1") || summary["Phone"] != "+39 02 555 0101" {
		t.Errorf("after a post without e-mail and street: %v; want them kept and the new phone", summary)
	}
}

// Owners: add one, change one, replace them all; each calls its own v2 endpoint and updates the
// owners region with a toast; refusals stay next to the field.
func TestCustomerOwners(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	user := p.login(t, "sales", "sales-demo")
	created := p.postForm(t, user, "/customers", validCustomerForm(uniqueName("Owners"), uniqueTaxID()), false)
	path := created.Header.Get("Location")
	id := strings.TrimPrefix(path, "/customers/")
	doc := parseHTML(t, p.get(t, user, path, nil).body)
	if doc.Find(`[data-testid="owners-empty"]`).Length() != 1 {
		t.Fatal("a new customer should have no owner")
	}
	if href := doc.Find(`details[data-testid="owners-manage"]`).AttrOr("hx-get", ""); href != path+"/owners/manage" {
		t.Errorf("Add or replace owners loads %q, want %s/owners/manage", href, path)
	}
	manage := parseHTML(t, p.get(t, user, path+"/owners/manage", htmx).body)
	if manage.Find(`[data-testid="owner-add-form"]`).AttrOr("action", "") != path+"/owners/add" {
		t.Error("Add or replace owners has no add-owner form")
	}
	if manage.Find(`[data-testid="owners-replace-form"]`).AttrOr("data-confirm-url", "") == "" {
		t.Error("replacing the owners asks no confirmation")
	}
	if missing := p.get(t, user, "/customers/999999999/owners/manage", htmx); missing.StatusCode != http.StatusNotFound {
		t.Errorf("Add or replace owners of a missing customer: %d, want 404", missing.StatusCode)
	}
	ownerIDs := func(d *goquery.Document) []string {
		return d.Find(`[data-testid="owner"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-owner-id", "") })
	}

	// Add.
	resp := p.postForm(t, user, path+"/owners/add", url.Values{"ownerId": {"1002"}}, true)
	region := parseHTML(t, resp.body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("HX-Retarget") != "#customer-owners" || strings.Join(ownerIDs(region), ",") != "1002" {
		t.Fatalf("add owner: %d %q owners %v", resp.StatusCode, resp.Header.Get("HX-Retarget"), ownerIDs(region))
	}
	if region.Find(`[data-testid="owner-name"]`).Text() == "" || !strings.Contains(resp.Header.Get("HX-Trigger"), "Owner 1002 added") {
		t.Error("no owner name or no toast")
	}
	if n := len(awaitSimCalls(t, p.sim, http.MethodPost, "/v2/customer/"+id+"/owner/1002", 1)); n != 1 {
		t.Errorf("%d POST owner calls, want 1", n)
	}
	// Add again: the service's 409 next to the field.
	resp = p.postForm(t, user, path+"/owners/add", url.Values{"ownerId": {"1002"}}, true)
	if doc := parseHTML(t, resp.body); resp.StatusCode != http.StatusConflict || !strings.Contains(fieldError(doc, "ownerId"), "already an owner") {
		t.Errorf("add twice: %d %q", resp.StatusCode, fieldError(doc, "ownerId"))
	}
	// An owner the directory does not know: 422 next to the field, input kept.
	resp = p.postForm(t, user, path+"/owners/add", url.Values{"ownerId": {"1099"}}, true)
	if doc := parseHTML(t, resp.body); resp.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(fieldError(doc, "ownerId"), "not a known sales user") || doc.Find("#owner-add-id").AttrOr("value", "") != "1099" {
		t.Errorf("unknown owner: %d %q", resp.StatusCode, fieldError(doc, "ownerId"))
	}

	// Change 1002 to 1003.
	resp = p.postForm(t, user, path+"/owners/change", url.Values{"currentOwnerId": {"1002"}, "newOwnerId": {"1003"}}, true)
	region = parseHTML(t, resp.body)
	if resp.StatusCode != http.StatusOK || strings.Join(ownerIDs(region), ",") != "1003" {
		t.Fatalf("change owner: %d owners %v", resp.StatusCode, ownerIDs(region))
	}
	changes := awaitSimCalls(t, p.sim, http.MethodPut, "/v2/customer/"+id+"/owner/change", 1)
	if len(changes) != 1 || changes[0].Body != `{"currentOwnerId":1002,"newOwnerId":1003}` {
		t.Errorf("owner change calls: %+v", changes)
	}
	if region.Find(`[data-testid="owner-change-form"]`).AttrOr("data-confirm-url", "") == "" {
		t.Error("changing an owner asks no confirmation")
	}

	// Replace all.
	resp = p.postForm(t, user, path+"/owners", url.Values{"ownerIds": {"1004, 1005"}}, true)
	region = parseHTML(t, resp.body)
	if resp.StatusCode != http.StatusOK || strings.Join(ownerIDs(region), ",") != "1004,1005" {
		t.Fatalf("replace owners: %d owners %v", resp.StatusCode, ownerIDs(region))
	}
	replaces := awaitSimCalls(t, p.sim, http.MethodPut, "/v2/customer/"+id+"/owners", 1)
	if len(replaces) != 1 || replaces[0].Body != `{"ownerIds":[1004,1005]}` {
		t.Errorf("replace calls: %+v", replaces)
	}
	// A list with an id twice never leaves the portal.
	resp = p.postForm(t, user, path+"/owners", url.Values{"ownerIds": {"1004 1004"}}, true)
	if doc := parseHTML(t, resp.body); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(fieldError(doc, "ownerIds"), "listed twice") {
		t.Errorf("duplicate owner ids: %d %q", resp.StatusCode, fieldError(doc, "ownerIds"))
	}
	if n := len(simCalls(p.sim, http.MethodPut, "/v2/customer/"+id+"/owners")); n != 1 {
		t.Errorf("%d replace calls, want still 1", n)
	}
	// Without JavaScript: an error comes back as a small page with the form; success redirects.
	resp = p.postForm(t, user, path+"/owners/add", url.Values{"ownerId": {"x"}}, false)
	if doc := parseHTML(t, resp.body); resp.StatusCode != http.StatusUnprocessableEntity ||
		doc.Find(`[data-testid="page-title"]`).Text() != "Add an owner" || fieldError(doc, "ownerId") == "" {
		t.Errorf("plain add with a bad id: %d", resp.StatusCode)
	}
	resp = p.postForm(t, user, path+"/owners/add", url.Values{"ownerId": {"1006"}}, false)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != path+"#customer-owners" {
		t.Errorf("plain add: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// Profiles: create (validated first) and delete, each updating the profiles region.
func TestCustomerProfiles(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	user := p.login(t, "sales", "sales-demo")
	created := p.postForm(t, user, "/customers", validCustomerForm(uniqueName("Profiles"), uniqueTaxID()), false)
	path := created.Header.Get("Location")
	id := strings.TrimPrefix(path, "/customers/")

	resp := p.postForm(t, user, path+"/profiles", url.Values{"profileType": {""}, "email": {"nope"}, "contactName": {"Ada"}}, true)
	doc := parseHTML(t, resp.body)
	if resp.StatusCode != http.StatusUnprocessableEntity || fieldError(doc, "profileType") == "" || fieldError(doc, "email") == "" {
		t.Errorf("invalid profile: %d", resp.StatusCode)
	}
	if doc.Find(`#profile-contact`).AttrOr("value", "") != "Ada" {
		t.Error("the contact name was not kept")
	}
	if n := len(simCalls(p.sim, http.MethodPost, "/v2/customer/customerprofile")); n != 0 {
		t.Errorf("an invalid profile was sent (%d)", n)
	}

	resp = p.postForm(t, user, path+"/profiles", url.Values{"profileType": {"BILLING"}, "contactName": {"Ada Lovelace"},
		"email": {"ada@example.com"}, "phone": {"+39 02 555 1234"}}, true)
	region := parseHTML(t, resp.body)
	rows := region.Find(`[data-testid="profile-row"]`)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("HX-Retarget") != "#customer-profiles" || rows.Length() != 1 ||
		rows.Find(`[data-testid="profile-contact"]`).Text() != "Ada Lovelace" {
		t.Fatalf("create profile: %d %q, %d rows", resp.StatusCode, resp.Header.Get("HX-Retarget"), rows.Length())
	}
	if !strings.Contains(resp.Header.Get("HX-Trigger"), "BILLING profile added") {
		t.Errorf("no toast: %q", resp.Header.Get("HX-Trigger"))
	}
	posts := awaitSimCalls(t, p.sim, http.MethodPost, "/v2/customer/customerprofile", 1)
	if len(posts) != 1 || !strings.Contains(posts[0].Body, `"customerId":`+id) {
		t.Errorf("profile create calls: %+v", posts)
	}
	del := rows.Find(`form`)
	confirm := p.get(t, user, del.AttrOr("data-confirm-url", "?"), htmx)
	if confirm.StatusCode != http.StatusOK || !strings.Contains(confirm.body, "Delete the Billing profile of Ada Lovelace") {
		t.Errorf("deleting a profile asks no (specific) confirmation: %d %s", confirm.StatusCode, confirm.body)
	}
	resp = p.postForm(t, user, del.AttrOr("action", ""), url.Values{}, true)
	region = parseHTML(t, resp.body)
	if resp.StatusCode != http.StatusOK || region.Find(`[data-testid="profile-row"]`).Length() != 0 || region.Find(`[data-testid="profiles-empty"]`).Length() != 1 {
		t.Fatalf("delete profile: %d %s", resp.StatusCode, resp.body)
	}
	dels := awaitSimCalls(t, p.sim, http.MethodDelete, "/v2/customer/customerprofile", 1)
	if len(dels) != 1 || !strings.Contains(dels[0].RequestURI, "customerId="+id) || !strings.Contains(dels[0].RequestURI, "profileId=") {
		t.Errorf("profile delete calls: %+v", dels)
	}
	// Deleting it again: the service's 404, as a toast.
	resp = p.postForm(t, user, del.AttrOr("action", ""), url.Values{}, true)
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("HX-Retarget") != "#toasts" {
		t.Errorf("delete twice: %d %q", resp.StatusCode, resp.Header.Get("HX-Retarget"))
	}
}

func TestOtherFields(t *testing.T) {
	t.Parallel()
	raw := json.RawMessage(`{"id":1,"zeta":{"a":[1,2]},"name":"x","address":{"city":"Roma","region":"Lazio"},"alpha":null}`)
	got, err := otherFields(raw, knownCustomerFields, map[string][]string{"address": knownAddressFields})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"zeta":{"a":[1,2]},"address":{"region":"Lazio"},"alpha":null}` {
		t.Errorf("other fields %s", got)
	}
	none, err := otherFields(json.RawMessage(`{"id":1,"address":{"city":"Roma"}}`), knownCustomerFields, map[string][]string{"address": knownAddressFields})
	if err != nil || none != nil {
		t.Errorf("no other fields: %s %v", none, err)
	}
	if _, err := otherFields(json.RawMessage(`{"id":`), knownCustomerFields, nil); err == nil {
		t.Error("malformed JSON accepted")
	}
}

func TestParseOwnerIDList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []int64
		msg  string
	}{
		{"1001", []int64{1001}, ""},
		{" 1001, 1002;1003\n1004 ", []int64{1001, 1002, 1003, 1004}, ""},
		{"", nil, "at least one"},
		{"1,2,3,4,5,6,7,8,9,10,11", nil, "at most 10"},
		{"1001 1001", nil, "listed twice"},
		{"1001 -5", nil, "not an owner id"},
		{"1001 0", nil, "not an owner id"},
	} {
		got, problem := parseOwnerIDList(tc.in)
		msg := problem.In(testTranslator(t, "en"))
		if (tc.msg == "") != (msg == "") || !strings.Contains(msg, tc.msg) || len(got) != len(tc.want) {
			t.Errorf("parseOwnerIDList(%q) = %v, %q", tc.in, got, msg)
		}
	}
}
