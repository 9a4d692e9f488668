// Package auth signs users in with OpenID Connect (authorization code flow with PKCE S256, state and
// nonce), keeps their tokens fresh, and signs them out. It knows nothing of pages or v2 calls: pages it
// must show (callback errors, "signed out") go through a renderer the handlers package provides
// (SetPageRenderer).
//
// Routes (registered by the handlers package):
//
//	GET  /auth/login?return_to=/path   Login
//	GET  /auth/callback                Callback
//	POST /auth/logout                  Logout
//	GET  /auth/logged-out              LoggedOut
//	POST /auth/logout-everywhere       LogoutEverywhere
//	POST /auth/backchannel-logout      BackChannelLogout (server to server, no cross-origin check)
//
// Sessions are read and written through the store's gorilla/sessions interface (session.Load, Save,
// Delete); its registry ends other sessions (Sessions, RevokeSession, RevokeOtherSessions for the
// sessions page, and back-channel logout).
//
// and RequireLogin() on every page and htmx route that needs a user.
package auth

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gin-gonic/gin"
	"github.com/gorilla/securecookie"
	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"

	"github.com/cpqportal/portal/internal/session"
)

// Defaults for Config.
const (
	DefaultIdleTimeout   = time.Hour
	DefaultRefreshBefore = 60 * time.Second
)

// Paths of the auth routes.
const (
	LoginPath     = "/auth/login"
	CallbackPath  = "/auth/callback"
	LogoutPath    = "/auth/logout"
	LoggedOutPath = "/auth/logged-out"
)

// Errors of ForceRefresh.
var (
	// ErrNotSignedIn: the request has no session (RequireLogin did not run).
	ErrNotSignedIn = errors.New("auth: not signed in")
	// ErrSessionEnded: the identity provider refused to refresh (revoked, expired, signed out elsewhere);
	// the session has been cleared and the user must sign in again (see Unauthenticated).
	ErrSessionEnded = errors.New("auth: session ended, sign in again")
	// ErrProviderUnavailable: the identity provider could not be reached or is not discovered yet.
	ErrProviderUnavailable = errors.New("auth: identity provider unavailable")
)

// Config configures the Authenticator.
type Config struct {
	// IssuerURL is the OpenID provider (discovery at IssuerURL/.well-known/openid-configuration).
	IssuerURL, ClientID, ClientSecret string
	// Scopes default to openid profile email offline_access (offline_access asks for a refresh token).
	Scopes []string
	// PublicURL is the portal's external URL: redirect_uri = PublicURL + /auth/callback, post-logout
	// redirect = PublicURL + /auth/logged-out; https makes the login cookies Secure.
	PublicURL *url.URL
	// IdleTimeout (default 1 h) ends a session without requests; AbsoluteLifetime (default
	// session.DefaultAbsoluteLifetime) ends any session; RefreshBefore (default 60 s) refreshes the access
	// token that long before it expires.
	IdleTimeout, AbsoluteLifetime, RefreshBefore time.Duration
	// HTTPClient talks to the identity provider (default: 10 s timeout).
	HTTPClient *http.Client
	// Now is the clock (default time.Now); tests move it to make tokens and sessions look old.
	Now func() time.Time
	// OnSessionsEnded, when set, is told the subject of a user whose sessions were ended: sign-out,
	// "sign out everywhere", back-channel logout, a session revoked from the sessions page, a
	// refresh the provider refused. The portal pauses that user's batch jobs and deletes the
	// tokens they hold (internal/jobs). It runs after the sessions ended, with a context that
	// outlives the request.
	OnSessionsEnded func(ctx context.Context, subject string)
	// OnSignIn, when set, is told who signed in, after the session is saved: their login, display
	// name and e-mail as the provider gives them (never a token or the subject). The portal keeps
	// them so audits show people's names for logins (internal/people). It runs before the
	// redirect, so it must be quick and must not fail the sign-in (it returns nothing).
	OnSignIn func(ctx context.Context, who SignedIn)
	// RolesClaim names the ID token claim with the user's roles, a dotted path for nested claims
	// (roles, groups, realm_access.roles); "roles" when empty.
	RolesClaim string
}

// User is the signed-in user.
type User struct {
	Subject, Name, Email string
}

// SignedIn is who just signed in, as Config.OnSignIn is told.
type SignedIn struct {
	// Login is the preferred_username claim ("" when the provider gives none).
	Login string
	// DisplayName is the name claim, else given_name and family_name ("" when the provider gives
	// none of them: a login or an e-mail address is not a display name).
	DisplayName string
	// Email is the email claim; "" when the provider says it is not verified (email_verified false).
	Email string
}

// PageRenderer renders a full page with a title, a message and one link (for example "Try again").
type PageRenderer func(c *gin.Context, status int, title, message, linkURL, linkText string)

// Authenticator runs sign-in, refresh and sign-out.
type Authenticator struct {
	cfg       Config
	configErr error
	store     session.Store // gorilla/sessions' Store plus the portal's registry
	logger    *slog.Logger

	secure      bool // cookies Secure (PublicURL is https)
	loginCodecs []securecookie.Codec

	provider    atomic.Pointer[discovered]
	discoverMu  sync.Mutex
	stop        context.CancelFunc
	discoveryWG sync.WaitGroup

	refreshes singleflight.Group
	rotated   rotationCache

	renderer     atomic.Pointer[PageRenderer]
	defaultPage  *template.Template
	callbackURL  string
	loggedOutURL string
}

// discovered is what discovery yields.
type discovered struct {
	provider *oidc.Provider
	oauth    oauth2.Config
	// verifier checks ID tokens at sign-in (issuer, audience, expiry, signature); refreshVerifier the ID
	// tokens of refresh responses, which come straight from the token endpoint.
	verifier, refreshVerifier *oidc.IDTokenVerifier
	// logoutVerifier checks back-channel logout tokens; its keys are refetched at most once a
	// minute (jwksThrottle), whatever forged tokens arrive.
	logoutVerifier *oidc.IDTokenVerifier
	endSession     string
}

// New returns the Authenticator and starts discovery in the background, retried with backoff: the
// provider may be in the same process and not listening yet. Ready reports when it is done; requests
// that need the provider before then try once more themselves.
func New(cfg Config, store session.Store, logger *slog.Logger) *Authenticator {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = []string{oidc.ScopeOpenID, "profile", "email", oidc.ScopeOfflineAccess}
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.AbsoluteLifetime <= 0 {
		cfg.AbsoluteLifetime = session.DefaultAbsoluteLifetime
	}
	if cfg.RefreshBefore <= 0 {
		cfg.RefreshBefore = DefaultRefreshBefore
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &Authenticator{
		cfg:         cfg,
		store:       store,
		logger:      logger.With("component", "auth"),
		defaultPage: template.Must(template.New("page").Parse(defaultPageHTML)),
		rotated:     rotationCache{entries: map[string]rotationEntry{}},
	}
	switch {
	case cfg.IssuerURL == "" || cfg.ClientID == "":
		a.configErr = errors.New("auth: issuer URL and client id are required")
	case cfg.PublicURL == nil || cfg.PublicURL.Host == "" || (cfg.PublicURL.Scheme != "http" && cfg.PublicURL.Scheme != "https"):
		a.configErr = errors.New("auth: the public URL must be an absolute http(s) URL")
	}
	if a.configErr != nil {
		a.logger.Error("sign-in is misconfigured", "err", a.configErr)
		return a
	}
	base := strings.TrimSuffix(cfg.PublicURL.String(), "/")
	a.callbackURL = base + CallbackPath
	a.loggedOutURL = base + LoggedOutPath
	a.secure = cfg.PublicURL.Scheme == "https"

	// Login attempts are sealed with keys derived from the session keys (so every instance behind a
	// load balancer can read them).
	a.loginCodecs = store.Codecs("login", loginAttemptTTL)

	ctx, cancel := context.WithCancel(context.Background())
	a.stop = cancel
	a.discoveryWG.Add(1)
	go a.discoverInBackground(ctx)
	return a
}

// Close stops background discovery (tests; a server simply exits).
func (a *Authenticator) Close() {
	if a.stop != nil {
		a.stop()
	}
	a.discoveryWG.Wait()
}

// Ready reports whether discovery has completed.
func (a *Authenticator) Ready() bool { return a.provider.Load() != nil }

// SetPageRenderer sets how auth pages are rendered (the handlers package passes its layout). Without it
// a minimal escaped HTML page is written.
func (a *Authenticator) SetPageRenderer(render func(c *gin.Context, status int, title, message, linkURL, linkText string)) {
	r := PageRenderer(render)
	a.renderer.Store(&r)
}

func (a *Authenticator) now() time.Time { return a.cfg.Now() }

func (a *Authenticator) discoverInBackground(ctx context.Context) {
	defer a.discoveryWG.Done()
	delay := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		_, err := a.discover(ctx)
		if err == nil {
			return
		}
		if attempt == 1 || attempt%10 == 0 {
			a.logger.Warn("OpenID discovery failed; retrying", "issuer", a.cfg.IssuerURL, "attempt", attempt, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(delay*2, 30*time.Second)
	}
}

// discover runs discovery once unless it has succeeded already.
func (a *Authenticator) discover(ctx context.Context) (*discovered, error) {
	if d := a.provider.Load(); d != nil {
		return d, nil
	}
	if a.configErr != nil {
		return nil, a.configErr
	}
	a.discoverMu.Lock()
	defer a.discoverMu.Unlock()
	if d := a.provider.Load(); d != nil {
		return d, nil
	}
	provider, err := oidc.NewProvider(oidc.ClientContext(ctx, a.cfg.HTTPClient), a.cfg.IssuerURL)
	if err != nil {
		return nil, fmt.Errorf("auth: discovery of %s: %w", a.cfg.IssuerURL, err)
	}
	var extra struct {
		EndSession  string   `json:"end_session_endpoint"`
		AuthMethods []string `json:"token_endpoint_auth_methods_supported"`
	}
	if err := provider.Claims(&extra); err != nil {
		return nil, fmt.Errorf("auth: discovery document: %w", err)
	}
	endpoint := provider.Endpoint()
	// Name the client authentication method instead of letting oauth2 probe: a probe sends a failed
	// request twice (once per method), which would present a refresh token or code a second time.
	endpoint.AuthStyle = oauth2.AuthStyleInHeader // client_secret_basic, the default (OpenID Connect Discovery 1.0, §3)
	if len(extra.AuthMethods) > 0 && !slices.Contains(extra.AuthMethods, "client_secret_basic") &&
		slices.Contains(extra.AuthMethods, "client_secret_post") {
		endpoint.AuthStyle = oauth2.AuthStyleInParams
	}
	d := &discovered{
		provider: provider,
		oauth: oauth2.Config{
			ClientID:     a.cfg.ClientID,
			ClientSecret: a.cfg.ClientSecret,
			Endpoint:     endpoint,
			RedirectURL:  a.callbackURL,
			Scopes:       a.cfg.Scopes,
		},
		verifier:        provider.Verifier(&oidc.Config{ClientID: a.cfg.ClientID, Now: a.cfg.Now}),
		refreshVerifier: provider.Verifier(&oidc.Config{ClientID: a.cfg.ClientID, SkipExpiryCheck: true}),
		endSession:      extra.EndSession,
	}
	if d.logoutVerifier, err = a.logoutVerifier(provider); err != nil {
		return nil, err
	}
	a.provider.Store(d)
	a.logger.Info("OpenID provider discovered", "issuer", a.cfg.IssuerURL, "end_session", d.endSession != "")
	return d, nil
}

// providerNow returns the discovered provider, trying discovery once more (bounded) if needed.
func (a *Authenticator) providerNow(ctx context.Context) (*discovered, error) {
	if d := a.provider.Load(); d != nil {
		return d, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	d, err := a.discover(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrProviderUnavailable, err)
	}
	return d, nil
}

// idpContext carries the IdP HTTP client for oauth2 and go-oidc calls.
func (a *Authenticator) idpContext(ctx context.Context) context.Context {
	return oidc.ClientContext(context.WithValue(ctx, oauth2.HTTPClient, a.cfg.HTTPClient), a.cfg.HTTPClient)
}

// Context keys.
type contextKey int

const sessionKey contextKey = iota

// CurrentSession returns the request's session (set by RequireLogin), or nil.
func CurrentSession(c *gin.Context) *session.Session {
	v, _ := c.Get(sessionKey)
	s, _ := v.(*session.Session)
	return s
}

// CurrentUser returns the signed-in user, or the zero User.
func CurrentUser(c *gin.Context) User {
	s := CurrentSession(c)
	if s == nil {
		return User{}
	}
	return User{Subject: s.Subject, Name: s.Name, Email: s.Email}
}

// CurrentRoles returns the signed-in user's roles (the ID token's roles claim at sign-in,
// Config.RolesClaim), or nil.
func CurrentRoles(c *gin.Context) []string {
	if s := CurrentSession(c); s != nil {
		return s.Roles
	}
	return nil
}

// AccessToken returns the signed-in user's current access token (refreshed if needed), or "".
func AccessToken(c *gin.Context) string {
	if s := CurrentSession(c); s != nil {
		return s.AccessToken
	}
	return ""
}

// SaveSession persists changes the handler made to CurrentSession (for example CPQ session ids). Call it
// before writing the response.
func (a *Authenticator) SaveSession(c *gin.Context) error {
	s := CurrentSession(c)
	if s == nil {
		return ErrNotSignedIn
	}
	if err := session.Save(a.store, c.Writer, c.Request, s); err != nil {
		return fmt.Errorf("auth: save session: %w", err)
	}
	return nil
}
