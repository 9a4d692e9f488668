package demoidp

import (
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// client is the single registered relying party (the portal): a confidential web client using the code
// flow with JWT access tokens and rotating refresh tokens.
type client struct {
	id, secret             string
	backChannelLogoutURI   string
	redirectURIs           []string
	postLogoutRedirectURIs []string
	loginPath              string // absolute path of the login page, including the issuer's path prefix
	idTokenLifetime        time.Duration
}

var _ op.Client = (*client)(nil)

func (c *client) GetID() string                    { return c.id }
func (c *client) RedirectURIs() []string           { return c.redirectURIs }
func (c *client) PostLogoutRedirectURIs() []string { return c.postLogoutRedirectURIs }
func (c *client) ApplicationType() op.ApplicationType {
	return op.ApplicationTypeWeb
}
func (c *client) AuthMethod() oidc.AuthMethod { return oidc.AuthMethodBasic }
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
}

// LoginURL returns where the browser signs in. It must be an absolute path including the issuer's path
// prefix (the provider is mounted under one), or the browser lands on a 404.
func (c *client) LoginURL(authRequestID string) string {
	return c.loginPath + "?authRequestID=" + authRequestID
}

func (c *client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }
func (c *client) IDTokenLifetime() time.Duration      { return c.idTokenLifetime }

// DevMode allows http redirect URIs (demo and tests run on plain http).
func (c *client) DevMode() bool {
	for _, uri := range append(append([]string(nil), c.redirectURIs...), c.postLogoutRedirectURIs...) {
		if strings.HasPrefix(uri, "http://") {
			return true
		}
	}
	return false
}

func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(scopes []string) []string { return scopes }
}

func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(scopes []string) []string { return scopes }
}

// IsScopeAllowed allows no scopes beyond the standard ones.
func (c *client) IsScopeAllowed(string) bool { return false }

// IDTokenUserinfoClaimsAssertion puts name, e-mail and username into the ID token as well, as most
// providers (Dex, Entra ID) do.
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c *client) ClockSkew() time.Duration             { return 0 }
