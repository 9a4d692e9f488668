package auth

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/demoidp"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}

const (
	testClientID     = "portal"
	testClientSecret = "portal-secret"
)

// clock is a movable clock shared by the authenticator and the session store.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

type envOptions struct {
	postgres         bool // the database store on a fresh PostgreSQL state database, as replicas share it
	sqlite           bool // server-side sessions in an SQLite state database (else the cookie store, unless postgres)
	padAccessTokenTo int
	idleTimeout      time.Duration
	absoluteLifetime time.Duration
	idpStartsDown    bool // the provider drops all connections until idpAbsent is cleared
	scopes           []string
	// issuer names an external provider (Dex) instead of the demo provider mounted at /idp.
	issuer string
}

// env is a portal with the auth routes and a few protected routes, and the demo provider mounted at /idp
// on the same server, as in demo mode.
type env struct {
	server *httptest.Server
	idp    *demoidp.Provider // nil with an external issuer
	auth   *Authenticator
	store  session.Store
	clock  *clock
	// issuer, storeOpts and databaseURL let a test start a second replica on the same provider and
	// PostgreSQL state database.
	issuer      string
	storeOpts   session.Options
	databaseURL string
	stateDB     *statedb.DB // the database store's connection (nil for the other stores)

	refreshCalls    atomic.Int32 // grant_type=refresh_token requests reaching the provider
	refreshRefusals atomic.Int32 // of those, the ones the provider answered with a 4xx (invalid_grant)
	codeCalls       atomic.Int32 // grant_type=authorization_code requests
	idpDown         atomic.Bool  // the token endpoint drops connections
	idpAbsent       atomic.Bool  // every provider endpoint drops connections
	logoutTokens    bodies       // form bodies POSTed to the back-channel logout endpoint
	sessionsEnded   bodies       // subjects given to Config.OnSessionsEnded
	signIns         bodies       // login|name|email given to Config.OnSignIn
	jwksCalls       atomic.Int32 // requests for the provider's keys
}

// bodies collects request bodies.
type bodies struct {
	mu   sync.Mutex
	list []string
}

func (b *bodies) Add(body string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.list = append(b.list, body)
}

func (b *bodies) All() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.list...)
}

func newEnv(t *testing.T, opts envOptions) *env {
	t.Helper()
	e := &env{clock: &clock{}}
	e.idpAbsent.Store(opts.idpStartsDown)
	var handler http.Handler
	var handlerOnce sync.WaitGroup
	handlerOnce.Add(1)
	e.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlerOnce.Wait()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(e.server.Close)
	publicURL, _ := url.Parse(e.server.URL)

	issuer := opts.issuer
	var idp *demoidp.Provider
	if issuer == "" {
		issuer = e.server.URL + "/idp"
		var err error
		idp, err = demoidp.New(demoidp.Options{
			Issuer:                 issuer,
			ClientID:               testClientID,
			ClientSecret:           testClientSecret,
			RedirectURIs:           []string{e.server.URL + CallbackPath},
			PostLogoutRedirectURIs: []string{e.server.URL + LoggedOutPath},
			BackChannelLogoutURI:   e.server.URL + BackChannelLogoutPath,
			PadAccessTokenTo:       opts.padAccessTokenTo,
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	lifetime := opts.absoluteLifetime
	if lifetime == 0 {
		lifetime = 12 * time.Hour
	}
	storeOpts := session.Options{Keys: []string{randomKey(t)}, AbsoluteLifetime: lifetime, Now: e.clock.Now}
	e.issuer, e.storeOpts = issuer, storeOpts
	if opts.postgres {
		e.databaseURL = statedbtest.PostgresURL(t)
		e.stateDB = statedbtest.OpenURL(t, e.databaseURL)
		ds, err := session.NewSQLStore(storeOpts, e.stateDB)
		if err != nil {
			t.Fatal(err)
		}
		e.store = ds
	} else if opts.sqlite {
		ds, err := session.NewSQLStore(storeOpts, statedbtest.SQLite(t))
		if err != nil {
			t.Fatal(err)
		}
		e.store = ds
	} else {
		cs, err := session.NewCookieStore(storeOpts)
		if err != nil {
			t.Fatal(err)
		}
		e.store = cs
	}

	e.auth = New(Config{
		IssuerURL:        issuer,
		ClientID:         testClientID,
		ClientSecret:     testClientSecret,
		PublicURL:        publicURL,
		Scopes:           opts.scopes,
		IdleTimeout:      opts.idleTimeout,
		AbsoluteLifetime: lifetime,
		HTTPClient:       e.server.Client(),
		Now:              e.clock.Now,
		OnSessionsEnded:  func(_ context.Context, subject string) { e.sessionsEnded.Add(subject) },
		OnSignIn: func(_ context.Context, who SignedIn) {
			e.signIns.Add(who.Login + "|" + who.DisplayName + "|" + who.Email)
		},
	}, e.store, testLogger(t))
	t.Cleanup(e.auth.Close)

	e.idp = idp
	handler = e.routes(idp)
	handlerOnce.Done()
	return e
}

// english puts the catalogues' English translator in every request's context, as the portal's
// language middleware does: auth translates its pages with it.
func english() gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Request = inEnglish(c.Request)
		c.Next()
	}
}

// inEnglish is r with the catalogues' English translator in its context.
func inEnglish(r *http.Request) *http.Request {
	return r.WithContext(i18n.WithTranslator(r.Context(), englishTranslator()))
}

var englishTranslator = sync.OnceValue(func() *i18n.Translator {
	bundle, err := i18n.Load()
	if err != nil {
		panic(err) // the catalogues are checked by internal/i18n's own tests
	}
	return bundle.Translator(i18n.Source)
})

func (e *env) routes(idp *demoidp.Provider) http.Handler {
	r := gin.New()
	r.Use(english())
	if idp != nil {
		r.Any("/idp/*path", gin.WrapH(http.StripPrefix("/idp", e.countTokenCalls(idp.Handler()))))
	}
	r.GET(LoginPath, e.auth.Login)
	r.GET(CallbackPath, e.auth.Callback)
	r.POST(LogoutPath, e.auth.Logout)
	r.GET(LoggedOutPath, e.auth.LoggedOut)
	r.POST(BackChannelLogoutPath, func(c *gin.Context) {
		if body, err := io.ReadAll(io.LimitReader(c.Request.Body, 1<<20)); err == nil {
			e.logoutTokens.Add(string(body)) // what the provider sent, for replay tests
			c.Request.Body = io.NopCloser(bytes.NewReader(body))
		}
		e.auth.BackChannelLogout(c)
	})
	r.GET("/healthz", func(c *gin.Context) { c.String(http.StatusOK, "ok") })

	protected := r.Group("/", e.auth.RequireLogin())
	protected.GET("/quotes", func(c *gin.Context) {
		c.String(http.StatusOK, "quotes of %s, %s", CurrentUser(c).Name, c.Request.URL.RawQuery)
	})
	protected.POST("/quotes", func(c *gin.Context) { c.String(http.StatusOK, "saved") })
	protected.GET("/whoami", func(c *gin.Context) {
		c.JSON(http.StatusOK, whoami{User: CurrentUser(c), AccessToken: AccessToken(c), IDToken: CurrentSession(c).IDToken})
	})
	protected.POST("/force-refresh", func(c *gin.Context) {
		if err := e.auth.ForceRefresh(c); err != nil {
			if errors.Is(err, ErrSessionEnded) {
				e.auth.Unauthenticated(c)
				return
			}
			c.String(http.StatusBadGateway, err.Error())
			return
		}
		c.JSON(http.StatusOK, whoami{User: CurrentUser(c), AccessToken: AccessToken(c)})
	})
	protected.POST("/cpq", func(c *gin.Context) {
		CurrentSession(c).SetCPQSession(session.CPQKey{CPQID: 1, CustomerID: 2}, "cpq-session-1", time.Now())
		if err := e.auth.SaveSession(c); err != nil {
			c.String(http.StatusInternalServerError, err.Error())
			return
		}
		c.String(http.StatusOK, "stored")
	})
	protected.GET("/cpq", func(c *gin.Context) {
		id, _ := CurrentSession(c).CPQSession(session.CPQKey{CPQID: 1, CustomerID: 2})
		c.String(http.StatusOK, id)
	})
	return r
}

type whoami struct {
	User        User   `json:"user"`
	AccessToken string `json:"accessToken"`
	IDToken     string `json:"idToken"`
}

// countTokenCalls counts the token endpoint's grants and can simulate an unreachable provider.
func (e *env) countTokenCalls(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/keys" {
			e.jwksCalls.Add(1)
		}
		if e.idpAbsent.Load() || (r.URL.Path == "/oauth/token" && e.idpDown.Load()) {
			dropConnection(w)
			return
		}
		if r.URL.Path == "/oauth/token" {
			if err := r.ParseForm(); err == nil {
				switch r.PostForm.Get("grant_type") {
				case "refresh_token":
					e.refreshCalls.Add(1)
					status := &statusRecorder{ResponseWriter: w}
					next.ServeHTTP(status, r)
					if status.code >= 400 && status.code < 500 {
						e.refreshRefusals.Add(1)
					}
					return
				case "authorization_code":
					e.codeCalls.Add(1)
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// statusRecorder notes the status a handler answers with.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (sr *statusRecorder) WriteHeader(code int) {
	sr.code = code
	sr.ResponseWriter.WriteHeader(code)
}

// dropConnection closes the connection without an answer, as an unreachable server would.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	http.Error(w, "down", http.StatusServiceUnavailable)
}

// newBrowser returns a client with its own cookie jar that follows redirects.
func (e *env) newBrowser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Transport: e.server.Client().Transport}
}

// noRedirects returns a copy of browser that stops at the first response.
func noRedirects(browser *http.Client) *http.Client {
	cp := *browser
	cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cp
}

// page is a fetched response with its body read.
type page struct {
	status int
	url    *url.URL
	header http.Header
	body   string
}

func fetch(t *testing.T, client *http.Client, method, target string, header http.Header, form url.Values) page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return page{status: resp.StatusCode, url: resp.Request.URL, header: resp.Header, body: string(b)}
}

func (e *env) get(t *testing.T, client *http.Client, path string) page {
	t.Helper()
	return fetch(t, client, http.MethodGet, e.server.URL+path, nil, nil)
}

// loginForm is the provider's login form as a browser sees it.
type loginForm struct {
	action, authRequestID string
}

func parseLoginForm(t *testing.T, p page) loginForm {
	t.Helper()
	if p.status != http.StatusOK || !strings.HasPrefix(p.url.Path, "/idp/login") {
		t.Fatalf("expected the provider's login form, got %d at %s: %s", p.status, p.url, p.body)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(p.body))
	if err != nil {
		t.Fatal(err)
	}
	form := doc.Find("form")
	if doc.Find(`input[name="username"]`).Length() != 1 || doc.Find(`input[name="password"]`).Length() != 1 {
		t.Fatalf("login form lacks username/password: %s", p.body)
	}
	return loginForm{action: form.AttrOr("action", ""), authRequestID: form.Find(`input[name="authRequestID"]`).AttrOr("value", "")}
}

// submitLogin posts the credentials the way the browser does.
func (e *env) submitLogin(t *testing.T, browser *http.Client, form loginForm, username, password string) page {
	t.Helper()
	return fetch(t, browser, http.MethodPost, e.server.URL+form.action, nil, url.Values{
		"authRequestID": {form.authRequestID}, "username": {username}, "password": {password},
	})
}

// signIn visits path, signs in as the sales user and returns the page it lands on.
func (e *env) signIn(t *testing.T, browser *http.Client, path string) page {
	t.Helper()
	p := e.get(t, browser, path)
	if p.status == http.StatusOK && p.url.Path == LoginPath && p.url.Query().Has("reason") {
		// A session that ended first says why (issue 26); its link goes on to the provider.
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(p.body))
		if err != nil {
			t.Fatal(err)
		}
		next, ok := doc.Find(`a[href^="/auth/login"]`).Attr("href")
		if !ok {
			t.Fatalf("the signed-out page has no link to sign in again: %s", p.body)
		}
		p = e.get(t, browser, next)
	}
	form := parseLoginForm(t, p)
	return e.submitLogin(t, browser, form, "sales", "sales-demo")
}

// who fetches /whoami.
func (e *env) who(t *testing.T, browser *http.Client) whoami {
	t.Helper()
	p := e.get(t, browser, "/whoami")
	if p.status != http.StatusOK {
		t.Fatalf("/whoami: %d at %s", p.status, p.url)
	}
	var w whoami
	if err := json.Unmarshal([]byte(p.body), &w); err != nil {
		t.Fatalf("/whoami body %q: %v", p.body, err)
	}
	return w
}

// cookieHeader is the Cookie header the browser sends to path.
func (e *env) cookieHeader(browser *http.Client, path string) string {
	u, _ := url.Parse(e.server.URL + path)
	parts := []string{}
	for _, c := range browser.Jar.Cookies(u) {
		parts = append(parts, c.Name+"="+c.Value)
	}
	return strings.Join(parts, "; ")
}

// copyCookies returns a new browser holding the same cookies (an old copy of the cookie jar).
func (e *env) copyCookies(t *testing.T, browser *http.Client) *http.Client {
	t.Helper()
	clone := e.newBrowser(t)
	for _, path := range []string{"/", "/auth/"} {
		u, _ := url.Parse(e.server.URL + path)
		clone.Jar.SetCookies(u, browser.Jar.Cookies(u))
	}
	return clone
}

func randomKey(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// testLogger writes the authenticator's log into the test log (shown on failure or with -v).
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// waitFor polls cond until it holds (a condition wait with a generous deadline, not a timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
