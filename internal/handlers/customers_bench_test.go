package handlers

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/v2sim"
)

// The customer list at scale: the simulator seeded with 100,000 customers (v2sim.MaxCustomers),
// the whole portal in between (sign-in, middleware, gzip, templates). Targets (docs/customers.md):
// a keystroke's p99 under 100 ms with a warm cache; the first page at most 1.5 times a bare
// decode of the list. Run with
//
//	go test -run '^$' -bench 'SearchKeystroke|FirstPage|DecodeBare' -benchtime 10x ./internal/handlers/

const customerBenchCustomers = v2sim.MaxCustomers

// customerBenchPortal is a portal in front of a 100k simulator that accepts any token (so the bare
// decode can ask it directly), with a signed-in user.
func customerBenchPortal(b *testing.B) (*testPortal, *http.Client, string) {
	b.Helper()
	sim := v2sim.New(v2sim.Options{Customers: customerBenchCustomers, Seed: 1})
	simServer := httptest.NewServer(sim)
	b.Cleanup(func() { simServer.Close(); _ = sim.Close() })
	p := newPortal(b, portalOptions{v2URL: simServer.URL, v2Timeout: 30 * time.Second, customerCacheTTL: time.Hour})
	user := p.login(b, "sales", "sales-demo")
	return p, user, simServer.URL
}

// BenchmarkSearchKeystroke is one keystroke of search-as-you-type on a warm cache: the htmx
// request for the results region, through the whole portal. Reports the p99 latency.
func BenchmarkSearchKeystroke(b *testing.B) {
	p, user, _ := customerBenchPortal(b)
	// Typing "rossi s.r.l." and deleting it again, over and over.
	typed := "rossi s.r.l."
	var queries []string
	for i := 1; i <= len(typed); i++ {
		queries = append(queries, typed[:i])
	}
	for i := len(typed) - 1; i >= 1; i-- {
		queries = append(queries, typed[:i])
	}
	for _, q := range queries { // warm: the list and the name order
		p.get(b, user, "/customers?q="+url.QueryEscape(q), htmx)
	}
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		resp := p.get(b, user, "/customers?sort=name&dir=asc&q="+url.QueryEscape(queries[i%len(queries)]), htmx)
		durations = append(durations, time.Since(start))
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	reportPercentiles(b, durations)
}

// BenchmarkFirstPage is the customer list page with a cold cache until its first rows are there:
// download and decode the 100k list as a stream, build the compact snapshot, sort by name,
// render the first page. When the list takes longer than the page waits, the page comes with a
// region that loads itself: that request is made too, as the browser does, and counted.
func BenchmarkFirstPage(b *testing.B) {
	p, user, _ := customerBenchPortal(b)
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		p.h.customers = NewCustomerCache(p.h.api, p.h.cfg, p.h.now) // cold, as for a user's first visit
		b.StartTimer()
		resp := p.get(b, user, "/customers", nil)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
		doc := parseHTML(b, resp.body)
		if load := doc.Find(`[data-testid="customer-list-loading"]`); load.Length() == 1 {
			resp = p.get(b, user, load.AttrOr("hx-get", ""), htmx)
			doc = parseHTML(b, resp.body)
		}
		if n := len(rowIDs(doc)); n != customerPageSize {
			b.Fatalf("the first page has %d rows", n)
		}
	}
}

// BenchmarkDecodeBare is the reference: GET /v2/customer/ and json-decode it into the client's
// customer documents, nothing else.
func BenchmarkDecodeBare(b *testing.B) {
	_, _, simURL := customerBenchPortal(b)
	client := &http.Client{Transport: http.DefaultTransport}
	for b.Loop() {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, simURL+"/v2/customer/", nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer bench")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var list []apiclient.Customer
		err = json.NewDecoder(resp.Body).Decode(&list)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || len(list) != customerBenchCustomers {
			b.Fatalf("decoded %d customers: %v", len(list), err)
		}
	}
}

// reportPercentiles adds the median and the 99th percentile, in milliseconds.
func reportPercentiles(b *testing.B, durations []time.Duration) {
	b.Helper()
	if len(durations) == 0 {
		return
	}
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	at := func(q float64) float64 {
		return float64(durations[min(len(durations)-1, int(float64(len(durations))*q))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.5), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}
