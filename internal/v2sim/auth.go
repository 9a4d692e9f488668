package v2sim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// anonymousActor is the acting user when tokens are not verified (docs/v2-assumptions.md A1).
const anonymousActor = "api-user"

// authenticator checks the Authorization header of every v2 call (A1).
type authenticator struct {
	issuer    string
	acceptAny bool
	client    *http.Client
	now       func() time.Time

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
}

// bearerToken answers the token of "Authorization: Bearer <token>" ("" when absent or malformed). The scheme is
// case-insensitive (RFC 9110 section 11.1).
func bearerToken(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// identity is who a request acts for: the login (A1) and the roles the token carries (claim "roles"), which
// RestrictToOwners reads (docs/v2-assumptions.md A13).
type identity struct {
	login string
	roles []string
}

// authenticate answers the acting user: the JWT's preferred_username, else its sub, and its roles, when tokens
// are verified; anonymousActor (no roles) otherwise.
func (a *authenticator) authenticate(r *http.Request) (identity, error) {
	token := bearerToken(r)
	if token == "" {
		return identity{}, newError(http.StatusUnauthorized, codeUnauthorized, "an Authorization: Bearer <token> header is required")
	}
	if a.issuer == "" {
		return identity{login: anonymousActor}, nil
	}
	verifier, err := a.verifierFor(r.Context())
	if err != nil {
		return identity{}, newError(http.StatusServiceUnavailable, "UNAVAILABLE", "the token issuer %s cannot be reached: %v", a.issuer, err)
	}
	idToken, err := verifier.Verify(r.Context(), token)
	if err != nil {
		if a.acceptAny {
			return identity{login: anonymousActor}, nil
		}
		var expired *oidc.TokenExpiredError
		if errors.As(err, &expired) {
			return identity{}, newError(http.StatusUnauthorized, codeInvalidToken, "the access token expired at %s", expired.Expiry.UTC().Format(time.RFC3339))
		}
		return identity{}, newError(http.StatusUnauthorized, codeInvalidToken, "the access token is not valid: %v", err)
	}
	var claims struct {
		PreferredUsername string `json:"preferred_username"`
		Roles             any    `json:"roles"`
	}
	_ = idToken.Claims(&claims)
	id := identity{login: idToken.Subject, roles: stringsOf(claims.Roles)}
	if claims.PreferredUsername != "" {
		id.login = claims.PreferredUsername
	}
	return id, nil
}

// stringsOf reads a claim that is a string or an array of strings (other values are ignored).
func stringsOf(claim any) []string {
	switch v := claim.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// verifierFor runs OpenID discovery on first use, so the issuer may start after the simulator; a failed
// discovery is retried on the next request.
func (a *authenticator) verifierFor(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.verifier != nil {
		return a.verifier, nil
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(context.WithoutCancel(ctx), a.client), 15*time.Second)
	defer cancel()
	provider, err := oidc.NewProvider(ctx, a.issuer)
	if err != nil {
		return nil, fmt.Errorf("oidc discovery: %w", err)
	}
	// Access tokens carry the client id (or an API audience) in aud, which the simulator does not know: it
	// checks the signature, issuer and expiry only.
	a.verifier = provider.Verifier(&oidc.Config{SkipClientIDCheck: true, Now: a.now})
	return a.verifier, nil
}
