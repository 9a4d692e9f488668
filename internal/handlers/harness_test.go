package handlers

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/config"
	"github.com/cpqportal/portal/internal/customercache"
	"github.com/cpqportal/portal/internal/customerimport"
	"github.com/cpqportal/portal/internal/demoidp"
	"github.com/cpqportal/portal/internal/handover"
	"github.com/cpqportal/portal/internal/inbox"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/outbox"
	"github.com/cpqportal/portal/internal/people"
	"github.com/cpqportal/portal/internal/recent"
	"github.com/cpqportal/portal/internal/savedviews"
	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/v2sim"
	"github.com/cpqportal/portal/internal/watch"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/internal/worksight"
	"github.com/cpqportal/portal/web"
)

// The handler tests run the real thing: the embedded OpenID provider, the real authenticator with
// the cookie session store, and the v2 simulator (the only test double, at the v2 boundary).

const testSessionKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type portalOptions struct {
	v2URL        string        // talk to this v2 API instead of a fresh simulator
	simCustomers int           // customers seeded into the fresh simulator (default 5)
	v2Timeout    time.Duration // per-call limit of the API client (default 5 s)
	authIssuer   string        // sign in at this issuer instead of the embedded provider
	extraRoute   func(h *Handler, r *gin.Engine)
	// uploadLimit is PORTAL_UPLOAD_LIMIT (default 10 MiB).
	uploadLimit int64
	// customerCacheTTL is PORTAL_CUSTOMER_CACHE_TTL (default 0: the list is revalidated on every request).
	customerCacheTTL time.Duration
	// readyCheck and healthURL are PORTAL_V2_READY_CHECK (default: connect).
	readyCheck string
	healthURL  *url.URL
	// now is the handlers' clock (default time.Now).
	now func() time.Time
	// workDown: the work index's database does not answer (faults).
	workDown bool
	// metrics, when set, receives the HTTP metrics (Deps.Metrics).
	metrics prometheus.Registerer
	// extraUsers sign in besides the demo users (a display name with an emoji).
	extraUsers []demoidp.User
	// smtpURL, when set, is PORTAL_SMTP_URL: the outbox sends there (else e-mail is off).
	smtpURL string
	// inbox turns the inbox on (Deps.Inbox; testPortal.inbox).
	inbox bool
	// batchConcurrency is PORTAL_BATCH_CONCURRENCY (default 0: one call at a time).
	batchConcurrency int
}

// testPortal is one running portal with its provider and simulator.
type testPortal struct {
	URL    string
	h      *Handler
	db     *statedb.DB // the state database
	jobs   *jobs.Manager
	sim    *v2sim.Server
	simURL string
	logs   *syncBuffer
	inbox  *inbox.Store // with portalOptions.inbox
}

func newPortal(t testing.TB, opts portalOptions) *testPortal {
	t.Helper()
	p := &testPortal{logs: &syncBuffer{}}
	logger := slog.New(NewLogHandler(slog.NewJSONHandler(p.logs, &slog.HandlerOptions{Level: slog.LevelDebug})))

	// The portal's listener first: its address is the public URL and the provider's issuer.
	srv := httptest.NewUnstartedServer(nil)
	public, _ := url.Parse("http://" + srv.Listener.Addr().String())
	p.URL = public.String()
	issuer := p.URL + "/idp"

	if opts.v2URL == "" {
		customers := opts.simCustomers
		if customers == 0 {
			customers = 5
		}
		p.sim = v2sim.New(v2sim.Options{IssuerURL: issuer, Customers: customers, Seed: 1})
		simServer := httptest.NewServer(p.sim)
		t.Cleanup(func() { simServer.Close(); _ = p.sim.Close() })
		opts.v2URL = simServer.URL
	}
	p.simURL = opts.v2URL
	v2, _ := url.Parse(opts.v2URL)
	if opts.v2Timeout == 0 {
		opts.v2Timeout = 5 * time.Second
	}

	provider, err := demoidp.New(demoidp.Options{
		Issuer: issuer, ClientID: config.DemoClientID, ClientSecret: "test-secret",
		RedirectURIs:           []string{p.URL + "/auth/callback"},
		PostLogoutRedirectURIs: []string{p.URL + "/auth/logged-out"},
		// A second back-office clerk: the tools' jobs are their owner's only (tests sign in as
		// "clerk" to be another person with the same role).
		ExtraUsers: append([]demoidp.User{{Subject: "test-clerk", Username: "clerk", Password: "clerk-demo", Name: "Cleo Clerk", Email: "cleo.clerk@demo.example", Role: "backoffice"}}, opts.extraUsers...),
		KeyFile:    testIDPKeyFile(t), Languages: testBundle(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	store, err := session.NewCookieStore(session.Options{Keys: []string{testSessionKey}})
	if err != nil {
		t.Fatal(err)
	}
	authIssuer := issuer
	if opts.authIssuer != "" {
		authIssuer = opts.authIssuer
	}
	var jobManager *jobs.Manager    // built below; sign-outs pause the user's batches, as in cmd/portal
	var directory *people.Directory // built below; sign-ins are recorded, as in cmd/portal
	authn := auth.New(auth.Config{
		IssuerURL: authIssuer, ClientID: config.DemoClientID, ClientSecret: "test-secret",
		PublicURL: public, IdleTimeout: 30 * time.Minute, AbsoluteLifetime: time.Hour,
		OnSessionsEnded: func(ctx context.Context, subject string) {
			if jobManager != nil {
				_ = jobManager.PauseOwner(ctx, subject)
			}
		},
		OnSignIn: func(ctx context.Context, who auth.SignedIn) {
			if directory != nil {
				_ = directory.Record(ctx, people.Person{Login: who.Login, Name: who.DisplayName, Email: who.Email})
			}
		},
	}, store, logger)
	t.Cleanup(authn.Close)

	api, err := apiclient.New(opts.v2URL, apiclient.WithTimeout(opts.v2Timeout))
	if err != nil {
		t.Fatal(err)
	}
	assets, err := web.NewAssets()
	if err != nil {
		t.Fatal(err)
	}
	if opts.uploadLimit == 0 {
		opts.uploadLimit = 10 << 20
	}
	cfg := config.Config{
		Addr: srv.Listener.Addr().String(), PublicURL: public, V2APIURL: v2, V2Timeout: opts.v2Timeout,
		OIDCIssuer: issuer, OIDCClientID: config.DemoClientID, UploadLimit: opts.uploadLimit,
		CustomerCacheTTL: opts.customerCacheTTL, V2ReadyCheck: opts.readyCheck, V2HealthURL: opts.healthURL,
		BatchConcurrency: opts.batchConcurrency, TeamRoles: []string{"backoffice", "team-lead"}, BackofficeRoles: []string{"backoffice"},
		// The tools' roles as the settings' defaults (internal/config).
		BatchArchiveRoles: []string{"backoffice"}, HandoverRoles: []string{"backoffice", "team-lead"}, ImportRoles: []string{"backoffice"},
	}
	idp := gin.WrapH(http.StripPrefix("/idp", provider.Handler()))
	p.db = statedbtest.SQLite(t)
	workDB := p.db
	if opts.workDown {
		workDB = statedbtest.SQLite(t)
		_ = workDB.Close()
	}
	sealer, err := session.NewSealer([]string{strings.Repeat("7e", 32)}, "batch token")
	if err != nil {
		t.Fatal(err)
	}
	jobChanges := watch.NewSignals()
	handoverKind := &handover.Kind{API: api}
	importKind := &customerimport.Kind{API: api}
	// As cmd/portal wires them: a signer's answer the index learns reaches the inbox (when on), a
	// batch archive's lines reach the index through the engine's Effects.
	work := workindex.New(workDB, workindex.Options{OnAnswer: func(ctx context.Context, s workindex.ContractSighting, ch workindex.Change) {
		if p.inbox != nil {
			if err := p.inbox.TellAnswer(ctx, ch.CreatedBy, ch.ChangedBy, s, ch.To); err != nil {
				t.Errorf("inbox: %v", err)
			}
		}
	}})
	customers := NewCustomerCache(api, cfg, opts.now)
	jobManager = jobs.NewManager(jobs.Options{DB: p.db, Archiver: jobs.V2{API: api}, Kinds: map[string]jobs.Kind{jobs.KindHandover: handoverKind, jobs.KindCustomerImport: importKind},
		Concurrency: 4, Logger: logger, Sealer: sealer, OnChange: jobChanges.Notify,
		Effects: jobs.AllEffects{worksight.JobEffects{Work: work, Logger: logger}, customercache.JobEffects{Cache: customers}}})
	jobManager.Run()
	t.Cleanup(jobManager.Close)
	p.jobs = jobManager
	directory = people.New(p.db, people.Options{})
	var sender outbox.Sender
	if opts.smtpURL != "" {
		server, err := outbox.ParseSMTPURL(opts.smtpURL)
		if err != nil {
			t.Fatal(err)
		}
		sender = outbox.SMTPSender{Server: server, From: "offers@portal.example.com"}
	}
	mail := outbox.New(outbox.Options{DB: p.db, Sender: sender, Logger: logger, PollInterval: 50 * time.Millisecond})
	mail.Run()
	t.Cleanup(mail.Close)
	if opts.inbox {
		p.inbox = inbox.New(inbox.Options{DB: p.db, Mail: mail, PublicURL: p.URL, Logger: logger})
	}
	h, err := New(Deps{
		Inbox:  p.inbox,
		Mail:   mail,
		I18n:   testBundle(t),
		Config: cfg, Logger: logger, API: api, Auth: authn, Assets: assets, Now: opts.now,
		ExtraRoutes: func(r *gin.Engine) { r.Any("/idp/*path", idp) },
		Recent:      recent.New(p.db, nil),
		SavedViews:  savedviews.New(p.db, nil),
		Jobs:        jobManager,
		Customers:   customers,
		Work:        work,
		JobChanges:  jobChanges,
		People:      directory,
		Imports:     customerimport.NewStore(p.db, customerimport.Options{}),
		Metrics:     opts.metrics,
	})
	if err != nil {
		t.Fatal(err)
	}
	p.h = h
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	if err := engine.SetTrustedProxies(nil); err != nil {
		t.Fatal(err)
	}
	h.Routes(engine)
	if opts.extraRoute != nil {
		opts.extraRoute(h, engine)
	}
	srv.Config.Handler = engine
	srv.Start()
	t.Cleanup(srv.Close)
	return p
}

// client returns a browser-like client: a cookie jar, no automatic redirects.
func (p *testPortal) client(t testing.TB) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{
		Jar:           jar,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// login signs in through the real flow: page → /auth/login → provider's form → callback.
// It returns a client with the session cookies.
func (p *testPortal) login(t testing.TB, username, password string) *http.Client {
	t.Helper()
	client := p.client(t)
	next := p.URL + "/customers"
	var form *goquery.Selection
	for range 10 { // follow redirects to the provider's login form
		resp := p.do(t, client, http.MethodGet, next, nil, nil)
		if resp.StatusCode == http.StatusOK {
			doc := parseHTML(t, resp.body)
			form = doc.Find("form")
			break
		}
		if resp.StatusCode < 300 || resp.StatusCode > 399 {
			t.Fatalf("login: GET %s answered %d: %s", next, resp.StatusCode, resp.body)
		}
		next = resolve(t, next, resp.Header.Get("Location"))
	}
	if form == nil || form.Length() == 0 {
		t.Fatal("login: no login form reached")
	}
	values := url.Values{}
	form.Find("input[type=hidden]").Each(func(_ int, s *goquery.Selection) {
		values.Set(s.AttrOr("name", ""), s.AttrOr("value", ""))
	})
	values.Set("username", username)
	values.Set("password", password)
	action := resolve(t, next, form.AttrOr("action", ""))
	resp := p.do(t, client, http.MethodPost, action, strings.NewReader(values.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": p.URL})
	next = action
	for range 10 {
		if resp.StatusCode < 300 || resp.StatusCode > 399 {
			break
		}
		next = resolve(t, next, resp.Header.Get("Location"))
		resp = p.do(t, client, http.MethodGet, next, nil, nil)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(next, p.URL+"/customers") {
		t.Fatalf("login: ended at %s with %d: %s", next, resp.StatusCode, resp.body)
	}
	return client
}

type response struct {
	*http.Response
	body string
}

// do sends a request and reads the whole (decompressed by net/http unless asked otherwise) body.
func (p *testPortal) do(t testing.TB, client *http.Client, method, target string, body io.Reader, headers map[string]string) response {
	t.Helper()
	if strings.HasPrefix(target, "/") {
		target = p.URL + target
	}
	req, err := http.NewRequestWithContext(context.Background(), method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, target, err)
	}
	return response{Response: resp, body: string(data)}
}

func (p *testPortal) get(t testing.TB, client *http.Client, path string, headers map[string]string) response {
	t.Helper()
	return p.do(t, client, http.MethodGet, path, nil, headers)
}

func resolve(t testing.TB, base, ref string) string {
	t.Helper()
	b, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	r, err := url.Parse(ref)
	if err != nil {
		t.Fatal(err)
	}
	return b.ResolveReference(r).String()
}

func parseHTML(t testing.TB, body string) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// closedURL returns the URL of a port nobody listens on (connection refused).
func closedURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr
}

// htmx are the headers htmx sends with a request.
var htmx = map[string]string{"HX-Request": "true"}
