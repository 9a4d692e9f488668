package handlers

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/config"
	"github.com/cpqportal/portal/internal/customerimport"
	"github.com/cpqportal/portal/internal/demoidp"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/recent"
	"github.com/cpqportal/portal/internal/savedviews"
	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/v2sim"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web"
)

// The reliability and security suites (security_*_test.go, faults_*_test.go, fuzz_*_test.go) share
// this harness. It builds the whole portal like newPortal does (embedded OpenID provider, the real
// authenticator, the v2 simulator as the only double) and adds what those suites need: the list of
// every registered route (gin's engine.Routes(), so routes added later are covered without editing
// the suites), a choice of session store, and a v2 client to seed data with the
// signed-in user's own token.

// secOptions configure newSecPortal.
type secOptions struct {
	database    bool          // the database session store (on PostgreSQL, as replicas share it) instead of the cookie store
	sqlite      bool          // server-side sessions in an SQLite state database instead of the cookie store
	v2URL       string        // talk to this v2 API instead of a fresh simulator (e.g. a closed port)
	v2Timeout   time.Duration // per-call limit of the API client (default 5 s)
	uploadLimit int64         // PORTAL_UPLOAD_LIMIT (default 256 KiB: small, so the bound is cheap to cross)
	idleTimeout time.Duration // session idle timeout (default 30 min)
	// wrapIdP, when set, wraps the embedded provider's handler (to tamper with the sign-in flow).
	wrapIdP func(http.Handler) http.Handler
	// pseudo serves the pseudo-locale (i18n.Pseudo) and records the words of every v2 answer in
	// secPortal.upstream (the pseudo-locale test tells the v2 API's words from untranslated ones).
	pseudo bool
}

// secPortal is a running portal plus what the security suites inspect.
type secPortal struct {
	*testPortal
	engine *gin.Engine
	routes gin.RoutesInfo
	store  session.Store
	// api talks to the same v2 API as the portal; calls carry a token given per call (seeding).
	api *apiclient.Client
	// upstream records the words of the v2 answers the portal received (secOptions.pseudo).
	upstream *secUpstreamWords
}

// secUploadLimit is the harness's PORTAL_UPLOAD_LIMIT.
const secUploadLimit = 256 << 10

func newSecPortal(tb testing.TB, opts secOptions) *secPortal {
	tb.Helper()
	p := &testPortal{logs: &syncBuffer{}}
	sp := &secPortal{testPortal: p}
	logger := slog.New(NewLogHandler(slog.NewJSONHandler(p.logs, &slog.HandlerOptions{Level: slog.LevelDebug})))

	srv := httptest.NewUnstartedServer(nil)
	public, _ := url.Parse("http://" + srv.Listener.Addr().String())
	p.URL = public.String()
	issuer := p.URL + "/idp"

	if opts.v2URL == "" {
		p.sim = v2sim.New(v2sim.Options{IssuerURL: issuer, Customers: 5, Seed: 1})
		// Its own http.Server (not an in-memory handler): the Truncated fault needs a real connection.
		simServer := httptest.NewServer(p.sim)
		tb.Cleanup(func() { simServer.Close(); _ = p.sim.Close() })
		opts.v2URL = simServer.URL
	}
	p.simURL = opts.v2URL
	v2, _ := url.Parse(opts.v2URL)
	if opts.v2Timeout == 0 {
		opts.v2Timeout = 5 * time.Second
	}
	if opts.uploadLimit == 0 {
		opts.uploadLimit = secUploadLimit
	}
	if opts.idleTimeout == 0 {
		opts.idleTimeout = 30 * time.Minute
	}

	provider, err := demoidp.New(demoidp.Options{
		Issuer: issuer, ClientID: config.DemoClientID, ClientSecret: "test-secret",
		RedirectURIs:           []string{p.URL + "/auth/callback"},
		PostLogoutRedirectURIs: []string{p.URL + "/auth/logged-out"},
		KeyFile:                testIDPKeyFile(tb), Languages: testBundle(tb),
	})
	if err != nil {
		tb.Fatal(err)
	}
	storeOpts := session.Options{Keys: []string{testSessionKey}, AbsoluteLifetime: 12 * time.Hour, Now: time.Now}
	if opts.database {
		ds, err := session.NewSQLStore(storeOpts, statedbtest.Postgres(tb))
		if err != nil {
			tb.Fatal(err)
		}
		sp.store = ds
	} else if opts.sqlite {
		ds, err := session.NewSQLStore(storeOpts, statedbtest.SQLite(tb))
		if err != nil {
			tb.Fatal(err)
		}
		sp.store = ds
	} else {
		cs, err := session.NewCookieStore(storeOpts)
		if err != nil {
			tb.Fatal(err)
		}
		sp.store = cs
	}
	authn := auth.New(auth.Config{
		IssuerURL: issuer, ClientID: config.DemoClientID, ClientSecret: "test-secret",
		PublicURL: public, IdleTimeout: opts.idleTimeout, AbsoluteLifetime: 12 * time.Hour, Now: time.Now,
	}, sp.store, logger)
	tb.Cleanup(authn.Close)

	// The same transport and redirect policy as cmd/portal, so time-outs behave as in production.
	var transport http.RoundTripper = apiclient.NewTransport()
	bundle := testBundle(tb)
	if opts.pseudo {
		sp.upstream = &secUpstreamWords{words: map[string]bool{}}
		transport = sp.upstream.recording(transport)
		if bundle, err = i18n.Load(i18n.WithPseudo()); err != nil {
			tb.Fatal(err)
		}
	}
	api, err := apiclient.New(opts.v2URL, apiclient.WithTimeout(opts.v2Timeout), apiclient.WithHTTPClient(&http.Client{
		Transport:     transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}))
	if err != nil {
		tb.Fatal(err)
	}
	sp.api, err = apiclient.New(opts.v2URL, apiclient.WithTimeout(10*time.Second))
	if err != nil {
		tb.Fatal(err)
	}
	assets, err := web.NewAssets()
	if err != nil {
		tb.Fatal(err)
	}
	cfg := config.Config{
		Addr: srv.Listener.Addr().String(), PublicURL: public, V2APIURL: v2, V2Timeout: opts.v2Timeout,
		OIDCIssuer: issuer, OIDCClientID: config.DemoClientID, UploadLimit: opts.uploadLimit,
		SessionIdleTimeout: opts.idleTimeout, SessionLifetime: 12 * time.Hour, ShutdownGrace: 5 * time.Second,
		// The security tests sign in as sales and probe what every route's handler does with hostile
		// input, so the back-office tools are open to sales here; the role gate in front of them has
		// its own test (TestBackOfficeToolsOnlyForTheirRoles).
		BatchArchiveRoles: []string{"sales", "backoffice"}, HandoverRoles: []string{"sales", "backoffice"}, ImportRoles: []string{"sales", "backoffice"},
	}
	var idpHandler http.Handler = http.StripPrefix("/idp", provider.Handler())
	if opts.wrapIdP != nil {
		idpHandler = opts.wrapIdP(idpHandler)
	}
	idp := gin.WrapH(idpHandler)
	jobManager := jobs.NewManager(jobs.Options{DB: statedbtest.SQLite(tb), Archiver: jobs.V2{API: api}, Logger: logger})
	tb.Cleanup(jobManager.Close)
	h, err := New(Deps{
		Config: cfg, Logger: logger, API: api, Auth: authn, Assets: assets,
		ExtraRoutes: func(r *gin.Engine) { r.Any("/idp/*path", idp) },
		Recent:      recent.New(statedbtest.SQLite(tb), nil),
		SavedViews:  savedviews.New(statedbtest.SQLite(tb), nil),
		Work:        workindex.New(statedbtest.SQLite(tb), workindex.Options{}),
		Jobs:        jobManager,
		I18n:        bundle,
		Imports:     customerimport.NewStore(statedbtest.SQLite(tb), customerimport.Options{}),
	})
	if err != nil {
		tb.Fatal(err)
	}
	p.h = h
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	if err := engine.SetTrustedProxies(nil); err != nil {
		tb.Fatal(err)
	}
	h.Routes(engine)
	sp.engine = engine
	sp.routes = engine.Routes()
	srv.Config.Handler = engine
	srv.Start()
	tb.Cleanup(srv.Close)
	return sp
}

// tokenOf returns the access token of the session the client holds (read back through the store,
// as the portal does), so seeding calls act as that user.
func (sp *secPortal) tokenOf(t *testing.T, client *http.Client) string {
	t.Helper()
	req := sp.requestWithCookies(t, client, "/")
	s, err := session.Load(sp.store, req)
	if err != nil {
		t.Fatalf("reading back the signed-in session: %v", err)
	}
	return s.AccessToken
}

// requestWithCookies is a GET of path carrying the cookies the client would send.
func (sp *secPortal) requestWithCookies(t *testing.T, client *http.Client, path string) *http.Request {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, sp.URL+path, nil)
	u, _ := url.Parse(sp.URL + path)
	for _, c := range client.Jar.Cookies(u) {
		req.AddCookie(c)
	}
	return req
}

// cookieHeader is the Cookie header the client sends to path.
func (sp *secPortal) cookieHeader(client *http.Client, path string) string {
	u, _ := url.Parse(sp.URL + path)
	parts := []string{}
	for _, c := range client.Jar.Cookies(u) {
		parts = append(parts, c.Name+"="+c.Value)
	}
	return strings.Join(parts, "; ")
}

// secRawClient is a client without a jar and without redirects: the test sets the Cookie header itself.
func secRawClient() *http.Client {
	return &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// resetSim empties the simulator's request log and removes faults.
func (sp *secPortal) resetSim() {
	if sp.sim != nil {
		sp.sim.ClearFaults()
		sp.sim.ResetRequests()
	}
}

// ---- Routes ----

// secPublicPrefixes need no session: health, static assets, sign-in, the embedded provider.
var secPublicPrefixes = []string{"/healthz", "/readyz", "/static/", "/auth/", "/idp/", "/language"}

// secIsPublicPath reports whether a route pattern is public. "/" is public too: it only redirects to
// the customer list (checked by TestSecurityEveryRouteRequiresSignIn).
func secIsPublicPath(path string) bool {
	if path == "/" {
		return true
	}
	for _, prefix := range secPublicPrefixes {
		if strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

// protectedRoutes are the routes behind sign-in, sorted for stable output.
func (sp *secPortal) protectedRoutes() gin.RoutesInfo {
	var out gin.RoutesInfo
	for _, r := range sp.routes {
		if !secIsPublicPath(r.Path) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return out
}

// secIsStateChanging: the methods cross-origin protection guards.
func secIsStateChanging(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// secRouteParams lists the :name and *name parameters of a route pattern.
func secRouteParams(pattern string) []string {
	var out []string
	for _, seg := range strings.Split(pattern, "/") {
		if strings.HasPrefix(seg, ":") || strings.HasPrefix(seg, "*") {
			out = append(out, seg[1:])
		}
	}
	return out
}

// secBuildPath fills a route pattern's parameters from values (keyed by parameter name). A parameter
// without a value is an error naming it, so a new route with a new parameter cannot go unnoticed.
// Values are path-escaped as one segment unless raw is true (hostile probes send them as they are).
func secBuildPath(pattern string, values map[string]string, raw bool) (string, error) {
	segs := strings.Split(pattern, "/")
	for i, seg := range segs {
		if !strings.HasPrefix(seg, ":") && !strings.HasPrefix(seg, "*") {
			continue
		}
		name := seg[1:]
		v, ok := values[name]
		if !ok {
			v, ok = values[strings.ToLower(name)]
		}
		if !ok {
			return "", fmt.Errorf("route %s: add a sample value for :%s to the security harness (sampleValues)", pattern, name)
		}
		if !raw {
			v = url.PathEscape(v)
		}
		segs[i] = v
	}
	return strings.Join(segs, "/"), nil
}

// secRouteRegexp matches concrete paths of a route pattern (for mapping form actions to routes).
func secRouteRegexp(pattern string) *regexp.Regexp {
	segs := strings.Split(pattern, "/")
	for i, seg := range segs {
		switch {
		case strings.HasPrefix(seg, ":"):
			segs[i] = `[^/]+`
		case strings.HasPrefix(seg, "*"):
			segs[i] = `.*`
		default:
			segs[i] = regexp.QuoteMeta(seg)
		}
	}
	return regexp.MustCompile("^" + strings.Join(segs, "/") + "$")
}

// ---- Seed data ("world") ----

// world is a set of related v2 entities created for a test (a customer with a profile, a quote with a
// cart and an add-on, an attachment, a contract with a signature request) and the sample value of
// every route parameter name that refers to them.
type secWorld struct {
	customerID   int32
	quoteID      int64
	basketID     int64
	rootNodeID   int64
	addonNodeID  int64
	contractID   int32
	contractNo   string
	attachmentID int32
	profileID    int32
	ownerID      int64
	samples      map[string]string
}

// sampleValues are the values used for route parameters, by parameter name (case-insensitive
// fallback). The table is the one place to extend when a route introduces a new parameter name.
func (w *secWorld) sampleValues() map[string]string {
	s := map[string]string{
		"cpqId": "1", "cpqid": "1", "configuratorId": "1",
		"customerId": secItoa(int64(w.customerID)), "id": secItoa(int64(w.customerID)),
		"quoteId":  secItoa(w.quoteID),
		"tofId":    "11",
		"basketId": secItoa(w.basketID), "cartId": secItoa(w.basketID),
		"nodeId": secItoa(w.addonNodeID), "itemId": secItoa(w.addonNodeID), "cartItemId": secItoa(w.addonNodeID),
		"parentId":       secItoa(w.rootNodeID),
		"contractId":     secItoa(int64(w.contractID)),
		"contractNumber": w.contractNo, "contractnumber": w.contractNo, "number": w.contractNo,
		"attachmentId": secItoa(int64(w.attachmentID)), "attachmentid": secItoa(int64(w.attachmentID)),
		"attachmentType": "OTHER", "type": "OTHER",
		"profileId":   secItoa(int64(w.profileID)),
		"ownerId":     secItoa(w.ownerID),
		"packageId":   "31",
		"discountId":  "1",
		"pricelistId": "1",
		"productId":   "101",
		"artifact":    "contract-pdf", // evidence artifacts: contract-pdf, contract-json, archive-payload, audit-json, audit-pdf
		"jobId":       "0123456789abcdef0123456789abcdef",
		"viewId":      "0123456789abcdef", // a saved view (none has this id: 404)
		"importId":    "0123456789abcdef0123456789abcdef",
		"mailId":      "1", // the demo's sent mail and its attachment (none in the harness: 404)
		"n":           "0",
		"path":        "x", // wildcard of /static/*path and /idp/*path (public routes)
	}
	for k, v := range w.samples {
		s[k] = v
	}
	return s
}

func secItoa(n int64) string { return strconv.FormatInt(n, 10) }

// world text is the free text written into every text field of a world (hostile payloads, or plain).
type secWorldText struct {
	name, street, city, label, contact, signer, message, fileName string
	attributes                                                    json.RawMessage
}

func secPlainText(tag string) secWorldText {
	return secWorldText{
		name: "Reliable " + tag + " S.p.A.", street: "Via Roma 1", city: "Milano", label: "Main office",
		contact: "Carla Contact", signer: "Sergio Signer", message: "Please sign.", fileName: "annex.pdf",
		attributes: json.RawMessage(`{"tier":"gold","limits":{"credit":1000}}`),
	}
}

// secUniqueTaxID returns a tax id the simulator has not seen (^[A-Z]{2}[A-Z0-9]{8,14}$).
func secUniqueTaxID() string {
	return "IT" + strings.ToUpper(rand.Text()[:12])
}

// secApiCtx carries token to the v2 API.
func secApiCtx(token string) context.Context {
	return apiclient.WithToken(context.Background(), token)
}

// buildWorld creates a world through the v2 client, acting as the user whose token is given.
func (sp *secPortal) buildWorld(t *testing.T, token string, text secWorldText) *secWorld {
	t.Helper()
	ctx := secApiCtx(token)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("seeding the simulator: %s: %v", what, err)
		}
	}
	w := &secWorld{}
	cu, err := sp.api.Customers.Create(ctx, apiclient.CustomerInput{
		Name: text.name, TaxID: secUniqueTaxID(), Email: "security@example.com", Phone: "+39 02 1234567", Segment: "BUSINESS",
		Address:    &apiclient.Address{Street: text.street, City: text.city, PostalCode: "20100", Country: "IT"},
		Attributes: text.attributes,
	})
	must("create customer", err)
	w.customerID = cu.ID
	if len(cu.Owners) > 0 {
		w.ownerID = cu.Owners[0].OwnerID
	} else {
		w.ownerID = 1001
	}
	profile, err := sp.api.Customers.CreateProfile(ctx, apiclient.ProfileInput{
		CustomerID: cu.ID, ProfileType: "BILLING", ContactName: text.contact, Email: "billing@example.com",
	})
	must("create profile", err)
	w.profileID = profile.ProfileID

	init, err := sp.api.CPQ.Init(ctx, 1, cu.ID)
	must("init CPQ session", err)
	products, err := sp.api.CPQ.ValidProducts(ctx, init.SessionID, 1, 11)
	must("valid products", err)
	var main, addon *apiclient.Product
	for i := range products {
		if products[i].Kind == "MAIN" && (main == nil || products[i].Default) {
			main = &products[i]
		}
	}
	if main == nil {
		t.Fatal("seeding: TOF 11 has no MAIN product")
	}
	for i := range products {
		if products[i].Kind == "ADDON" && slices.Contains(products[i].ParentProductIDs, main.ProductID) {
			addon = &products[i]
			break
		}
	}
	if addon == nil {
		t.Fatalf("seeding: TOF 11 has no add-on for product %d", main.ProductID)
	}
	quote, err := sp.api.CPQ.AddCart(ctx, init.SessionID, 1, 11, apiclient.AddCartRequest{
		ProductID: main.ProductID, TOFProductID: main.TOFProductID, CustomerID: cu.ID, Label: text.label,
	})
	must("add cart", err)
	w.quoteID = quote.QuoteID
	w.basketID = quote.Carts[0].BasketID
	w.rootNodeID = quote.Carts[0].Root.NodeID
	quote, err = sp.api.CPQ.AddItem(ctx, init.SessionID, 1, w.quoteID, w.basketID, w.rootNodeID, apiclient.AddItemRequest{
		OfferTypeID: 11, ProductID: addon.ProductID, OfferTypeProductID: addon.TOFProductID,
	})
	must("add item", err)
	cart, _ := quote.Cart(w.basketID)
	w.addonNodeID = cart.Root.Children[0].NodeID

	pdf := []byte("%PDF-1.4\n% security suite attachment\n%%EOF\n")
	att, err := sp.api.Attachments.Upload(ctx, w.quoteID, "OTHER", text.fileName, "application/pdf", int64(len(pdf)), bytes.NewReader(pdf))
	must("upload attachment", err)
	w.attachmentID = att.AttachmentID

	gen, err := sp.api.Contracts.Generate(ctx, w.quoteID)
	must("generate contract", err)
	_ = gen.Close()
	w.contractID, w.contractNo = gen.ContractID, gen.ContractNumber
	_, err = sp.api.Signatures.Create(ctx, apiclient.SignatureInput{
		ContractID: w.contractID, Email: "signer@example.com", SignerName: text.signer, Message: text.message,
	})
	must("request signature", err)
	return w
}

// ---- What reached the v2 API ----

// secV2Endpoints are the v2 paths of spec sections 4.1 to 4.5 by the simulator's endpoint name. The
// security suites check every request the portal sent against them: the right number of segments,
// ids in canonical decimal, strings as one escaped segment.
var secV2Endpoints = map[string]string{
	"cpq.list":                 "/v2/cpq/list",
	"cpq.init":                 "/v2/cpq/{cpqId}/customer/{customerId}/init",
	"cpq.addcart":              "/v2/cpq/{cpqId}/tof/{tofId}/addcart",
	"cpq.addcart_existing":     "/v2/cpq/{cpqId}/tof/{tofId}/addcart",
	"cpq.additem":              "/v2/cpq/{cpqId}/quote/{quoteId}/basket/{basketId}/parent/{parentId}/additemtocart",
	"cpq.removeitem":           "/v2/cpq/{cpqId}/quote/{quoteId}/basket/{basketId}/node/{nodeId}/parent/{parentId}",
	"cpq.removecart":           "/v2/cpq/{cpqId}/quote/{quoteId}/basket/{basketId}",
	"cpq.quantity":             "/v2/cpq/{cpqId}/quote/{quoteId}/basket/{basketId}/quantity",
	"cpq.validproducts":        "/v2/cpq/{cpqId}/tof/{tofId}/validproducts",
	"cpq.toflist":              "/v2/cpq/{cpqId}/customer/{customerId}/quote/{quoteId}/toflist",
	"cpq.discounts":            "/v2/cpq/{cpqId}/quote/{quoteId}/applicableDiscounts",
	"cpq.applydiscounts":       "/v2/cpq/{cpqId}/quote/{quoteId}/applyDiscounts",
	"cpq.reprice":              "/v2/cpq/{cpqId}/quote/{quoteId}/reprice",
	"cpq.package.get":          "/v2/cpq/{cpqId}/tof/{tofId}/package/{quoteId}",
	"cpq.package.add":          "/v2/cpq/{cpqId}/package",
	"cpq.pricelist":            "/v2/cpq/{cpqId}/quote/{quoteId}/changePricelist",
	"attachments.upload":       "/v2/attachment/file/quote/{quoteId}/attachmentType/{attachmentType}",
	"attachments.delete":       "/v2/attachment/{attachmentId}/quote/{quoteId}",
	"attachments.download":     "/v2/attachment/{attachmentId}/quote/{quoteId}",
	"contracts.generate":       "/v2/contract/{quoteId}/generate",
	"signature.request":        "/v2/signature",
	"signature.remove":         "/v2/signature",
	"contracts.get":            "/v2/contract/{contractId}",
	"contracts.bynumber":       "/v2/contract/bycontractnumber/{contractNumber}",
	"contracts.archive":        "/v2/contract/contractNumber/{contractNumber}/archive",
	"contracts.archivepayload": "/v2/contract/digitalarchivepayload/{contractNumber}",
	"contracts.audit":          "/v2/contract/getjsonvalidationaudit/{quoteId}",
	"contracts.auditpdf":       "/v2/contract/downloadvalidationauditpdf/{quoteId}",
	"customers.get":            "/v2/customer/{id}",
	"customers.list":           "/v2/customer/",
	"customers.onlinesearch":   "/v2/customer/onlinesearch/{cpqId}",
	"customers.create":         "/v2/customer",
	"customers.update":         "/v2/customer",
	"customers.owners.replace": "/v2/customer/{id}/owners",
	"customers.owners.add":     "/v2/customer/{id}/owner/{ownerId}",
	"customers.owners.change":  "/v2/customer/{id}/owner/change",
	"customers.profile.create": "/v2/customer/customerprofile",
	"customers.profile.delete": "/v2/customer/customerprofile",
}

// secStringPathParams are the v2 path parameters that are text, not ids.
var secStringPathParams = map[string]bool{"contractNumber": true, "attachmentType": true}

// secCanonicalID: decimal, no sign, no leading zero (docs/v2-assumptions.md A2).
var secCanonicalID = regexp.MustCompile(`^[1-9][0-9]{0,18}$`)

// secCheckUpstreamRequests checks every request the simulator recorded: it matched a v2 endpoint
// (no traversal to another path), with exactly that endpoint's segments; ids are canonical decimals;
// text parameters are one escaped segment that is not "." or ".."; query values and JSON bodies are
// valid UTF-8, and JSON bodies are valid JSON. It returns how many requests it checked.
func secCheckUpstreamRequests(t *testing.T, what string, reqs []v2sim.RecordedRequest) int {
	t.Helper()
	for _, rr := range reqs {
		desc := fmt.Sprintf("%s: upstream %s %s", what, rr.Method, rr.RequestURI)
		pattern, ok := secV2Endpoints[rr.Endpoint]
		if !ok {
			t.Errorf("%s matched no v2 endpoint (endpoint %q, status %d)", desc, rr.Endpoint, rr.Status)
			continue
		}
		got, want := strings.Split(rr.EscapedPath, "/"), strings.Split(pattern, "/")
		if len(got) != len(want) {
			t.Errorf("%s: %d path segments, the endpoint %s has %d", desc, len(got), pattern, len(want))
			continue
		}
		for i, seg := range want {
			if !strings.HasPrefix(seg, "{") {
				continue
			}
			name := strings.Trim(seg, "{}")
			value, err := url.PathUnescape(got[i])
			switch {
			case err != nil:
				t.Errorf("%s: segment %q is badly escaped", desc, got[i])
			case secStringPathParams[name]:
				if value == "" || value == "." || value == ".." || !secUtf8ValidString(value) {
					t.Errorf("%s: text parameter %s = %q", desc, name, value)
				}
			default:
				if !secCanonicalID.MatchString(got[i]) {
					t.Errorf("%s: id parameter %s = %q is not a canonical id", desc, name, got[i])
				}
			}
		}
		if _, rawQuery, ok := strings.Cut(rr.RequestURI, "?"); ok {
			q, err := url.ParseQuery(rawQuery)
			if err != nil {
				t.Errorf("%s: query does not parse: %v", desc, err)
			}
			for name, values := range q {
				for _, v := range values {
					if !secUtf8ValidString(v) {
						t.Errorf("%s: query %s is not valid UTF-8", desc, name)
					}
					if strings.HasSuffix(name, "Id") && !secCanonicalID.MatchString(v) {
						t.Errorf("%s: query id %s = %q is not a canonical id", desc, name, v)
					}
				}
			}
		}
		if strings.HasPrefix(rr.Header.Get("Content-Type"), "application/json") && rr.Body != "" && len(rr.Body) < 4<<10 {
			if !json.Valid([]byte(rr.Body)) {
				t.Errorf("%s: JSON body is not valid JSON: %.200q", desc, rr.Body)
			}
		}
	}
	return len(reqs)
}

func secUtf8ValidString(s string) bool { return utf8.ValidString(s) }
