// Command portal is the CPQ Portal web server.
//
// Configuration comes from PORTAL_* environment variables and flags (go run ./cmd/portal -help lists
// them). With -demo it needs nothing else: it also starts, in the same process, the embedded OpenID
// provider (under /idp on the portal's own address) and the v2 simulator (on its own loopback port).
//
// On start it prints "portal listening on http://HOST:PORT" (the e2e harness parses that line;
// -addr 127.0.0.1:0 picks a free port), then "metrics listening on http://HOST:PORT/metrics" when
// PORTAL_METRICS_ADDR is set. SIGTERM or SIGINT shut it down gracefully: /readyz turns 503 first,
// then in-flight requests get PORTAL_SHUTDOWN_GRACE to finish, then the last trace spans are flushed.
//
// Observability (docs/operations.md): Prometheus metrics on PORTAL_METRICS_ADDR (one non-global
// registry: HTTP by route template, v2 calls by endpoint, sign-ins, token refreshes, uploads, session
// store errors); OpenTelemetry tracing when the standard OTEL_* variables ask for it.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/bounce"
	"github.com/cpqportal/portal/internal/config"
	"github.com/cpqportal/portal/internal/customercache"
	"github.com/cpqportal/portal/internal/customerimport"
	"github.com/cpqportal/portal/internal/demoidp"
	"github.com/cpqportal/portal/internal/demomail"
	"github.com/cpqportal/portal/internal/handlers"
	"github.com/cpqportal/portal/internal/handover"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/inbox"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/mailcopy"
	"github.com/cpqportal/portal/internal/outbox"
	"github.com/cpqportal/portal/internal/people"
	"github.com/cpqportal/portal/internal/recent"
	"github.com/cpqportal/portal/internal/savedviews"
	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/internal/signwatch"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/stateimport"
	"github.com/cpqportal/portal/internal/store"
	"github.com/cpqportal/portal/internal/telemetry"
	"github.com/cpqportal/portal/internal/v2sim"
	"github.com/cpqportal/portal/internal/watch"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/internal/worksight"
	"github.com/cpqportal/portal/web"
)

// version is stamped at build time: go build -ldflags "-X main.version=1.2.3".
var version = "dev"

func main() {
	if _, err := applyMemoryLimit(os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "portal:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		fmt.Fprintln(os.Stderr, "portal:", err)
		os.Exit(1)
	}
}

// run is the whole program; it returns when ctx is cancelled (signal) and the server has shut down.
// stdout gets the start-up banner, stderr the logs.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := config.Load(args, getenv)
	if err != nil {
		return err
	}
	if cfg.ShowVersion {
		fmt.Fprintln(stdout, "portal", version)
		return nil
	}
	logger := newLogger(cfg, stderr)

	// Listen first: with port 0 the real address decides the public URL and the demo issuer.
	listener, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("PORTAL_ADDR: listen on %s: %w", cfg.Addr, err)
	}
	defer listener.Close()
	cfg.BindAddr(listener.Addr().String())
	if err := prepareDataDir(cfg.DataDir); err != nil {
		return err
	}
	if cfg.GeneratedSessionKey {
		// Demo mode without PORTAL_SESSION_KEYS: a key kept in the data directory, so sign-ins
		// survive a restart.
		key, err := demoSessionKey(cfg.DataDir)
		if err != nil {
			return err
		}
		cfg.SessionKeys = []string{key}
		logger.Info("demo mode: session key kept in the data directory", slog.String("dir", demoDir(cfg.DataDir)))
	}

	// The catalogues, read once for the portal and, in demo mode, its OpenID provider's login page.
	languages, err := i18n.Load()
	if err != nil {
		return err
	}
	var extraRoutes func(*gin.Engine)
	if cfg.DemoIdP {
		provider, err := newDemoProvider(cfg, languages)
		if err != nil {
			return err
		}
		idpHandler := gin.WrapH(http.StripPrefix(demoIdPMount, provider.Handler()))
		extraRoutes = func(r *gin.Engine) {
			r.Any(demoIdPMount+"/*path", idpHandler)
		}
	}

	var simulator *demoSimulator
	if cfg.V2Simulated() {
		simulator, err = startSimulator(cfg, logger)
		if err != nil {
			return err
		}
		defer simulator.close()
		cfg.V2APIURL = simulator.url
	}

	// The demo without PORTAL_SMTP_URL sends its e-mail to a mail server of its own, whose mails
	// the "Sent mail" page shows (internal/demomail): the whole path of a real send, nothing leaves.
	var mailCatcher *demomail.Catcher
	if cfg.Demo && cfg.SMTP == nil {
		if mailCatcher, err = demomail.Start(); err != nil {
			return err
		}
		defer mailCatcher.Close()
		server, err := outbox.ParseSMTPURL(mailCatcher.URL())
		if err != nil {
			return err
		}
		cfg.SMTP, cfg.SMTPFrom = &server, demoMailFrom
		// And a copy mailbox of its own, so the copy check runs (docs/mail.md "Exactly once: the
		// copy check"): a mail a crash left in doubt is confirmed or sent again.
		if cfg.CopyTo == "" {
			copies, err := mailCatcher.ServeCopies(demoCopyTo)
			if err != nil {
				return err
			}
			box, err := bounce.ParseIMAPURL(copies)
			if err != nil {
				return err
			}
			cfg.CopyTo, cfg.CopyMailbox = demoCopyTo, &box
		}
	}

	obs, err := newObservability(ctx, cfg, getenv)
	if err != nil {
		return err
	}
	defer func() {
		// After the server has shut down: flush the spans of the last requests.
		flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := obs.tracing.Shutdown(flushCtx); err != nil {
			logger.Warn("flushing trace spans failed", slog.Any("err", err))
		}
	}()
	var demoMail handlers.DemoMail
	if mailCatcher != nil {
		demoMail = mailCatcher
	}
	app, err := buildPortal(cfg, logger, extraRoutes, obs, languages, demoMail)
	if err != nil {
		return err
	}
	defer app.close()
	engine, h := app.engine, app.handler

	server := &http.Server{
		Handler:           engine,
		ReadHeaderTimeout: 10 * time.Second,
		// No ReadTimeout/WriteTimeout: attachment uploads (PORTAL_UPLOAD_LIMIT, 1 GiB by default) and
		// PDF downloads may take minutes; slow-header attacks are bounded by ReadHeaderTimeout.
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	var metrics *http.Server
	metricsURL := ""
	if obs.registry != nil {
		metrics, metricsURL, err = startMetrics(cfg.MetricsAddr, obs.registry, logger)
		if err != nil {
			return err
		}
	}

	// Starting made garbage that the collector's target would otherwise keep resident for as long
	// as the process runs: the migrations, the catalogues compiled for every language, the
	// templates and routes (about 27 MiB allocated for 7 live). One collection returns it before
	// the first request (docs/performance.md, "Resident memory of the list and the stream").
	debug.FreeOSMemory()

	listenURL := "http://" + listener.Addr().String()
	printBanner(stdout, cfg, listenURL, simulator, metricsURL, mailCatcher != nil)
	logger.Info("portal starting", slog.String("version", version), slog.String("listening_on", listenURL),
		slog.String("public_url", cfg.PublicURL.String()), slog.Any("config", cfg), slog.Bool("tracing", obs.tracing.Enabled()))

	serveErr := make(chan error, 1)
	go func() { serveErr <- server.Serve(listener) }()

	select {
	case err := <-serveErr:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}

	// Graceful shutdown: first tell load balancers (readiness 503), then let requests finish.
	logger.Info("shutting down", slog.Duration("grace", cfg.ShutdownGrace))
	h.SetNotReady()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancel()
	// Batches stop at once, in parallel with the requests' drain: their calls in flight end
	// within the v2 timeout (and their lease's fence), well inside the grace, and each writes
	// its state and releases its lease so another replica resumes it at once.
	jobsDrained := make(chan struct{})
	go func() {
		defer close(jobsDrained)
		if app.jobs != nil {
			app.jobs.Close()
		}
	}()
	// Keep accepting requests while load balancers notice the 503 (never more than half the
	// grace, so in-flight requests keep most of it).
	drain := min(cfg.ShutdownDrain, cfg.ShutdownGrace/2)
	select {
	case <-time.After(drain):
	case <-shutdownCtx.Done():
	}
	if metrics != nil {
		_ = metrics.Shutdown(shutdownCtx)
	}
	if err := server.Shutdown(shutdownCtx); err != nil {
		logger.Warn("requests still running at the end of the grace period were cut", slog.Any("err", err))
	}
	select {
	case <-jobsDrained:
	case <-shutdownCtx.Done():
		logger.Warn("batch jobs still had calls in flight at the end of the grace period; their leases run out and another replica checks those lines")
	}
	logger.Info("portal stopped")
	return nil
}

// portal is the wired portal: its gin engine, the handlers (for readiness on shutdown) and what
// must be closed on exit.
type portal struct {
	engine  *gin.Engine
	handler *handlers.Handler
	auth    *auth.Authenticator
	api     *apiclient.Client
	store   interface{ Close() error } // the session store
	db      *statedb.DB                // the state database (internal/statedb): sessions, people, recent items, the work index
	// stop ends the background work started by background; wg waits for it.
	stop          context.CancelFunc
	backgroundCtx context.Context
	wg            sync.WaitGroup
	jobs          *jobs.Manager
	mail          *outbox.Outbox
	reminders     *inbox.Reminders
	bounces       *bounce.Poller
	copies        *mailcopy.Checker
}

// background runs fn until the portal closes.
func (p *portal) background(fn func(ctx context.Context)) {
	if p.stop == nil {
		p.backgroundCtx, p.stop = context.WithCancel(context.Background())
	}
	p.wg.Go(func() { fn(p.backgroundCtx) })
}

// close releases the portal's background work and connections.
func (p *portal) close() {
	if p.stop != nil {
		p.stop()
		p.wg.Wait()
	}
	if p.reminders != nil {
		p.reminders.Close() // after the scan in flight; a scan cut short runs again (deduplicated)
	}
	if p.bounces != nil {
		p.bounces.Close() // after the poll in flight; one cut short reads on from where it recorded
	}
	if p.copies != nil {
		p.copies.Close() // after the check in flight; one cut short deleted no copy its mail's row did not record
	}
	if p.jobs != nil {
		p.jobs.Close() // after the items in flight; the jobs resume at the next start
	}
	if p.mail != nil {
		p.mail.Close() // after the send in flight has recorded its answer
	}
	if p.auth != nil {
		p.auth.Close()
	}
	if p.store != nil {
		_ = p.store.Close()
	}
	if p.db != nil {
		_ = p.db.Close() // last: the session store and the directory use it
	}
}

// buildPortal wires session store, authentication, API client and handlers onto a gin engine, with
// the metrics and tracing of obs.
func buildPortal(cfg config.Config, logger *slog.Logger, extraRoutes func(*gin.Engine), obs observability, languages *i18n.Bundle, demoMail handlers.DemoMail) (*portal, error) {
	var onStoreError func(string)
	if obs.metrics != nil {
		onStoreError = obs.metrics.StoreErrorHook()
	}
	// The state database first: the session store, the people directory and the recent items
	// live in it (p.close closes it after them).
	db, err := openStateDB(cfg)
	if err != nil {
		return nil, err
	}
	sessionStore, err := newSessionStore(cfg, onStoreError, db)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	// Calls to the identity provider: discovery, keys, and the token requests of sign-in and refresh.
	idpTransport := http.DefaultTransport
	v2Transport := http.RoundTripper(apiclient.NewTransport())
	if obs.metrics != nil {
		idpTransport = obs.metrics.IdPTransport(idpTransport)
		v2Transport = obs.metrics.V2Transport(v2Transport)
	}
	// Tracing outermost: its client span covers the whole call, as the v2 API sees it.
	idpTransport = obs.tracing.IdPTransport(idpTransport)
	v2Transport = obs.tracing.Transport(v2Transport)

	// The job manager is built below (it needs the v2 client); sign-outs reach it through this.
	var jobManager *jobs.Manager
	// The people directory is built below (it needs the state store); sign-ins reach it through this.
	var directory *people.Directory
	// The signature watcher is built below (it needs the v2 client); sign-outs reach it through this.
	var watcher *signwatch.Watcher
	authenticator := auth.New(auth.Config{
		IssuerURL:        cfg.OIDCIssuer,
		ClientID:         cfg.OIDCClientID,
		ClientSecret:     cfg.OIDCClientSecret,
		Scopes:           cfg.OIDCScopes,
		PublicURL:        cfg.PublicURL,
		IdleTimeout:      cfg.SessionIdleTimeout,
		AbsoluteLifetime: cfg.SessionLifetime,
		HTTPClient:       &http.Client{Timeout: 10 * time.Second, Transport: idpTransport},
		// A user whose sessions ended: their batches pause and the tokens they hold are deleted.
		OnSessionsEnded: func(ctx context.Context, subject string) {
			if watcher != nil {
				if err := watcher.Drop(ctx, subject); err != nil {
					logger.Error("deleting the watch token of a signed-out user failed", slog.Any("err", err))
				}
			}
			if jobManager == nil {
				return
			}
			if err := jobManager.PauseOwner(ctx, subject); err != nil {
				logger.Error("pausing the batches of a signed-out user failed", slog.Any("err", err))
			}
		},
		// Who signed in: audits then show their name for their login (internal/people). A store
		// that fails is logged; the sign-in goes on.
		OnSignIn: func(ctx context.Context, who auth.SignedIn) {
			if directory == nil {
				return
			}
			if err := directory.Record(ctx, people.Person{Login: who.Login, Name: who.DisplayName, Email: who.Email}); err != nil {
				logger.WarnContext(ctx, "people directory: sign-in not recorded", slog.Any("err", err))
			}
		},
		RolesClaim: cfg.RolesClaim,
	}, sessionStore, logger) // auth adds component=auth itself
	p := &portal{auth: authenticator, store: sessionStore, db: db}
	fail := func(err error) (*portal, error) {
		p.close()
		return nil, err
	}

	api, err := apiclient.New(cfg.V2APIURL.String(),
		apiclient.WithHTTPClient(&http.Client{
			// Sized for many concurrent users on one v2 host (MaxIdleConnsPerHost 64; shared/RECIPES.md).
			Transport: v2Transport,
			// Never follow a redirect with the user's token.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}),
		apiclient.WithUserAgent("cpq-portal/"+version),
		apiclient.WithTimeout(cfg.V2Timeout),
	)
	if err != nil {
		return fail(fmt.Errorf("PORTAL_V2_API_URL: %w", err))
	}
	p.api = api
	assets, err := web.NewAssets()
	if err != nil {
		return fail(err)
	}
	if err := importLegacyState(cfg, db, logger); err != nil {
		return fail(err)
	}
	// Batch tokens are sealed with keys derived from the session keys (rotated with them).
	sealer, err := session.NewSealer(cfg.SessionKeys, "batch token")
	if err != nil {
		return fail(fmt.Errorf("PORTAL_SESSION_KEYS: %w", err))
	}
	directory = people.New(db, people.Options{})
	jobChanges := watch.NewSignals() // wakes batch progress pages (issue 27)
	// The job kinds besides the batch archive: hand customers over (issue 34).
	handoverKind := &handover.Kind{API: api}
	importKind := &customerimport.Kind{API: api}
	// E-mail (internal/outbox, docs/mail.md): without PORTAL_SMTP_URL the outbox only lists what
	// was sent before, and the pages that would send say e-mail is not configured.
	var sender outbox.Sender
	if cfg.SMTP != nil {
		smtp := outbox.SMTPSender{Server: *cfg.SMTP, From: cfg.SMTPFrom}
		if cfg.BounceMailbox != nil {
			// Bounces go to the envelope sender: the mailbox the portal reads them from.
			smtp.ReturnPath = cmp.Or(cfg.BounceAddress, cfg.SMTPFrom)
		}
		sender = smtp
		logger.Info("e-mail through SMTP", slog.String("server", cfg.SMTP.String()), slog.String("from", cfg.SMTPFrom),
			slog.String("return_path", cmp.Or(smtp.ReturnPath, cfg.SMTPFrom)))
	}
	p.mail = outbox.New(outbox.Options{DB: db, Sender: sender, Retention: cfg.MailRetention, CopyTo: cfg.CopyTo,
		Logger: logger.With(slog.String("component", "outbox"))})
	p.mail.Run()
	// The inbox (internal/inbox, docs/inbox.md): each person's items, written by the jobs' ends,
	// the reminders and (later) the signature watcher; mailed through the outbox by preference.
	inboxStore := inbox.New(inbox.Options{DB: db, Mail: p.mail, I18n: languages, PublicURL: cfg.PublicURL.String(), NewOwner: handover.NewOwner,
		Domain: cfg.PublicURL.Hostname(), Logger: logger.With(slog.String("component", "inbox"))})
	// The work index (docs/work-index.md). A signer's answer it learns, from whoever's read,
	// reaches the inboxes of who created and who last changed the contract.
	work := workindex.New(db, workindex.Options{Retention: cfg.WorkRetention,
		OnAnswer: func(ctx context.Context, s workindex.ContractSighting, ch workindex.Change) {
			tellAnswer(ctx, inboxStore, s, ch, logger)
		}})
	if cfg.WorkRetention > 0 {
		p.background(func(ctx context.Context) { purgeWorkIndex(ctx, work, logger) })
	}
	// What the jobs' lines did reaches the rest of the portal through the engine's Effects: a batch
	// archive's the work index (credited to the batch's owner at the archive's time), an import's
	// and a handover's customers the owner's cached customer list.
	customers := handlers.NewCustomerCache(api, cfg, nil)
	p.jobs = jobs.NewManager(jobs.Options{DB: db, CallTimeout: cfg.V2Timeout, Archiver: jobs.V2{API: api},
		Effects: jobs.AllEffects{worksight.JobEffects{Work: work, Logger: logger.With(slog.String("component", "jobs"))},
			customercache.JobEffects{Cache: customers}},
		Kinds:       map[string]jobs.Kind{jobs.KindHandover: handoverKind, jobs.KindCustomerImport: importKind},
		Concurrency: cfg.BatchConcurrency, Sealer: sealer, Logger: logger.With(slog.String("component", "jobs")),
		OnChange: jobChanges.Notify, OnEnd: inboxStore.JobEnded})
	jobManager = p.jobs
	p.jobs.Run()
	p.reminders = inbox.NewReminders(inbox.ReminderOptions{Store: inboxStore, Work: work, Mail: p.mail,
		Every: cfg.ReminderEvery, DigestEvery: cfg.DigestEvery, SignatureDays: cfg.ReminderSignatureDays,
		ArchiveDays: cfg.ReminderArchiveDays, OfferDays: cfg.ReminderOfferDays, BackofficeRoles: cfg.BackofficeRoles,
		ReadRetention: cfg.InboxReadRetention, UnreadRetention: cfg.InboxUnreadRetention,
		Logger: logger.With(slog.String("component", "inbox"))})
	p.reminders.Run()
	// Bounces (internal/bounce, docs/mail.md "Bounces"): the delivery reports in the bounce
	// mailbox end their mails as bounced and tell the senders.
	if cfg.BounceMailbox != nil && sender != nil {
		p.bounces = bounce.New(bounce.Options{DB: db, Outbox: p.mail, Mailbox: *cfg.BounceMailbox, Every: cfg.BounceEvery,
			OnBounce: func(ctx context.Context, b outbox.Bounced) error { return inboxStore.MailBounced(ctx, work, b) },
			Logger:   logger.With(slog.String("component", "bounce"))})
		logger.Info("bounces read over IMAP", slog.String("mailbox", cfg.BounceMailbox.String()), slog.Duration("every", cfg.BounceEvery))
		p.bounces.Run()
	}
	// The copy check (internal/mailcopy, docs/mail.md "Exactly once: the copy check"): the mails a
	// crash left unknown are confirmed by their copy, or sent again when none arrived.
	if cfg.CopyTo != "" && sender != nil {
		box := cfg.CopyMailbox
		if box == nil {
			box = cfg.BounceMailbox
		}
		p.copies = mailcopy.New(mailcopy.Options{DB: db, Outbox: p.mail, Mailbox: *box, CopyTo: cfg.CopyTo,
			Domain: cfg.PublicURL.Hostname(), Grace: cfg.CopyGrace, Logger: logger.With(slog.String("component", "mailcopy"))})
		logger.Info("mail copies checked over IMAP", slog.String("copy_to", cfg.CopyTo), slog.String("mailbox", box.String()),
			slog.Duration("grace", cfg.CopyGrace))
		p.copies.Run()
	}
	// The signature watcher (internal/signwatch, docs/work-index.md): contracts out for signature
	// are read again with a reader's token until the signer answers. Its tokens are sealed with
	// keys derived from the session keys, like the batches'.
	watchSealer, err := session.NewSealer(cfg.SessionKeys, "watch token")
	if err != nil {
		return fail(fmt.Errorf("PORTAL_SESSION_KEYS: %w", err))
	}
	watcher = signwatch.New(signwatch.Options{DB: db, Work: work, Reader: signwatch.V2Reader{API: api}, Sealer: watchSealer,
		Interval: cfg.WatchInterval, MaxCallsPerMinute: cfg.WatchMaxCallsPerMinute, Concurrency: cfg.BatchConcurrency,
		Logger: logger.With(slog.String("component", "signwatch"))})
	p.background(watcher.Run)
	imports := customerimport.NewStore(db, customerimport.Options{})
	p.background(func(ctx context.Context) { purgeCustomerImports(ctx, imports, logger) })
	deps := handlers.Deps{
		Imports:     imports,
		Mail:        p.mail,
		Watch:       watcher,
		DemoMail:    demoMail,
		Inbox:       inboxStore,
		Recent:      recent.New(db, nil),
		SavedViews:  savedviews.New(db, nil),
		Work:        work,
		People:      directory,
		Jobs:        p.jobs,
		Customers:   customers,
		JobChanges:  jobChanges,
		Config:      cfg,
		Logger:      logger,
		API:         api,
		Auth:        authenticator,
		Assets:      assets,
		ExtraRoutes: extraRoutes,
		Version:     version,
		I18n:        languages,
	}
	if obs.registry != nil {
		deps.Metrics = obs.registry
	}
	h, err := handlers.New(deps)
	if err != nil {
		return fail(err)
	}
	p.handler = h

	gin.SetMode(gin.ReleaseMode)
	engine := gin.New() // no default logger or recovery: the handlers bring their own
	// Behind a TLS-terminating proxy: X-Forwarded-For is believed only from the configured proxies
	// (none by default), and X-Forwarded-Proto/-Host are never used: cookies' Secure flag, HSTS and
	// every redirect URL derive from PORTAL_PUBLIC_URL alone.
	var proxies []string
	if len(cfg.TrustedProxies) > 0 {
		proxies = cfg.TrustedProxies
	}
	if err := engine.SetTrustedProxies(proxies); err != nil {
		return fail(fmt.Errorf("PORTAL_TRUSTED_PROXIES: %w", err))
	}
	if obs.tracing.Enabled() {
		engine.Use(obs.tracing.Middleware()) // first: every other middleware runs inside the span
	}
	h.Routes(engine)
	p.engine = engine
	return p, nil
}

// closableStore is a session store with connections or files to release.
type closableStore interface {
	session.Store
	Close() error
	Ping(ctx context.Context) error
}

// newSessionStore builds the configured session store and checks that it can be used, so a store
// that is unreachable at start-up is one error naming the setting, not failed sign-ins later. The
// server-side store (the default) and the cookie store's revocation list are in the state database
// db (shared by the replicas of one PostgreSQL).
func newSessionStore(cfg config.Config, onError func(string), db *statedb.DB) (closableStore, error) {
	opts := session.Options{
		Keys:             cfg.SessionKeys,
		Secure:           cfg.PublicURL.Scheme == "https",
		AbsoluteLifetime: cfg.SessionLifetime,
		OnError:          onError,
	}
	if _, err := session.NewCookieStore(opts); err != nil {
		return nil, fmt.Errorf("PORTAL_SESSION_KEYS: %w", err)
	}
	var (
		store   closableStore
		err     error
		setting = stateDBSetting(cfg)
	)
	switch cfg.SessionStore {
	case config.SessionStoreCookie:
		// The revocation list of signed-out token ids: in the state database (it survives restarts,
		// and replicas on one PostgreSQL share it).
		store, err = session.NewCookieStore(opts, session.CookieOptions{RevocationDB: db})
	default:
		store, err = session.NewSQLStore(opts, db)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", setting, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := store.Ping(ctx); err != nil {
		_ = store.Close()
		return nil, fmt.Errorf("%s: the session store cannot be used: %w", setting, err)
	}
	return store, nil
}

// legacyStateStore opens the previous version's key-value store, which the one-time import reads
// (internal/stateimport): Redis whenever PORTAL_REDIS_URL is set, else the bbolt file in
// <PORTAL_DATA_DIR>/state when there is one (false: nothing to import).
func legacyStateStore(cfg config.Config, logger *slog.Logger) (store.Store, bool, error) {
	if cfg.RedisURL != "" {
		// go-redis keeps one logger per process: set only when this import uses Redis (once per
		// upgrade), its messages join the portal's log.
		redis.SetLogger(store.RedisLogger(logger))
		st, err := store.NewRedis(cfg.RedisURL, "cpq:state:")
		if err != nil {
			return nil, false, fmt.Errorf("PORTAL_REDIS_URL: %w", err)
		}
		return st, true, nil
	}
	path := filepath.Join(cfg.DataDir, "state", "portal.db")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	st, err := store.OpenBolt(path)
	if err != nil {
		return nil, false, fmt.Errorf("PORTAL_DATA_DIR: %w", err)
	}
	return st, true, nil
}

// stateDBSetting names the setting that locates the state database, for messages.
func stateDBSetting(cfg config.Config) string {
	if cfg.DatabaseURL != "" {
		return "PORTAL_DATABASE_URL"
	}
	return "PORTAL_DATA_DIR"
}

// openStateDB opens the state database (internal/statedb) and applies its migrations: PostgreSQL
// when PORTAL_DATABASE_URL is set (several replicas share it), else SQLite in
// <PORTAL_DATA_DIR>/state.
func openStateDB(cfg config.Config) (*statedb.DB, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts := statedb.Options{URL: cfg.DatabaseURL, Dir: filepath.Join(cfg.DataDir, "state")}
	if cfg.DatabaseURL != "" {
		opts.MaxOpenConns = cfg.DatabaseConns
	}
	db, err := statedb.Open(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", stateDBSetting(cfg), err)
	}
	return db, nil
}

// importLegacyState carries what an older portal kept in its key-value store (the work index,
// people, recent items, batch jobs) into the state database, once (internal/stateimport).
func importLegacyState(cfg config.Config, db *statedb.DB, logger *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if done, err := stateimport.Done(ctx, db); err != nil || done {
		return err
	}
	old, ok, err := legacyStateStore(cfg, logger)
	if err != nil || !ok {
		return err
	}
	defer old.Close()
	counts, err := stateimport.Import(ctx, old, db)
	if err != nil {
		return fmt.Errorf("importing the previous version's state into %s: %w", db, err)
	}
	if !counts.AlreadyDone && counts.WorkRows+counts.People+counts.RecentItems+counts.Jobs > 0 {
		logger.Info("the previous version's state was imported into the state database", slog.Int("work_rows", counts.WorkRows),
			slog.Int("viewers", counts.Viewers), slog.Int("people", counts.People), slog.Int("recent_items", counts.RecentItems),
			slog.Int("batch_jobs", counts.Jobs), slog.Int("batch_lines", counts.JobLines),
			slog.Int("damaged_documents_skipped", counts.Skipped))
	}
	return nil
}

// newLogger returns the process logger: JSON (production) or text (demo), with the request id
// (handlers.NewLogHandler) and, when tracing, trace_id and span_id (telemetry.LogHandler) added from
// the context of every request.
func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	var h slog.Handler = slog.NewJSONHandler(w, opts)
	if cfg.LogFormat == config.LogFormatText {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(handlers.NewLogHandler(telemetry.LogHandler(h)))
}

// demoIdPMount is where the embedded OpenID provider is served (its issuer is PUBLIC_URL + this).
const demoIdPMount = "/idp"

// newDemoProvider builds the embedded OpenID provider with the portal as its one client.
func newDemoProvider(cfg config.Config, languages *i18n.Bundle) (*demoidp.Provider, error) {
	public := cfg.PublicURL.String()
	if err := os.MkdirAll(demoDir(cfg.DataDir), 0o700); err != nil {
		return nil, fmt.Errorf("PORTAL_DATA_DIR: %w", err)
	}
	provider, err := demoidp.New(demoidp.Options{
		Issuer:                 cfg.OIDCIssuer,
		ClientID:               cfg.OIDCClientID,
		ClientSecret:           cfg.OIDCClientSecret,
		RedirectURIs:           []string{public + "/auth/callback"},
		PostLogoutRedirectURIs: []string{public + "/auth/logged-out"},
		BackChannelLogoutURI:   public + auth.BackChannelLogoutPath,
		AccessTokenTTL:         cfg.DemoTokenTTL,
		// Kept in the data directory, so access tokens issued before a restart still verify.
		KeyFile:   filepath.Join(demoDir(cfg.DataDir), "idp-signing-key.pem"),
		Languages: languages,
	})
	if err != nil {
		return nil, fmt.Errorf("demo OpenID provider: %w", err)
	}
	return provider, nil
}

// demoSimulator is the embedded v2 simulator and its loopback server.
type demoSimulator struct {
	sim    *v2sim.Server
	server *http.Server
	url    *url.URL
}

// demoDeclineEvery makes every third demo signature request a decline.
const demoDeclineEvery = 3

// startSimulator starts the v2 simulator on a free loopback port. It verifies the tokens of the
// configured issuer (the embedded provider, or an external one given with -demo).
func startSimulator(cfg config.Config, logger *slog.Logger) (*demoSimulator, error) {
	sim := v2sim.New(v2sim.Options{
		Admin:            cfg.DemoSimAdmin,
		IssuerURL:        cfg.OIDCIssuer,
		Customers:        cfg.DemoCustomers,
		RestrictToOwners: cfg.DemoRestrictToOwners,
		// Demo signers answer by themselves, every third with a decline, so a demo shows whole deals.
		Signers: v2sim.AutoSigners{Delay: cfg.DemoSignerDelay, DeclineEvery: demoDeclineEvery},
		Logger:  logger.With(slog.String("component", "v2sim")),
	})
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = sim.Close()
		return nil, fmt.Errorf("v2 simulator: %w", err)
	}
	server := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("v2 simulator stopped", slog.Any("err", err))
		}
	}()
	return &demoSimulator{sim: sim, server: server, url: &url.URL{Scheme: "http", Host: listener.Addr().String()}}, nil
}

func (d *demoSimulator) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = d.server.Shutdown(ctx)
	_ = d.sim.Close()
}

// printBanner tells a person (and the e2e harness) where the portal listens, and the public URL
// browsers use (a proxy's, when PORTAL_PUBLIC_URL names one).
func printBanner(w io.Writer, cfg config.Config, listenURL string, simulator *demoSimulator, metricsURL string, demoMail bool) {
	fmt.Fprintf(w, "portal listening on %s\n", listenURL)
	fmt.Fprintf(w, "portal public URL %s\n", cfg.PublicURL)
	if metricsURL != "" {
		fmt.Fprintf(w, "metrics listening on %s\n", metricsURL)
	}
	if !cfg.Demo {
		return
	}
	fmt.Fprintf(w, "\nCPQ Portal demo %s\n", version)
	fmt.Fprintf(w, "  open:            %s\n", cfg.PublicURL)
	if cfg.DemoIdP {
		fmt.Fprintf(w, "  sign in as:      ")
		for i, u := range demoidp.DemoUsers() {
			if i > 0 {
				fmt.Fprint(w, "   or   ")
			}
			fmt.Fprintf(w, "%s / %s", u.Username, u.Password)
		}
		fmt.Fprintf(w, "\n  OpenID provider: %s\n", cfg.OIDCIssuer)
	} else {
		fmt.Fprintf(w, "  OpenID provider: %s (external)\n", cfg.OIDCIssuer)
	}
	if simulator != nil {
		fmt.Fprintf(w, "  v2 simulator:    %s (%d customers)\n", simulator.url, cfg.DemoCustomers)
		if cfg.DemoRestrictToOwners {
			fmt.Fprintln(w, "  restricted:      each user sees only the customers they own (sales, teamlead); backoffice sees all")
		}
		if cfg.DemoSignerDelay > 0 {
			fmt.Fprintf(w, "  signers:         answer %s after a signature request, every third declines (PORTAL_DEMO_SIGNER_DELAY)\n", cfg.DemoSignerDelay)
		}
	} else {
		fmt.Fprintf(w, "  v2 API:          %s\n", cfg.V2APIURL)
	}
	if demoMail {
		fmt.Fprintf(w, "  sent mail:       %s (the demo's own mail server; set PORTAL_SMTP_URL for a real one)\n",
			strings.TrimSuffix(cfg.PublicURL.String(), "/")+"/demo/mail")
	}
	fmt.Fprintln(w)
}

// demoMailFrom is the From address of the demo's e-mail.
const demoMailFrom = "portal@demo.example"

// demoCopyTo is the copy address of the demo's e-mail (its copy mailbox is the demo mail server's).
const demoCopyTo = "portal-copies@demo.example"
