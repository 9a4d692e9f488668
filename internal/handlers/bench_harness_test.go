package handlers

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/config"
	"github.com/cpqportal/portal/internal/demoidp"
	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/web"
)

// The Benchmark* functions of bench_*_test.go measure what one request of a main page costs the
// portal: time and, above all, allocations (bench/alloc_budgets.json holds the budgets that
// `make bench` checks). They are benchmarks, never run by `make test`:
//
//	go test -run '^$' -bench . -benchmem ./internal/handlers/
//	go test -run '^$' -bench CustomerDetail -cpuprofile cpu.out ./internal/handlers/ && go tool pprof -top cpu.out
//
// The v2 API is the simulator as its own process (cmd/v2sim, built on first use, or the binary named
// by PORTALBENCH_V2SIM), so that its allocations are not counted as the portal's. Requests go straight
// to the gin engine (no server socket), so what is counted is the portal's middleware, session,
// handler, v2 client and rendering.

// benchSessionKey is the benchmarks' session secret (32 bytes, base64).
const benchSessionKey = "YmVuY2gtc2Vzc2lvbi1rZXktYmVuY2gtc2Vzc2lvbi0="

// benchSimCustomers is the simulator's size in the benchmarks: the 100,000 customers.
const benchSimCustomers = 100_000

// benchPortal is an in-process portal signed in as the sales user, in front of a simulator process.
type benchPortal struct {
	h      *Handler
	engine *gin.Engine
	simURL string
	cookie string // the session cookie(s), as a browser sends them
	token  string // the session's access token (to prepare data on the simulator)
}

func newBenchPortal(b *testing.B) *benchPortal {
	b.Helper()
	simURL := startBenchSimulator(b)
	logger := slog.New(NewLogHandler(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo})))

	srv := httptest.NewUnstartedServer(nil)
	public, _ := url.Parse("http://" + srv.Listener.Addr().String())
	issuer := public.String() + "/idp"
	provider, err := demoidp.New(demoidp.Options{
		Issuer: issuer, ClientID: config.DemoClientID, ClientSecret: "bench-secret",
		RedirectURIs:   []string{public.String() + "/auth/callback"},
		AccessTokenTTL: time.Hour,
	})
	if err != nil {
		b.Fatal(err)
	}
	store, err := session.NewCookieStore(session.Options{Keys: []string{benchSessionKey}})
	if err != nil {
		b.Fatal(err)
	}
	authn := auth.New(auth.Config{
		IssuerURL: issuer, ClientID: config.DemoClientID, ClientSecret: "bench-secret",
		PublicURL: public, IdleTimeout: time.Hour, AbsoluteLifetime: 2 * time.Hour,
	}, store, logger)
	b.Cleanup(authn.Close)
	// The v2 client as cmd/portal builds it.
	api, err := apiclient.New(simURL, apiclient.WithHTTPClient(&http.Client{
		Transport:     apiclient.NewTransport(),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}), apiclient.WithTimeout(15*time.Second))
	if err != nil {
		b.Fatal(err)
	}
	assets, err := web.NewAssets()
	if err != nil {
		b.Fatal(err)
	}
	v2, _ := url.Parse(simURL)
	cfg := config.Config{
		Addr: srv.Listener.Addr().String(), PublicURL: public, V2APIURL: v2, V2Timeout: 15 * time.Second,
		OIDCIssuer: issuer, OIDCClientID: config.DemoClientID, UploadLimit: 1 << 30,
		CustomerCacheTTL: 30 * time.Second, // the default of PORTAL_CUSTOMER_CACHE_TTL
	}
	idp := gin.WrapH(http.StripPrefix("/idp", provider.Handler()))
	h, err := New(Deps{
		Config: cfg, Logger: logger, API: api, Auth: authn, Assets: assets,
		ExtraRoutes: func(r *gin.Engine) { r.Any("/idp/*path", idp) },
	})
	if err != nil {
		b.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	if err := engine.SetTrustedProxies(nil); err != nil {
		b.Fatal(err)
	}
	h.Routes(engine)
	srv.Config.Handler = engine
	srv.Start()
	b.Cleanup(srv.Close)

	p := &benchPortal{h: h, engine: engine, simURL: simURL}
	for deadline := time.Now().Add(30 * time.Second); !authn.Ready(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("OpenID discovery did not complete")
		}
	}
	p.cookie = benchSignIn(b, srv.URL, "sales", "sales-demo")
	probe, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
	probe.Header.Set("Cookie", p.cookie)
	s, err := session.Load(store, probe)
	if err != nil {
		b.Fatal(err)
	}
	p.token = s.AccessToken
	return p
}

// get serves one GET through the engine like a browser (session cookie, gzip accepted) and fails the
// benchmark on any status but 200.
func (p *benchPortal) get(b *testing.B, target string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("Cookie", p.cookie)
	req.Header.Set("Accept-Encoding", "gzip")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	p.engine.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("GET %s: %d: %.300s", target, rec.Code, rec.Body.String())
	}
	return rec
}

// benchSignIn signs in through the real flow (portal → provider's form → callback) with a cookie jar
// and returns the portal's cookies as a Cookie header.
func benchSignIn(b *testing.B, portalURL, username, password string) string {
	b.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := browser.Get(portalURL + "/auth/login?return_to=%2Fcontracts")
	if err != nil {
		b.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	form := doc.Find("form")
	values := url.Values{"username": {username}, "password": {password}}
	form.Find(`input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
		values.Set(s.AttrOr("name", ""), s.AttrOr("value", ""))
	})
	action, err := resp.Request.URL.Parse(form.AttrOr("action", ""))
	if err != nil {
		b.Fatal(err)
	}
	resp, err = browser.PostForm(action.String(), values)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/contracts" {
		b.Fatalf("sign-in ended at %s with %s", resp.Request.URL, resp.Status)
	}
	u, _ := url.Parse(portalURL)
	var parts []string
	for _, c := range jar.Cookies(u) {
		parts = append(parts, c.Name+"="+c.Value)
	}
	return strings.Join(parts, "; ")
}

var simReadyLine = regexp.MustCompile(`serving the v2 API on (http://[^/\s]+)`)

// startBenchSimulator runs cmd/v2sim as a process with benchSimCustomers customers and returns its URL.
func startBenchSimulator(b *testing.B) string {
	b.Helper()
	bin := os.Getenv("PORTALBENCH_V2SIM")
	if bin == "" {
		bin = filepath.Join(b.TempDir(), "v2sim")
		build := exec.Command("go", "build", "-o", bin, "./cmd/v2sim")
		build.Dir = filepath.Join("..", "..")
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("go build ./cmd/v2sim: %v\n%s", err, out)
		}
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-seed", "1", "-customers", strconv.Itoa(benchSimCustomers))
	cmd.Stderr = io.Discard
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := simReadyLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(60 * time.Second):
		b.Fatal("the simulator did not start within 60 s")
		return ""
	}
}

// benchQuoteFixture creates a quote like one a sales person works on (two carts with an add-on each,
// a discount) on the simulator with the user's token, and returns its page path.
func benchQuoteFixture(b *testing.B, p *benchPortal) string {
	b.Helper()
	api, err := apiclient.New(p.simURL)
	if err != nil {
		b.Fatal(err)
	}
	ctx := apiclient.WithToken(context.Background(), p.token)
	const cpqID, customerID = 1, 1
	init, err := api.CPQ.Init(ctx, cpqID, customerID)
	if err != nil {
		b.Fatal(err)
	}
	var quote *apiclient.Quote
	for _, tof := range init.TOFList[:min(2, len(init.TOFList))] {
		products, err := api.CPQ.ValidProducts(ctx, init.SessionID, cpqID, tof.ID)
		if err != nil {
			b.Fatal(err)
		}
		var mainProduct *apiclient.Product
		for i := range products {
			if products[i].Kind == "MAIN" && (mainProduct == nil || products[i].Default) {
				mainProduct = &products[i]
			}
		}
		if quote == nil {
			quote, err = api.CPQ.AddCart(ctx, init.SessionID, cpqID, tof.ID, apiclient.AddCartRequest{
				ProductID: mainProduct.ProductID, TOFProductID: mainProduct.TOFProductID, CustomerID: customerID, Label: "Bench"})
		} else {
			quote, err = api.CPQ.AddCartToQuote(ctx, init.SessionID, cpqID, tof.ID, quote.QuoteID)
		}
		if err != nil {
			b.Fatal(err)
		}
		cart := quote.Carts[len(quote.Carts)-1]
		for _, pr := range products {
			if pr.Kind == "ADDON" && containsInt32(pr.ParentProductIDs, cart.Root.ProductID) {
				quote, err = api.CPQ.AddItem(ctx, init.SessionID, cpqID, quote.QuoteID, cart.BasketID, cart.Root.NodeID,
					apiclient.AddItemRequest{OfferTypeID: tof.ID, ProductID: pr.ProductID, OfferTypeProductID: pr.TOFProductID})
				if err != nil {
					b.Fatal(err)
				}
				break
			}
		}
	}
	discounts, err := api.CPQ.ApplicableDiscounts(ctx, init.SessionID, cpqID, quote.QuoteID)
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range discounts {
		if !d.Extra {
			if _, err := api.CPQ.ApplyDiscounts(ctx, init.SessionID, cpqID, quote.QuoteID, apiclient.ApplyDiscountsRequest{
				AppliedDiscounts: []int32{d.DiscountID}, ExtraDiscountList: []apiclient.ExtraDiscountInput{}}); err != nil {
				b.Fatal(err)
			}
			break
		}
	}
	return fmt.Sprintf("/quotes/%d/%d/%d", cpqID, customerID, quote.QuoteID)
}

func containsInt32(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
