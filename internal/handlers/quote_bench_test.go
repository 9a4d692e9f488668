package handlers

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/config"
	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/internal/v2sim"
	"github.com/cpqportal/portal/web"
)

// Benchmarks of the quote actions: server time per action against the in-process simulator
// (the target is < 100 ms; `make bench`). The portal is driven in process (no network between
// the benchmark and the portal); the simulator is behind a loopback HTTP server like the real
// v2 API. The user's session cookie is made directly with the cookie store (the sign-in flow
// is not what is measured), holding a configuration session for the quote.

type quoteBench struct {
	engine   http.Handler
	cookies  []*http.Cookie
	quoteURL string
	basketID int64
	digest   string
}

func newQuoteBench(b *testing.B) *quoteBench {
	b.Helper()
	sim := v2sim.New(v2sim.Options{Customers: 5, Seed: 1})
	simServer := httptest.NewServer(sim)
	b.Cleanup(func() { simServer.Close(); _ = sim.Close() })
	api, err := apiclient.New(simServer.URL)
	if err != nil {
		b.Fatal(err)
	}

	// A quote with two carts and a few add-ons, through the client.
	ctx := apiclient.WithToken(context.Background(), "bench-token")
	started, err := api.CPQ.Init(ctx, 1, 1)
	if err != nil {
		b.Fatal(err)
	}
	q, err := api.CPQ.AddCart(ctx, started.SessionID, 1, 11, apiclient.AddCartRequest{ProductID: 102, TOFProductID: 1102, CustomerID: 1, Label: "Bench"})
	if err != nil {
		b.Fatal(err)
	}
	root := q.Carts[0].Root.NodeID
	for _, addon := range []struct{ product, tofProduct int32 }{{104, 1104}, {105, 1105}, {106, 1106}} {
		if q, err = api.CPQ.AddItem(ctx, started.SessionID, 1, q.QuoteID, q.Carts[0].BasketID, root,
			apiclient.AddItemRequest{OfferTypeID: 11, ProductID: addon.product, OfferTypeProductID: addon.tofProduct}); err != nil {
			b.Fatal(err)
		}
	}
	if q, err = api.CPQ.AddCartToQuote(ctx, started.SessionID, 1, 12, q.QuoteID); err != nil {
		b.Fatal(err)
	}

	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := session.NewCookieStore(session.Options{Keys: []string{testSessionKey}})
	if err != nil {
		b.Fatal(err)
	}
	public, _ := url.Parse("http://portal.test")
	v2, _ := url.Parse(simServer.URL)
	// The provider is never asked: the access token below is valid for an hour.
	authn := auth.New(auth.Config{IssuerURL: "http://127.0.0.1:1/idp", ClientID: config.DemoClientID, PublicURL: public}, store, logger)
	b.Cleanup(authn.Close)
	assets, err := web.NewAssets()
	if err != nil {
		b.Fatal(err)
	}
	h, err := New(Deps{Config: config.Config{PublicURL: public, V2APIURL: v2, UploadLimit: 10 << 20}, Logger: logger, API: api, Auth: authn, Assets: assets})
	if err != nil {
		b.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	h.Routes(engine)

	now := time.Now()
	s := &session.Session{Subject: "bench", Name: "Bench", AccessToken: "bench-token", TokenExpiry: now.Add(time.Hour),
		CreatedAt: now, LastSeen: now}
	s.SetCPQSession(session.CPQKey{CPQID: 1, CustomerID: 1, QuoteID: q.QuoteID}, started.SessionID, now)
	rec := httptest.NewRecorder()
	if err := session.Save(store, rec, httptest.NewRequest(http.MethodGet, "/", nil), s); err != nil {
		b.Fatal(err)
	}
	return &quoteBench{
		engine: engine, cookies: rec.Result().Cookies(), quoteURL: "/quotes/1/1/" + strconv.FormatInt(q.QuoteID, 10),
		basketID: q.Carts[0].BasketID, digest: digestOf(q),
	}
}

// do runs one request in process and fails on a status other than 200.
func (qb *quoteBench) do(b *testing.B, method, path string, form url.Values) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("HX-Request", "true")
	for _, c := range qb.cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	qb.engine.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("%s %s: %d %.500s", method, path, rec.Code, rec.Body.String())
	}
}

// BenchmarkQuoteSetQuantity is a quantity change (call 8): the cart and the summary re-rendered.
// The quote page itself is measured by BenchmarkQuotePage (bench_pages_test.go).
func BenchmarkQuoteSetQuantity(b *testing.B) {
	qb := newQuoteBench(b)
	b.ReportAllocs()
	path := qb.quoteURL + "/carts/" + strconv.FormatInt(qb.basketID, 10) + "/quantity"
	i := 0
	for b.Loop() {
		i++
		qb.do(b, http.MethodPost, path, url.Values{"quantity": {strconv.Itoa(1 + i%5)}, "prev": {qb.digest}})
	}
}

// BenchmarkQuoteApplyDiscounts applies two discounts and an extra value (call 12): every cart re-rendered.
func BenchmarkQuoteApplyDiscounts(b *testing.B) {
	qb := newQuoteBench(b)
	for b.Loop() {
		qb.do(b, http.MethodPost, qb.quoteURL+"/discounts", url.Values{
			"discountId": {"1", "3"}, "extra-9": {"5"}, "extraMax-9": {"20"}, "prev": {qb.digest}})
	}
}

// BenchmarkQuoteAddons opens the add-on choice of the main product (calls 10 and 9).
func BenchmarkQuoteAddons(b *testing.B) {
	qb := newQuoteBench(b)
	page := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, qb.quoteURL, nil)
	for _, c := range qb.cookies {
		req.AddCookie(c)
	}
	qb.engine.ServeHTTP(page, req)
	doc := strings.Split(page.Body.String(), `hx-get="`+qb.quoteURL+`/carts/`)
	if len(doc) < 2 {
		b.Fatal("no add-on button on the quote page")
	}
	path := qb.quoteURL + "/carts/" + doc[1][:strings.IndexByte(doc[1], '"')]
	for b.Loop() {
		qb.do(b, http.MethodGet, path, nil)
	}
}
