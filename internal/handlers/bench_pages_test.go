package handlers

import (
	"strconv"
	"strings"
	"testing"
)

// Benchmarks of the main pages, one request per iteration, warm (the user's customer list already
// cached, connections to the v2 API open). Budgets: bench/alloc_budgets.json.

// BenchmarkCustomerListPage is the first page of the customer list (full page) over 100,000 customers.
func BenchmarkCustomerListPage(b *testing.B) {
	p := newBenchPortal(b)
	warmCustomerList(b, p)
	if rec := p.get(b, "/customers", map[string]string{"Accept-Encoding": ""}); strings.Contains(rec.Body.String(), `data-testid="customer-list-loading"`) {
		b.Fatal("the customer list page still shows the loading region after warming the list")
	}
	b.ReportAllocs()
	for b.Loop() {
		p.get(b, "/customers", nil)
	}
}

// BenchmarkCustomerSearchPartial is one search keystroke: the htmx results region for q=.
func BenchmarkCustomerSearchPartial(b *testing.B) {
	p := newBenchPortal(b)
	htmxHeader := map[string]string{"HX-Request": "true"}
	warmCustomerList(b, p)
	rec := p.get(b, "/customers?q=rossi", htmxHeader)
	if !strings.Contains(rec.Header().Get("Content-Type"), "text/html") {
		b.Fatalf("search partial: Content-Type %q", rec.Header().Get("Content-Type"))
	}
	b.ReportAllocs()
	for b.Loop() {
		p.get(b, "/customers?q=rossi", htmxHeader)
	}
}

// BenchmarkCustomerDetailPage is a customer's page (one customer document from the v2 API).
func BenchmarkCustomerDetailPage(b *testing.B) {
	p := newBenchPortal(b)
	p.get(b, "/customers/1", nil)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p.get(b, "/customers/"+strconv.Itoa(1+i%100), nil)
		i++
	}
}

// BenchmarkQuotePage is a quote's page (two carts with add-ons and a discount).
func BenchmarkQuotePage(b *testing.B) {
	p := newBenchPortal(b)
	path := benchQuoteFixture(b, p)
	p.get(b, path, nil)
	b.ReportAllocs()
	for b.Loop() {
		p.get(b, path, nil)
	}
}

// warmCustomerList loads the user's customer list into the portal's cache: the results region (an
// htmx request) waits for the whole list, where the full page would give up after a moment and show
// a loading region.
func warmCustomerList(b *testing.B, p *benchPortal) {
	b.Helper()
	p.get(b, "/customers", map[string]string{"HX-Request": "true"})
}
