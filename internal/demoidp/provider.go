// Package demoidp is an embedded OpenID provider for demo mode and tests, built on the OpenID-certified
// zitadel/oidc op library with in-memory storage: discovery, JWKS, the authorization code flow with PKCE,
// RS256 JWT access tokens (aud = the client id, with preferred_username, name, email and roles), rotating
// refresh tokens (with offline_access), userinfo and end-session, and OpenID Connect Back-Channel Logout:
// ID tokens carry a sid, and when a user's session ends here (end-session, or EndSessions as an
// administrator would) every provider session of that user ends and the client gets one signed logout
// token per session at its backchannel_logout_uri. Its users are fixed (DemoUsers); its signing key is
// random at every start unless Options.KeyFile keeps it (demo mode keeps it in the data directory, so
// access tokens verify after a restart); everything else (refresh tokens included) is in memory: it is
// not meant for production.
package demoidp

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"

	"github.com/cpqportal/portal/internal/i18n"
)

// Defaults for Options.
const (
	DefaultAccessTokenTTL  = 15 * time.Minute
	DefaultRefreshTokenTTL = 8 * time.Hour
	idTokenLifetime        = time.Hour
)

// Options configures the provider and its single client.
type Options struct {
	// Issuer is the provider's URL, usually with a path prefix: "http://127.0.0.1:8080/idp". The caller
	// mounts Handler under that path with http.StripPrefix.
	Issuer string
	// ClientID and ClientSecret identify the portal.
	ClientID, ClientSecret string
	// RedirectURIs are the allowed callback URLs; PostLogoutRedirectURIs the allowed post-logout URLs.
	RedirectURIs, PostLogoutRedirectURIs []string
	// AccessTokenTTL defaults to 15 minutes, RefreshTokenTTL to 8 hours.
	AccessTokenTTL, RefreshTokenTTL time.Duration
	// ExtraUsers are added to DemoUsers (tests).
	ExtraUsers []User
	// BackChannelLogoutURI is the client's backchannel_logout_uri: when the provider's session ends
	// (end-session, or EndSessions), it POSTs a signed logout token there (Back-Channel Logout 1.0).
	BackChannelLogoutURI string
	// KeyFile keeps the RSA signing key (PEM, 0600), created when missing, so tokens issued before a
	// restart still verify after it (demo mode keeps it in the data directory). "" = a random key.
	KeyFile string
	// HTTPClient sends back-channel logouts (default: 5 s timeout).
	HTTPClient *http.Client
	// Languages are the portal's catalogues, for the login page (default: i18n.Load). The portal
	// passes the bundle it loaded itself, so the catalogues are read once.
	Languages *i18n.Bundle
	// PadAccessTokenTo pads access tokens with a random "pad" claim to about this many bytes, to imitate
	// enterprise providers' large tokens (tests of the cookie size). 0 = no padding.
	PadAccessTokenTo int
}

// Provider is the running provider.
type Provider struct {
	issuer    *url.URL
	storage   *storage
	op        *op.Provider
	loginPage *template.Template
	// languages speaks the login page in the person's language (the portal's preference cookie,
	// else Accept-Language): in demo mode the provider is served by the portal itself.
	languages *i18n.Bundle
	handler   http.Handler
}

// New builds the provider. Nothing listens yet: mount Handler.
func New(opts Options) (*Provider, error) {
	issuer, err := url.Parse(opts.Issuer)
	if err != nil || (issuer.Scheme != "http" && issuer.Scheme != "https") || issuer.Host == "" {
		return nil, fmt.Errorf("demoidp: issuer %q must be an absolute http(s) URL", opts.Issuer)
	}
	issuer.Path = strings.TrimSuffix(issuer.Path, "/")
	opts.Issuer = issuer.String()
	if opts.ClientID == "" || opts.ClientSecret == "" {
		return nil, errors.New("demoidp: client id and secret are required")
	}
	if len(opts.RedirectURIs) == 0 {
		return nil, errors.New("demoidp: at least one redirect URI is required")
	}
	if opts.AccessTokenTTL <= 0 {
		opts.AccessTokenTTL = DefaultAccessTokenTTL
	}
	if opts.RefreshTokenTTL <= 0 {
		opts.RefreshTokenTTL = DefaultRefreshTokenTTL
	}

	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 5 * time.Second}
	}
	c := &client{
		backChannelLogoutURI:   opts.BackChannelLogoutURI,
		id:                     opts.ClientID,
		secret:                 opts.ClientSecret,
		redirectURIs:           opts.RedirectURIs,
		postLogoutRedirectURIs: opts.PostLogoutRedirectURIs,
		loginPath:              issuer.Path + loginPath,
		idTokenLifetime:        idTokenLifetime,
	}
	st, err := newStorage(opts, c, newUserDirectory(append(DemoUsers(), opts.ExtraUsers...)))
	if err != nil {
		return nil, err
	}
	// The key encrypts the library's opaque tokens (we issue JWTs); random per start like the signing key.
	var cryptoKey [32]byte
	if _, err := rand.Read(cryptoKey[:]); err != nil {
		return nil, fmt.Errorf("demoidp: crypto key: %w", err)
	}
	config := &op.Config{
		CryptoKey:             cryptoKey,
		CryptoKeyId:           "demo",
		CodeMethodS256:        true,
		AuthMethodPost:        true,
		GrantTypeRefreshToken: true,
		// Logout tokens with sid go to the client's backchannel_logout_uri (storage.go).
		BackChannelLogoutSupported:        true,
		BackChannelLogoutSessionSupported: true,
		SupportedUILocales:                []language.Tag{language.English},
	}
	var options []op.Option
	if issuer.Scheme == "http" {
		options = append(options, op.WithAllowInsecure())
	}
	provider, err := op.NewProvider(config, st, op.StaticIssuer(opts.Issuer), options...)
	if err != nil {
		return nil, fmt.Errorf("demoidp: %w", err)
	}
	page, err := template.ParseFS(assets, "assets/login.html")
	if err != nil {
		return nil, fmt.Errorf("demoidp: login page: %w", err)
	}
	languages := opts.Languages
	if languages == nil {
		if languages, err = i18n.Load(); err != nil {
			return nil, fmt.Errorf("demoidp: login page: %w", err)
		}
	}
	p := &Provider{issuer: issuer, storage: st, op: provider, loginPage: page, languages: languages}

	mux := http.NewServeMux()
	issuerCtx := op.NewIssuerInterceptor(provider.IssuerFromRequest)
	mux.HandleFunc("GET "+loginPath, p.showLogin)
	mux.Handle("POST "+loginPath, issuerCtx.HandlerFunc(p.checkLogin))
	mux.HandleFunc("GET "+stylesheetPath, serveStylesheet)
	mux.Handle("/", provider)
	p.handler = mux
	return p, nil
}

// Handler serves the provider. Its paths are relative to the issuer's path: mount it with
// http.StripPrefix("/idp", p.Handler()) for the issuer http://host/idp.
func (p *Provider) Handler() http.Handler { return p.handler }

// EndSessions ends every provider session of the user (an administrator signing them out) and
// sends the client a back-channel logout for each.
func (p *Provider) EndSessions(ctx context.Context, username string) error {
	user, ok := p.storage.users.byUsername[normalizeUsername(username)]
	if !ok {
		return errNotFound
	}
	return p.storage.TerminateSession(ctx, user.Subject, p.storage.client.id)
}

// Sign signs claims as a JWT with the provider's key (its JWKS verifies it): logout tokens, and
// hand-made tokens in tests.
func (p *Provider) Sign(claims any) (string, error) { return p.storage.sign(claims) }

// Issuer returns the issuer URL.
func (p *Provider) Issuer() string { return p.issuer.String() }
