package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/v2sim"
)

// Helpers of the quote area's handler tests: a signed-in user driving the portal like the browser
// does (htmx requests with the page's fingerprint), against the in-process simulator.

// quoteUser is a signed-in user of a test portal.
type quoteUser struct {
	t   *testing.T
	p   *testPortal
	sim *v2sim.Server
	c   *http.Client
}

func newQuoteUser(t *testing.T, p *testPortal, sim *v2sim.Server) *quoteUser {
	t.Helper()
	return &quoteUser{t: t, p: p, sim: sim, c: p.login(t, "sales", "sales-demo")}
}

// headers are what the browser sends with an htmx request from a portal page.
func (u *quoteUser) headers(hx bool, form bool) map[string]string {
	h := map[string]string{"Origin": u.p.URL}
	if hx {
		h["HX-Request"] = "true"
	}
	if form {
		h["Content-Type"] = "application/x-www-form-urlencoded"
	}
	return h
}

func (u *quoteUser) get(path string, hx bool) response {
	u.t.Helper()
	return u.p.do(u.t, u.c, http.MethodGet, path, nil, u.headers(hx, false))
}

func (u *quoteUser) post(path string, form url.Values) response {
	u.t.Helper()
	return u.p.do(u.t, u.c, http.MethodPost, path, strings.NewReader(form.Encode()), u.headers(true, true))
}

// del sends an htmx DELETE: htmx puts the values in the query string.
func (u *quoteUser) del(path string, form url.Values) response {
	u.t.Helper()
	if len(form) > 0 {
		path += "?" + form.Encode()
	}
	return u.p.do(u.t, u.c, http.MethodDelete, path, nil, u.headers(true, false))
}

// must fails the test unless the response has the status.
func quoteMust(t *testing.T, what string, resp response, status int) *goquery.Document {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("%s: status %d, want %d; body: %.2000s", what, resp.StatusCode, status, resp.body)
	}
	return parseHTML(t, resp.body)
}

var quoteURLPattern = regexp.MustCompile(`^/quotes/(\d+)/(\d+)/(\d+)$`)

// createQuote goes through the start flow (session, products of the TOF, create) and returns the
// quote's address.
func (u *quoteUser) createQuote(cpqID, customerID, tofID, productID int, label string) string {
	u.t.Helper()
	ids := url.Values{"cpqId": {strconv.Itoa(cpqID)}, "customerId": {strconv.Itoa(customerID)}}
	quoteMust(u.t, "start the session", u.post("/quotes/new", ids), http.StatusOK)
	base := "/quotes/new/" + strconv.Itoa(cpqID) + "/" + strconv.Itoa(customerID) + "/tofs/" + strconv.Itoa(tofID)
	quoteMust(u.t, "products of the TOF", u.get(base+"/products", true), http.StatusOK)
	resp := u.post(base, url.Values{"productId": {strconv.Itoa(productID)}, "label": {label}})
	quoteMust(u.t, "create the quote", resp, http.StatusOK)
	loc := resp.Header.Get("HX-Redirect")
	if !quoteURLPattern.MatchString(loc) {
		u.t.Fatalf("create the quote: HX-Redirect %q is not a quote address", loc)
	}
	return loc
}

// page loads the quote page and returns it with its fingerprint.
func (u *quoteUser) page(quoteURL string) (*goquery.Document, string) {
	u.t.Helper()
	doc := quoteMust(u.t, "quote page", u.get(quoteURL, false), http.StatusOK)
	return doc, doc.Find("#quote-digest").AttrOr("value", "")
}

// requests returns what the simulator received since the mark (an index into sim.Requests()).
func (u *quoteUser) requests(mark int) []v2sim.RecordedRequest {
	all := u.sim.Requests()
	if mark > len(all) {
		return nil
	}
	return all[mark:]
}

func (u *quoteUser) mark() int { return len(u.sim.Requests()) }

// endpoints lists the endpoint names of requests.
func quoteEndpoints(reqs []v2sim.RecordedRequest) []string {
	out := make([]string, 0, len(reqs))
	for _, r := range reqs {
		out = append(out, r.Endpoint)
	}
	return out
}

// text is the whitespace-normalised text of the selection.
func quoteText(s *goquery.Selection) string {
	return strings.Join(strings.Fields(s.Text()), " ")
}

// eur formats cents as the page does (€1,234.56), for expected values derived in the tests.
func quoteEUR(cents int64) string {
	s := strconv.FormatInt(cents/100, 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	frac := strconv.FormatInt(cents%100+100, 10)[1:]
	return "€" + b.String() + "." + frac
}

// quoteClock is a settable clock for the simulator (to expire configuration sessions).
type quoteClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *quoteClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *quoteClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// newQuotePortal starts a portal with its own simulator, which accepts any token and runs on
// clock (nil: the real clock).
func newQuotePortal(t *testing.T, clock *quoteClock) (*testPortal, *v2sim.Server) {
	t.Helper()
	opts := v2sim.Options{Customers: 5, Seed: 1}
	if clock != nil {
		opts.Now = clock.Now
	}
	sim := v2sim.New(opts)
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); _ = sim.Close() })
	return newPortal(t, portalOptions{v2URL: srv.URL}), sim
}
