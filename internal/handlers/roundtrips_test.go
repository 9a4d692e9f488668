package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/v2sim"
)

// Round trips to the v2 API (issue 27): with the simulator answering every call after a set delay,
// the calls a click makes one after the other are what a person waits for. These tests count the
// calls and the sequential round trips of each step (answers less than half the delay apart ran side
// by side) and check that what the steps save never skips a call the spec requires. The latency lab
// (bench/cmd/portalbench/latency.go) measures the same journeys on the built binary.

const roundTripDelay = 40 * time.Millisecond

// newSlowPortal is a portal whose simulator answers every call after roundTripDelay, with the
// per-user caches on as in production (PORTAL_CUSTOMER_CACHE_TTL's default).
func newSlowPortal(t *testing.T) (*testPortal, *v2sim.Server) {
	t.Helper()
	sim := v2sim.New(v2sim.Options{Customers: 5, Seed: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); _ = sim.Close() })
	sim.SetFault("*", v2sim.Fault{Delay: roundTripDelay})
	return newPortal(t, portalOptions{v2URL: srv.URL, customerCacheTTL: 30 * time.Second}), sim
}

// roundTripsOf counts the sequential round trips of reqs (recorded when answered).
func roundTripsOf(reqs []v2sim.RecordedRequest) int {
	times := make([]time.Time, 0, len(reqs))
	for _, r := range reqs {
		times = append(times, r.Time)
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	rounds := 0
	var start time.Time
	for _, at := range times {
		if rounds == 0 || at.Sub(start) > roundTripDelay/2 {
			rounds++
			start = at
		}
	}
	return rounds
}

// step runs one click and checks its round trips and calls; it returns the calls' endpoints.
func (u *quoteUser) step(what string, maxRounds int, do func()) []string {
	u.t.Helper()
	mark := u.mark()
	do()
	reqs := u.requests(mark)
	for _, r := range reqs {
		if r.Status >= 400 {
			u.t.Errorf("%s: %s answered %d", what, r.Endpoint, r.Status)
		}
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			u.t.Errorf("%s: %s went without the user's token", what, r.Endpoint)
		}
	}
	if got := roundTripsOf(reqs); got > maxRounds {
		u.t.Errorf("%s: %d sequential round trips (%v), want at most %d", what, got, quoteEndpoints(reqs), maxRounds)
	}
	return quoteEndpoints(reqs)
}

func TestStartToQuoteRoundTrips(t *testing.T) {
	t.Parallel()
	p, sim := newSlowPortal(t)
	u := newQuoteUser(t, p, sim)

	total := 0
	rounds := func(mark int) int { r := roundTripsOf(u.requests(mark)); total += r; return r }

	// The start page, cold: call 1, then the first configurator's customers.
	mark := u.mark()
	u.step("start page", 2, func() { quoteMust(t, "start page", u.get("/quotes", false), http.StatusOK) })
	rounds(mark)

	// Start the session: call 2 with the labels' reads beside it; the configurator list is the
	// one the start page read (per-user cache).
	mark = u.mark()
	doc := quoteMust(t, "start", u.post("/quotes/new", url.Values{"cpqId": {"1"}, "customerId": {"1"}}), http.StatusOK)
	if r := rounds(mark); r != 1 {
		t.Errorf("start the session: %d round trips (%v), want 1", r, quoteEndpoints(u.requests(mark)))
	}
	if eps := quoteEndpoints(u.requests(mark)); !slices.Contains(eps, "cpq.init") || slices.Contains(eps, "cpq.list") {
		t.Errorf("start the session called %v: want call 2 and no second call 1", eps)
	}
	tofID := doc.Find("[data-testid=quote-tof]").First().AttrOr("data-tof-id", "")
	if tofID == "" {
		t.Fatal("the session step offers no offer type")
	}

	base := "/quotes/new/1/1/tofs/" + tofID
	mark = u.mark()
	doc = quoteMust(t, "products", u.get(base+"/products", true), http.StatusOK)
	rounds(mark)
	productID := doc.Find("[data-testid=quote-product-option]").First().AttrOr("value", "")
	form := url.Values{"productId": {productID}, "label": {"Round trips"}}
	doc.Find("input[name=tofProduct]").Each(func(_ int, s *goquery.Selection) { form.Add("tofProduct", s.AttrOr("value", "")) })
	if len(form["tofProduct"]) == 0 {
		t.Fatal("the products step carries no TOF product ids")
	}

	// Create: call 3 alone (the TOF product id came with the form), with X-SessionId (R4).
	mark = u.mark()
	resp := u.post(base, form)
	quoteMust(t, "create", resp, http.StatusOK)
	if r := rounds(mark); r != 1 {
		t.Errorf("create: %d round trips, want 1", r)
	}
	created := u.requests(mark)
	if eps := quoteEndpoints(created); !slices.Equal(eps, []string{"cpq.addcart"}) {
		t.Errorf("create called %v, want only call 3", eps)
	}
	if len(created) == 1 && created[0].Header.Get("X-SessionId") == "" {
		t.Error("call 3 went without X-SessionId (R4)")
	}

	// The quote page with its documents region: one read of call 10, names beside it.
	quoteURL := resp.Header.Get("HX-Redirect")
	mark = u.mark()
	pageDoc := quoteMust(t, "quote page", u.get(quoteURL, false), http.StatusOK)
	if r := rounds(mark); r != 1 {
		t.Errorf("quote page: %d round trips, want 1", r)
	}
	if n := strings.Count(strings.Join(quoteEndpoints(u.requests(mark)), ","), "cpq.toflist"); n != 1 {
		t.Errorf("quote page read call 10 %d times, want once", n)
	}
	if pageDoc.Find("#quote-documents[hx-get]").Length() != 0 || pageDoc.Find("#quote-documents [data-testid]").Length() == 0 {
		t.Error("the documents region is not rendered with the page (it would read call 10 again)")
	}
	if total > 7 {
		t.Errorf("start page to quote on screen: %d round trips, want at most 7", total)
	}
}
