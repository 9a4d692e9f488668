// Package handlers is the portal's web layer: every route (routes.go), the middleware every
// response passes through (middleware.go), rendering (render.go) and the error edge (errors.go).
//
// How to add a page (later areas: customers, quotes, contracts, audits):
//
//  1. One file per action, e.g. customer_edit.go with a method `func (h *Handler) showCustomerEdit(c *gin.Context)`.
//  2. Register it in routes.go under its area's section comment, inside the `pages` group (signed in,
//     1 MiB body limit, cross-origin protected like every route).
//  3. Parse path parameters first with parseInt32ID / parseInt64ID / contractNumberParam: bad input
//     answers 400 before any v2 call.
//  4. Call the v2 API with ctx := h.apiContext(c) (the user's token and the request id ride along).
//  5. On error: h.fail(c, err) once, then return. It logs with the request id and renders the right
//     page (full requests) or toast (htmx requests) for the status; for forms, check
//     fieldErrorsFrom(err) first and re-render the form with 422.
//  6. Render with h.renderPage(c, status, title, section, pages.XxxPage(vm)) for full pages and
//     h.render(c, status, pages.XxxPartial(vm)) for htmx partials (isHTMX(c) tells them apart).
//     Toasts after a successful htmx action: h.toast(c, components.ToastSuccess, t(c, "customer.toast.saved")).
//  7. Every word a person reads goes through the catalogue (t(c, key), i18n.T(ctx, key) in templates,
//     i18n.M for errors): internal/i18n, docs/i18n.md.
package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/config"
	"github.com/cpqportal/portal/internal/countries"
	"github.com/cpqportal/portal/internal/customercache"
	"github.com/cpqportal/portal/internal/customerimport"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/inbox"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/outbox"
	"github.com/cpqportal/portal/internal/people"
	"github.com/cpqportal/portal/internal/pipeline"
	"github.com/cpqportal/portal/internal/quota"
	"github.com/cpqportal/portal/internal/recent"
	"github.com/cpqportal/portal/internal/savedviews"
	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/internal/watch"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web"
)

// Authenticator is what the handlers need from internal/auth (*auth.Authenticator implements it).
// Declared here, where it is used, so the handlers depend on behaviour, not on a concrete type.
type Authenticator interface {
	// Ready reports whether OpenID discovery has completed (readiness).
	Ready() bool
	// Login, Callback, Logout and LoggedOut are the /auth/* routes.
	Login(c *gin.Context)
	Callback(c *gin.Context)
	Logout(c *gin.Context)
	LoggedOut(c *gin.Context)
	// RequireLogin guards the signed-in pages.
	RequireLogin() gin.HandlerFunc
	// ForceRefresh renews the access token after the v2 API answered 401.
	ForceRefresh(c *gin.Context) error
	// Unauthenticated sends the user to sign in (303, or HX-Redirect for htmx) and aborts.
	Unauthenticated(c *gin.Context)
	// LogoutEverywhere ends all of the user's sessions, then signs out as Logout does.
	LogoutEverywhere(c *gin.Context)
	// BackChannelLogout receives the OpenID provider's logout tokens (server to server).
	BackChannelLogout(c *gin.Context)
	// Sessions, RevokeSession and RevokeOtherSessions serve the sessions page.
	Sessions(c *gin.Context) ([]auth.ActiveSession, bool, error)
	RevokeSession(c *gin.Context, handle string) error
	RevokeOtherSessions(c *gin.Context) error
}

// pageRendererSetter is implemented by *auth.Authenticator: auth renders its pages through a
// function of ours, so it never imports the templates.
type pageRendererSetter interface {
	SetPageRenderer(render func(c *gin.Context, status int, title, message, linkURL, linkText string))
}

// Deps are the Handler's dependencies, wired by cmd/portal.
type Deps struct {
	// Config is the portal configuration; V2APIURL must be set (cmd/portal fills in the
	// simulator's URL in demo mode) and PublicURL must be the real one (after BindAddr).
	Config config.Config
	Logger *slog.Logger
	// API is the v2 client shared by all requests; each call carries the user's token.
	API *apiclient.Client
	// Auth handles sign-in and guards the pages.
	Auth Authenticator
	// Assets are the static files and their hashed URLs.
	Assets *web.Assets
	// Now is the clock (tests may fix it); time.Now when nil.
	Now func() time.Time
	// ProbeClient is used by /readyz when PORTAL_V2_READY_CHECK names the v2 service's health
	// URL; a client with a 3 s timeout that follows no redirect when nil.
	ProbeClient *http.Client
	// ExtraRoutes, when set, registers more routes on the engine after the shared middleware,
	// e.g. the demo OpenID provider under /idp/ (cmd/portal in demo mode).
	ExtraRoutes func(r *gin.Engine)
	// Version is shown in logs and the User-Agent; "dev" when empty.
	Version string
	// Metrics, when set, receives the HTTP request metrics (served by cmd/portal on PORTAL_METRICS_ADDR).
	Metrics prometheus.Registerer
	// Recent keeps each user's recent quotes and contracts; nil turns the lists off (tests).
	Recent *recent.Recent
	// Jobs runs batch archive jobs; nil answers the batch pages with 503 (tests).
	Jobs *jobs.Manager
	// Customers are the cached customer lists (NewCustomerCache), shared with the job engine's
	// Effects (customercache.JobEffects: what an import or a handover did is in its person's
	// list at once); nil: the handlers build their own.
	Customers *customercache.Cache
	// JobChanges is notified (jobs.Options.OnChange) when a job changes, so a progress page waiting
	// on it answers at once; nil: the page notices within batchProgressRecheck.
	JobChanges *watch.Signals
	// I18n is the message catalogues and the choice of language; the embedded catalogues when nil.
	I18n *i18n.Bundle
	// Work is the work index of quotes and contracts (internal/workindex); nil turns the work lists
	// off (tests).
	Work *workindex.Index
	// People is the directory of the people who signed in (internal/people), so audits show a
	// colleague's name instead of their login; nil: actors are shown as the v2 writes them.
	People *people.Directory
	// SavedViews keeps each person's saved list filters (internal/savedviews); nil turns saved
	// views off (tests).
	SavedViews *savedviews.Store
	// Imports keeps the customer imports' dry runs (internal/customerimport); nil answers the import
	// pages with 503 (tests).
	Imports *customerimport.Store
	// Mail is the outbox (nil: no e-mail, and no list of sent mail).
	Mail *outbox.Outbox
	// Watch keeps each signed-in person's token for the signature watcher (internal/signwatch);
	// nil: nothing is watched with their token (tests).
	Watch TokenKeeper
	// DemoMail is the demo's own mail server (demo mode without PORTAL_SMTP_URL): its "Sent
	// mail" page lists what reached it; nil: no such page (404).
	DemoMail DemoMail
	// Inbox is each person's inbox (internal/inbox); nil: no inbox link, and /inbox answers 404.
	Inbox *inbox.Store
}

// TokenKeeper is what the handlers tell the signature watcher: the person's current token.
type TokenKeeper interface {
	Keep(ctx context.Context, v workindex.Viewer, token string, expiry time.Time) error
}

// Handler holds the dependencies of every route. All handlers are its methods; it has no
// mutable state apart from the readiness probe cache, the draining flag and the per-user
// customer list cache.
type Handler struct {
	cfg         config.Config
	logger      *slog.Logger
	api         *apiclient.Client
	auth        Authenticator
	assets      *web.Assets
	now         func() time.Time
	extraRoutes func(r *gin.Engine)
	version     string

	cop         *http.CrossOriginProtection
	csp         string
	hsts        bool
	buffers     *bufferPool     // render and gzip buffers
	copyBuffers *copyBufferPool // download copy buffers
	gzipWriters *gzipPool
	metrics     *httpMetrics // nil when metrics are off
	readiness   readiness
	// customers is each user's customer list, kept for PORTAL_CUSTOMER_CACHE_TTL (customers_list.go).
	customers *customercache.Cache
	// configurators is each user's configurator names, kept briefly (configurator_cache.go).
	configurators *configuratorCache
	// recent is each user's recent quotes and contracts (nil: off).
	recent *recent.Recent
	// formSigner signs what a page carries in a form instead of the server reading it again
	// (contract_archive_proof.go); keyed from the session keys.
	formSigner *session.Signer
	// jobs runs batch archive jobs (nil: off).
	jobs *jobs.Manager
	// jobChanges wakes progress pages waiting on a job (batch_archive_show.go; never nil).
	jobChanges *watch.Signals
	// changes shares "has it changed" reads of open quotes and contracts between their viewers
	// (one upstream read per interval per quote on this replica: quote_changes.go).
	changes *watch.Watcher
	// i18n picks each request's language and holds the catalogues (language.go).
	i18n *i18n.Bundle
	// exports bounds each user's file exports in flight on this replica (exportsPerUser).
	exports *quota.InFlight
	// work is the work index (work_index.go; nil: off).
	work *workindex.Index
	// pipeline is the home page's figures, read from the work index (home.go; nil: off).
	pipeline *pipeline.Pipeline
	// people names audit actors by the logins people signed in with (audit_people.go; nil: off).
	people *people.Directory
	// countries are the customer form's countries, named in each reader's language.
	countries *countries.List
	// views are each person's saved list filters (work_views.go; nil: off).
	views *savedviews.Store
	// imports keeps the customer imports (nil: off); importReader reads their files (headings in
	// every language); importsInFlight bounds each person's dry runs on this replica.
	imports         *customerimport.Store
	importReader    *customerimport.Reader
	importsInFlight *quota.InFlight
	// mail is the outbox (internal/outbox): the offer sent by e-mail (offer_mail.go). Without an
	// SMTP server it only lists what was sent before (Enabled false); nil in tests without it.
	mail *outbox.Outbox
	// watch keeps people's tokens for the signature watcher (nil: off).
	watch TokenKeeper
	// demoMail is the demo's mail server (nil: not the demo's; demo_mail.go).
	demoMail DemoMail
	// inbox is each person's inbox (inbox_*.go; nil: off).
	inbox *inbox.Store
	// parses bounds the reading of uploaded spreadsheets: one per person, parsesPerReplica in all
	// (upload_parse.go); stopping ends the reads in flight when the portal starts to stop
	// (SetNotReady), stopParses is its cancel.
	parses     *quota.Gate
	stopping   context.Context
	stopParses context.CancelFunc
}

// exportsPerUser is how many file exports (customers, audit worklist) one user may have running
// at once on a replica; a download takes seconds, so more means a script or repeated clicks.
const exportsPerUser = 2

// importsPerUser is how many customer import dry runs one person may have running at once on a
// replica (each reads a file of up to 10,000 lines and the person's customer list).
const importsPerUser = 1

// liveNoticeInterval is the shortest time between two upstream reads of one open quote or
// contract for the live notice; the pages poll a little faster (app.js), so a change made
// elsewhere shows within about two intervals.
const liveNoticeInterval = 2 * time.Second

// New checks the dependencies and builds the Handler.
func New(deps Deps) (*Handler, error) {
	switch {
	case deps.Logger == nil:
		return nil, errors.New("handlers: Deps.Logger is nil")
	case deps.API == nil:
		return nil, errors.New("handlers: Deps.API is nil")
	case deps.Auth == nil:
		return nil, errors.New("handlers: Deps.Auth is nil")
	case deps.Assets == nil:
		return nil, errors.New("handlers: Deps.Assets is nil")
	case deps.Config.V2APIURL == nil:
		return nil, errors.New("handlers: Deps.Config.V2APIURL is nil (demo mode: set it to the simulator's URL)")
	case deps.Config.PublicURL == nil:
		return nil, errors.New("handlers: Deps.Config.PublicURL is nil")
	}
	h := &Handler{
		cfg:         deps.Config,
		logger:      deps.Logger,
		api:         deps.API,
		auth:        deps.Auth,
		assets:      deps.Assets,
		now:         deps.Now,
		extraRoutes: deps.ExtraRoutes,
		version:     deps.Version,
		recent:      deps.Recent,
		jobs:        deps.Jobs,
		jobChanges:  deps.JobChanges,
		i18n:        deps.I18n,
		work:        deps.Work,
		people:      deps.People,
		views:       deps.SavedViews,
		imports:     deps.Imports,
		mail:        deps.Mail,
		watch:       deps.Watch,
		demoMail:    deps.DemoMail,
		inbox:       deps.Inbox,
		hsts:        deps.Config.PublicURL.Scheme == "https",
	}
	h.exports = quota.NewInFlight(exportsPerUser)
	h.countries = countries.New(i18n.Languages...)
	h.buffers = newBufferPool()
	h.copyBuffers = newCopyBufferPool()
	h.gzipWriters = newGzipPool(h.buffers)
	if h.now == nil {
		h.now = time.Now
	}
	if h.cfg.WorkStaleAfter <= 0 {
		h.cfg.WorkStaleAfter = 10 * time.Minute
	}
	if h.i18n == nil {
		bundle, err := i18n.Load()
		if err != nil {
			return nil, err
		}
		h.i18n = bundle
	}
	h.importReader = customerimport.NewReader(h.i18n, h.countries.Resolve)
	h.importsInFlight = quota.NewInFlight(importsPerUser)
	h.parses = quota.NewGate(1, parsesPerReplica)
	h.stopping, h.stopParses = context.WithCancel(context.Background())
	if h.work != nil {
		h.pipeline = pipeline.New(h.work, pipeline.Options{SignatureDays: deps.Config.FollowUpSignatureDays,
			DraftDays: deps.Config.FollowUpDraftDays, Now: h.now})
	}
	h.customers = deps.Customers
	if h.customers == nil {
		h.customers = NewCustomerCache(deps.API, deps.Config, h.now)
	}
	h.configurators = newConfiguratorCache(deps.Config.CustomerCacheTTL, h.now)
	h.changes = watch.New(liveNoticeInterval, h.now)
	signer, err := newFormSigner(deps.Config.SessionKeys)
	if err != nil {
		return nil, err
	}
	h.formSigner = signer
	if h.jobChanges == nil {
		h.jobChanges = watch.NewSignals()
	}
	if h.version == "" {
		h.version = "dev"
	}
	if deps.Metrics != nil {
		m, err := newHTTPMetrics(deps.Metrics)
		if err != nil {
			return nil, err
		}
		h.metrics = m
	}
	probeClient := deps.ProbeClient
	if probeClient == nil {
		probeClient = &http.Client{
			Timeout: readyProbeTimeout,
			// A health endpoint that redirects is not healthy: never follow it elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	h.readiness.probe, h.readiness.target = newV2Probe(deps.Config, probeClient, "cpq-portal-readyz/"+h.version)

	csp, err := contentSecurityPolicy(deps.Config)
	if err != nil {
		return nil, err
	}
	h.csp = csp
	// Auth's own pages (callback errors, "signed out") are rendered in the portal's layout.
	if pr, ok := deps.Auth.(pageRendererSetter); ok {
		pr.SetPageRenderer(h.renderAuthPage)
	}
	h.cop = http.NewCrossOriginProtection()
	// Behind a reverse proxy the Host header may be an internal name; the browser's Origin is the
	// public URL, which is therefore trusted explicitly.
	if err := h.cop.AddTrustedOrigin(deps.Config.PublicURL.Scheme + "://" + deps.Config.PublicURL.Host); err != nil {
		return nil, err
	}
	// The one exception: the OpenID provider's back-channel logout is a server-to-server POST that
	// carries no cookie and acts only on what its signed logout token names (auth.BackChannelLogout
	// validates it), so it must never be refused for its origin.
	h.cop.AddInsecureBypassPattern("POST " + auth.BackChannelLogoutPath)
	return h, nil
}
