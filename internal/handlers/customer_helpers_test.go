package handlers

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/v2sim"
)

// Helpers of the customer handler tests.

// postForm sends a form the way the browser does (same-origin); hx makes it an htmx request.
func (p *testPortal) postForm(t testing.TB, client *http.Client, path string, form url.Values, hx bool) response {
	t.Helper()
	headers := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": p.URL}
	if hx {
		headers["HX-Request"] = "true"
	}
	return p.do(t, client, http.MethodPost, path, strings.NewReader(form.Encode()), headers)
}

// simCalls are the simulator's recorded requests with this method whose path starts with prefix.
func simCalls(sim *v2sim.Server, method, prefix string) []v2sim.RecordedRequest {
	var out []v2sim.RecordedRequest
	for _, r := range sim.Requests() {
		if r.Method == method && strings.HasPrefix(r.EscapedPath, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// awaitSimCalls waits until the simulator has recorded at least want calls with this method
// whose path starts with prefix, and returns them. The simulator records a call after it has sent
// the answer, so the portal (and the test) may move on before the record is there.
func awaitSimCalls(t testing.TB, sim *v2sim.Server, method, prefix string, want int) []v2sim.RecordedRequest {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		calls := simCalls(sim, method, prefix)
		if len(calls) >= want || time.Now().After(deadline) {
			return calls
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// settleAfterLogin waits until the calls of the customer list page that signing in ends on are
// recorded, then empties the request log, so later assertions see only what came after.
func (p *testPortal) settleAfterLogin(t testing.TB) {
	t.Helper()
	awaitSimCalls(t, p.sim, http.MethodGet, "/v2/cpq/list", 1)
	awaitSimCalls(t, p.sim, http.MethodGet, "/v2/customer/", 1)
	p.sim.ResetRequests()
}

// customerSimCalls are all recorded calls of section 4.5 (any method).
func customerSimCalls(sim *v2sim.Server) []v2sim.RecordedRequest {
	var out []v2sim.RecordedRequest
	for _, r := range sim.Requests() {
		if strings.HasPrefix(r.EscapedPath, "/v2/customer") {
			out = append(out, r)
		}
	}
	return out
}

// uniqueTaxID is a valid tax id (A8) nobody else uses.
func uniqueTaxID() string {
	return fmt.Sprintf("IT%011d", rand.Int64N(1e11))
}

// uniqueName is a customer name with a random suffix.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s %06d S.r.l.", prefix, rand.IntN(1e6))
}

// summaryValues reads the detail page's summary (key/value list) into a map.
func summaryValues(doc *goquery.Document) map[string]string {
	out := map[string]string{}
	doc.Find(`[data-testid="customer-summary"] dl.kv dt`).Each(func(_ int, dt *goquery.Selection) {
		out[strings.TrimSpace(dt.Text())] = strings.TrimSpace(dt.Next().Text())
	})
	return out
}

// fieldError is the error message shown next to the field with that data-testid name, or "".
func fieldError(doc *goquery.Document, name string) string {
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(
		doc.Find(`[data-testid="field-`+name+`"] [data-testid="field-error"]`).Text()), "Error:"))
}

// validCustomerForm is a create form that passes every rule.
func validCustomerForm(name, taxID string) url.Values {
	return url.Values{
		"name": {name}, "taxId": {taxID}, "segment": {"BUSINESS"}, "email": {"info@example.com"},
		"phone": {"+39 02 1234567"}, "street": {"Via Roma 1"}, "postalCode": {"20121"}, "city": {"Milano"},
		"country": {"it"}, "cpqShown": {"1"}, "cpqIds": {"1"},
	}
}

// customerFormValues are the values the customer form would send as shown (what a browser
// posts when the user changes nothing).
func customerFormValues(doc *goquery.Document) url.Values {
	form := url.Values{}
	doc.Find(`[data-testid="customer-form"] input, [data-testid="customer-form"] textarea, [data-testid="customer-form"] select`).Each(func(_ int, s *goquery.Selection) {
		name := s.AttrOr("name", "")
		switch {
		case name == "":
		case goquery.NodeName(s) == "textarea":
			form.Add(name, s.Text())
		case goquery.NodeName(s) == "select":
			form.Add(name, s.Find("option[selected]").AttrOr("value", ""))
		case s.AttrOr("type", "") == "checkbox":
			if _, checked := s.Attr("checked"); checked {
				form.Add(name, s.AttrOr("value", ""))
			}
		default:
			form.Add(name, s.AttrOr("value", ""))
		}
	})
	return form
}

// rowIDs are the customer ids of the table rows, in order.
func rowIDs(doc *goquery.Document) []string {
	var ids []string
	doc.Find(`[data-testid="customer-row"]`).Each(func(_ int, s *goquery.Selection) {
		ids = append(ids, s.AttrOr("data-customer-id", ""))
	})
	return ids
}
