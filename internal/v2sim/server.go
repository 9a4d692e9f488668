package v2sim

import (
	"errors"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Server is the simulator. It implements http.Handler; build it with New and release it with Close.
type Server struct {
	opts       Options
	logger     *slog.Logger
	now        func() time.Time
	sessionTTL time.Duration
	maxUpload  int64
	memoryCap  int64

	cat    *catalog // read-only after New
	mux    *http.ServeMux
	routes []*route
	admin  http.Handler
	auth   *authenticator
	faults *faultSet
	log    *requestLog

	mu          sync.Mutex
	customers   []*customer // index id-1; customers are never deleted
	taxIndex    map[string]int32
	customerGen uint64
	listCache   struct {
		gen  uint64
		body []byte
		etag string
	}
	sessions         map[string]*cpqSession
	quotes           map[int64]*quote
	quotesByCustomer map[int32][]int64
	contracts        map[int32]*contract
	contractByNumber map[string]*contract
	// archiveConflicts counts second archive calls refused in strict archive mode.
	archiveConflicts int
	spillDir         string
	nextQuoteID      int64
	nextBasketID     int64
	nextNodeID       int64
	nextAttachmentID int32
	nextContractID   int32
	nextSignatureID  int64
	nextAuditID      int64
	nextProfileID    int32
}

// route is one of the 38 endpoints.
type route struct {
	name    string
	pattern string
	session sessionRule
	handle  func(http.ResponseWriter, *http.Request) error
}

// New builds a seeded simulator.
func New(opts Options) *Server {
	if opts.Customers <= 0 {
		opts.Customers = DefaultCustomers
	}
	opts.Customers = min(opts.Customers, MaxCustomers)
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = DefaultSessionTTL
	}
	if opts.MaxUpload <= 0 {
		opts.MaxUpload = DefaultMaxUpload
	}
	if opts.MemoryCap <= 0 {
		opts.MemoryCap = DefaultMemoryCap
	}
	if opts.TempDir == "" {
		opts.TempDir = os.TempDir()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.SignatureExpiry <= 0 {
		opts.SignatureExpiry = DefaultSignatureExpiry
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.UnrestrictedRoles == nil {
		opts.UnrestrictedRoles = []string{DefaultUnrestrictedRole}
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	s := &Server{
		opts:       opts,
		logger:     opts.Logger,
		now:        opts.Now,
		sessionTTL: opts.SessionTTL,
		maxUpload:  opts.MaxUpload,
		memoryCap:  opts.MemoryCap,
		cat:        newCatalog(),
		auth: &authenticator{issuer: strings.TrimSpace(opts.IssuerURL), acceptAny: opts.AcceptAnyToken,
			client: opts.HTTPClient, now: opts.Now},
		faults:           newFaultSet(opts.Faults, opts.Seed),
		log:              newRequestLog(requestLogSize),
		taxIndex:         map[string]int32{},
		sessions:         map[string]*cpqSession{},
		quotes:           map[int64]*quote{},
		quotesByCustomer: map[int32][]int64{},
		contracts:        map[int32]*contract{},
		contractByNumber: map[string]*contract{},
		nextQuoteID:      900001,
		nextBasketID:     700001,
		nextNodeID:       800001,
		nextAttachmentID: 1,
		nextContractID:   1,
		nextSignatureID:  1,
		nextProfileID:    1,
	}
	s.customers = seedCustomers(opts.Customers, opts.Seed, s.cat)
	for _, c := range s.customers {
		s.taxIndex[c.TaxID] = c.ID
		for _, p := range c.Profiles {
			s.nextProfileID = max(s.nextProfileID, p.ID+1)
		}
	}
	s.seedQuotes()
	s.mux = http.NewServeMux()
	s.routes = s.routeTable()
	for _, rt := range s.routes {
		s.mux.Handle(rt.pattern, s.serveRoute(rt))
	}
	if opts.Admin {
		s.admin = s.adminHandler()
	}
	return s
}

// routeTable lists every endpoint of spec sections 4.1 to 4.5 with its endpoint name (the names the request log
// and SetFault use) and its X-SessionId rule.
func (s *Server) routeTable() []*route {
	r := func(name, pattern string, rule sessionRule, h func(http.ResponseWriter, *http.Request) error) *route {
		return &route{name: name, pattern: pattern, session: rule, handle: h}
	}
	return []*route{
		// 4.1 Configuration flow
		r("cpq.list", "GET /v2/cpq/list", sessionForbidden, s.listConfigurators),
		r("cpq.init", "POST /v2/cpq/{cpqId}/customer/{customerId}/init", sessionForbidden, s.initSession),
		r("cpq.addcart", "POST /v2/cpq/{cpqId}/tof/{tofId}/addcart", sessionRequired, s.addCart), // also cpq.addcart_existing
		r("cpq.additem", "POST /v2/cpq/{cpqId}/quote/{quoteId}/basket/{basketId}/parent/{parentId}/additemtocart", sessionRequired, s.addItem),
		r("cpq.removeitem", "DELETE /v2/cpq/{cpqId}/quote/{quoteId}/basket/{basketId}/node/{nodeId}/parent/{parentId}", sessionRequired, s.removeItem),
		r("cpq.removecart", "DELETE /v2/cpq/{cpqId}/quote/{quoteId}/basket/{basketId}", sessionRequired, s.removeCart),
		r("cpq.quantity", "PUT /v2/cpq/{cpqId}/quote/{quoteId}/basket/{basketId}/quantity", sessionRequired, s.changeQuantity),
		r("cpq.validproducts", "GET /v2/cpq/{cpqId}/tof/{tofId}/validproducts", sessionRequired, s.validProducts),
		r("cpq.toflist", "GET /v2/cpq/{cpqId}/customer/{customerId}/quote/{quoteId}/toflist", sessionForbidden, s.tofList),
		r("cpq.discounts", "GET /v2/cpq/{cpqId}/quote/{quoteId}/applicableDiscounts", sessionRequired, s.applicableDiscounts),
		r("cpq.applydiscounts", "PUT /v2/cpq/{cpqId}/quote/{quoteId}/applyDiscounts", sessionRequired, s.applyDiscounts),
		r("cpq.reprice", "PUT /v2/cpq/{cpqId}/quote/{quoteId}/reprice", sessionRequired, s.reprice),
		r("cpq.package.get", "GET /v2/cpq/{cpqId}/tof/{tofId}/package/{quoteId}", sessionRequired, s.getPackages),
		r("cpq.package.add", "POST /v2/cpq/{cpqId}/package", sessionRequired, s.addPackage),
		r("cpq.pricelist", "PUT /v2/cpq/{cpqId}/quote/{quoteId}/changePricelist", sessionRequired, s.changePricelist),
		// 4.2 Attachments and contract generation
		r("attachments.upload", "POST /v2/attachment/file/quote/{quoteId}/attachmentType/{attachmentType}", sessionIgnored, s.uploadAttachment),
		r("attachments.delete", "DELETE /v2/attachment/{attachmentId}/quote/{quoteId}", sessionIgnored, s.deleteAttachment),
		r("attachments.download", "GET /v2/attachment/{attachmentId}/quote/{quoteId}", sessionIgnored, s.downloadAttachment),
		r("contracts.generate", "POST /v2/contract/{quoteId}/generate", sessionIgnored, s.generateContract),
		// 4.3 Contract signature
		r("signature.request", "POST /v2/signature", sessionIgnored, s.requestSignature),
		r("signature.remove", "DELETE /v2/signature", sessionIgnored, s.removeSignature),
		// 4.4 Contract retrieval, archiving and validation audit
		r("contracts.get", "GET /v2/contract/{contractId}", sessionIgnored, s.getContract),
		r("contracts.bynumber", "GET /v2/contract/bycontractnumber/{contractNumber}", sessionIgnored, s.getContractByNumber),
		r("contracts.archive", "GET /v2/contract/contractNumber/{contractNumber}/archive", sessionIgnored, s.archiveContract),
		r("contracts.archivepayload", "GET /v2/contract/digitalarchivepayload/{contractNumber}", sessionIgnored, s.archivePayload),
		r("contracts.audit", "GET /v2/contract/getjsonvalidationaudit/{quoteId}", sessionIgnored, s.auditJSON),
		r("contracts.auditpdf", "GET /v2/contract/downloadvalidationauditpdf/{quoteId}", sessionIgnored, s.auditPDF),
		// 4.5 Customers
		r("customers.get", "GET /v2/customer/{id}", sessionIgnored, s.getCustomer),
		r("customers.list", "GET /v2/customer/{$}", sessionIgnored, s.listCustomers),
		r("customers.onlinesearch", "GET /v2/customer/onlinesearch/{cpqId}", sessionIgnored, s.onlineSearch),
		r("customers.create", "POST /v2/customer", sessionIgnored, s.createCustomer),
		r("customers.update", "PUT /v2/customer", sessionIgnored, s.updateCustomer),
		r("customers.owners.replace", "PUT /v2/customer/{id}/owners", sessionIgnored, s.replaceOwners),
		r("customers.owners.add", "POST /v2/customer/{id}/owner/{ownerId}", sessionIgnored, s.addOwner),
		r("customers.owners.change", "PUT /v2/customer/{id}/owner/change", sessionIgnored, s.changeOwner),
		r("customers.profile.create", "POST /v2/customer/customerprofile", sessionIgnored, s.createProfile),
		r("customers.profile.delete", "DELETE /v2/customer/customerprofile", sessionIgnored, s.deleteProfile),
	}
}

// endpointAddCartExisting is the name of call 4, which shares its path with call 3 and differs by the quoteId
// query parameter.
const endpointAddCartExisting = "cpq.addcart_existing"

// EndpointNames lists the names of all 38 endpoints (call 3 and call 4 share a path but not a name).
func (s *Server) EndpointNames() []string {
	names := make([]string, 0, len(s.routes)+1)
	for _, rt := range s.routes {
		names = append(names, rt.name)
		if rt.name == "cpq.addcart" {
			names = append(names, endpointAddCartExisting)
		}
	}
	return names
}

func (rt *route) nameFor(r *http.Request) string {
	if rt.name == "cpq.addcart" && r.URL.Query().Has("quoteId") {
		return endpointAddCartExisting
	}
	return rt.name
}

// serveRoute runs one endpoint: faults, authentication (A1), the X-SessionId presence rule (R4), the handler,
// and the rendering of its error (A2).
func (s *Server) serveRoute(rt *route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := rt.nameFor(r)
		if rec, ok := w.(*responseRecorder); ok {
			rec.matched = true
			rec.endpoint = name
		}
		if s.faults.apply(w, r, name) {
			return
		}
		id, err := s.auth.authenticate(r)
		if err != nil {
			s.renderError(w, r, err)
			return
		}
		ctx := withActor(r.Context(), id.login)
		if s.opts.RestrictToOwners {
			ctx = withScope(ctx, s.scopeFor(id))
		}
		r = r.WithContext(ctx)
		if err := checkSessionHeader(r, rt.session); err != nil {
			s.renderError(w, r, err)
			return
		}
		if err := rt.handle(w, r); err != nil {
			s.renderError(w, r, err)
		}
	})
}

// renderError answers err once: an *apiError as its A2 body, anything else as 500 INTERNAL.
func (s *Server) renderError(w http.ResponseWriter, r *http.Request, err error) {
	if rec, ok := w.(*responseRecorder); ok && rec.wroteHeader {
		s.logger.Debug("v2sim: error after the answer started", "path", r.URL.Path, "err", err)
		return
	}
	var apiErr *apiError
	if !errors.As(err, &apiErr) {
		s.logger.Error("v2sim: internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		apiErr = newError(http.StatusInternalServerError, codeInternal, "internal simulator error")
	}
	writeErrorBody(w, r, apiErr)
}

// ServeHTTP serves the v2 API (and /_sim/ when Options.Admin is set).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.admin != nil && strings.HasPrefix(r.URL.Path, "/_sim/") {
		s.admin.ServeHTTP(w, r)
		return
	}
	if strings.HasPrefix(r.URL.Path, signingPathPrefix) {
		s.serveSigningPage(w, r) // the signer's page: no token, outside the v2 API (signer.go)
		return
	}
	start := time.Now()
	excerpt := captureBody(r)
	rec := &responseRecorder{ResponseWriter: w, r: r}
	rec.record = func() { s.recordRequest(r, rec, excerpt, start) }
	defer func() {
		// A bug in a handler answers 500 INTERNAL with the A2 body rather than a dropped connection; the
		// deliberate abort of the Truncated fault goes on to net/http.
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler { //nolint:errorlint // net/http compares the sentinel the same way
				rec.recordOnce()
				panic(p)
			}
			s.logger.Error("v2sim: handler panic", "method", r.Method, "uri", r.RequestURI, "panic", p, "stack", string(debug.Stack()))
			if !rec.wroteHeader {
				rec.matched = true
				writeErrorBody(rec, r, newError(http.StatusInternalServerError, codeInternal, "internal simulator error"))
			}
		}
		rec.recordOnce() // an answer without a body write (or a panic before one)
	}()
	s.mux.ServeHTTP(rec, r)
}

// recordRequest adds the request to the request log.
func (s *Server) recordRequest(r *http.Request, rec *responseRecorder, excerpt string, start time.Time) {
	s.log.add(RecordedRequest{
		Time: s.now().UTC(), Received: start.UTC(), Method: r.Method, RequestURI: r.RequestURI, EscapedPath: r.URL.EscapedPath(),
		Endpoint: rec.endpoint, Header: r.Header.Clone(), Body: excerpt, Status: rec.status,
	})
	s.logger.Debug("v2sim request", "method", r.Method, "uri", r.RequestURI, "endpoint", rec.endpoint,
		"status", rec.status, "duration", time.Since(start))
}

// lockedJSON runs fn under the state lock, encodes its answer while still holding the lock (documents share
// state), and writes it after releasing the lock so a slow client never blocks the simulator.
func (s *Server) lockedJSON(w http.ResponseWriter, status int, fn func() (any, error)) error {
	var body []byte
	err := s.locked(func() error {
		v, err := fn()
		if err != nil {
			return err
		}
		body, err = marshalJSON(v)
		return err
	})
	if err != nil {
		return err
	}
	return writeJSON(w, status, body)
}

// locked runs fn holding the state lock (released even if fn panics).
func (s *Server) locked(fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn()
}

// stamp is the time written into documents: UTC, whole seconds (RFC 3339).
func (s *Server) stamp() time.Time { return s.now().UTC().Truncate(time.Second) }

// Close removes the temporary files of large attachments.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range s.quotes {
		for _, a := range q.Attachments {
			a.data = nil
		}
	}
	if s.spillDir == "" {
		return nil
	}
	err := os.RemoveAll(s.spillDir)
	s.spillDir = ""
	return err
}

// Summary describes what a simulator serves, for start-up messages.
type Summary struct {
	Endpoints     int
	Configurators int
	TOFs          int
	Products      int
	Owners        int
	Customers     int
	Quotes        int
	Contracts     int
	AuthMode      string
}

// Summary answers counts of what the simulator serves.
func (s *Server) Summary() Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	mode := "any non-empty bearer token (user " + anonymousActor + ")"
	if s.auth.issuer != "" {
		mode = "JWTs verified against " + s.auth.issuer
		if s.auth.acceptAny {
			mode += " (unverifiable tokens accepted as " + anonymousActor + ")"
		}
	}
	return Summary{
		Endpoints: len(s.EndpointNames()), Configurators: len(s.cat.configurators), TOFs: len(s.cat.tofs),
		Products: len(s.cat.products), Owners: len(s.cat.owners), Customers: len(s.customers),
		Quotes: len(s.quotes), Contracts: len(s.contracts), AuthMode: mode,
	}
}

// responseRecorder remembers the status for the request log and turns the mux's own answers (404, 405 and
// path-cleaning redirects, which a strict API does not make) into A2 error bodies.
type responseRecorder struct {
	http.ResponseWriter
	r           *http.Request
	status      int
	wroteHeader bool
	matched     bool // a route handler runs
	intercepted bool // the mux answered; its body is dropped
	endpoint    string
	// record adds the request to the log. It runs once, as the status goes out and before any
	// byte of the answer does, so a client that has its answer always finds its request in the
	// log (Requests), also for streamed answers whose handler returns later.
	record   func()
	recorded bool
}

func (rw *responseRecorder) recordOnce() {
	if !rw.recorded && rw.record != nil {
		rw.recorded = true
		rw.record()
	}
}

func (rw *responseRecorder) WriteHeader(code int) {
	if rw.wroteHeader {
		return
	}
	rw.wroteHeader = true
	if !rw.matched {
		rw.intercepted = true
		e := errNotFound("no v2 endpoint matches %s %s", rw.r.Method, rw.r.URL.EscapedPath())
		if code == http.StatusMethodNotAllowed {
			e = newError(code, codeMethodNotAllowed, "method %s is not allowed on %s (allowed: %s)",
				rw.r.Method, rw.r.URL.EscapedPath(), rw.Header().Get("Allow"))
		} else {
			rw.Header().Del("Allow")
		}
		rw.Header().Del("Location")
		rw.status = e.Status
		rw.recordOnce()
		writeErrorBody(rw.ResponseWriter, rw.r, e)
		return
	}
	rw.status = code
	rw.recordOnce()
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *responseRecorder) Write(p []byte) (int, error) {
	if !rw.wroteHeader {
		rw.WriteHeader(http.StatusOK)
	}
	if rw.intercepted {
		return len(p), nil
	}
	return rw.ResponseWriter.Write(p)
}

// Flush lets the Truncated fault push a partial body out before it drops the connection.
func (rw *responseRecorder) Flush() {
	if f, ok := rw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (rw *responseRecorder) Unwrap() http.ResponseWriter { return rw.ResponseWriter }
