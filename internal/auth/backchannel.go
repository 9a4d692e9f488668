package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/session"
)

// BackChannelLogoutPath receives logout tokens from the OpenID provider (OpenID Connect Back-Channel
// Logout 1.0); register it at the provider as the client's backchannel_logout_uri.
const BackChannelLogoutPath = "/auth/backchannel-logout"

const (
	// backChannelEvent is the member of the logout token's events claim (Back-Channel Logout 1.0, 2.4).
	backChannelEvent = "http://schemas.openid.net/event/backchannel-logout"
	// logoutTokenMaxAge refuses logout tokens issued longer ago than this (their iat), so a token
	// captured once cannot be replayed after its jti has left the replay cache.
	logoutTokenMaxAge = 5 * time.Minute
	// logoutTokenSkew tolerates provider clocks ahead of ours.
	logoutTokenSkew = time.Minute
	// maxLogoutToken bounds the logout_token parameter.
	maxLogoutToken = 16 << 10
)

// errBadLogoutToken is wrapped by every reason a logout token is refused.
var errBadLogoutToken = errors.New("invalid logout token")

// logoutClaims is what a valid logout token names.
type logoutClaims struct {
	Issuer, Subject, ProviderSID, JTI string
}

// BackChannelLogout ends the sessions a logout token names: POST /auth/backchannel-logout with the
// form parameter logout_token, sent by the OpenID provider server to server (no cookies, no browser;
// cross-origin protection lets this one route through, and the token alone decides). The token is
// validated as Back-Channel Logout 1.0 section 2.6 says: a JWT signed with one of the provider's keys
// (go-oidc, the keys of discovery's jwks_uri), iss and aud ours, exp not passed, iat not older than
// five minutes, the back-channel event in events, no nonce (so an ID token is never taken for a logout
// token), sid and/or sub, and a jti not seen before (remembered in the session store, so a replay to
// another replica is refused too). Then every session of that provider session (sid; only those of
// sub when both are given), or every session of the subject (sub alone), ends on every replica.
//
// Answers: 200 (also when no session matched: the user is signed out), 400 with the reason in the log
// and an OAuth-style error body for a refused token, 503 when the provider's keys or the session store
// cannot be reached. Always Cache-Control: no-store.
func (a *Authenticator) BackChannelLogout(c *gin.Context) {
	noStore(c)
	ctx := c.Request.Context()
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxLogoutToken+1024)
	if err := c.Request.ParseForm(); err != nil {
		a.refuseLogoutToken(c, fmt.Errorf("%w: unreadable form: %w", errBadLogoutToken, err))
		return
	}
	claims, err := a.verifyLogoutToken(ctx, c.Request.PostForm.Get("logout_token"))
	switch {
	case errors.Is(err, ErrProviderUnavailable):
		a.logger.ErrorContext(ctx, "back-channel logout: the provider's keys cannot be read", "err", err)
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "temporarily_unavailable"})
		return
	case err != nil:
		a.refuseLogoutToken(c, err)
		return
	}
	// The jti is checked first and remembered only once the sessions ended: a store failure in
	// between answers 503 and the provider's retry of the same token ends them then (remembering
	// first would refuse that retry as a replay and leave the sessions alive).
	jtiKey := "logout-jti\x00" + claims.Issuer + "\x00" + claims.JTI
	if seen, err := a.seenBefore(ctx, jtiKey); err != nil {
		a.logger.ErrorContext(ctx, "back-channel logout: session store failed", "err", err)
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "temporarily_unavailable"})
		return
	} else if seen {
		a.refuseLogoutToken(c, fmt.Errorf("%w: jti already used (replay)", errBadLogoutToken))
		return
	}
	if claims.ProviderSID != "" {
		err = a.store.RevokeProviderSession(ctx, claims.Subject, claims.ProviderSID)
	} else {
		err = a.store.RevokeSubject(ctx, claims.Subject, "")
	}
	if err != nil {
		a.logger.ErrorContext(ctx, "back-channel logout: ending the sessions failed", "subject", claims.Subject, "err", err)
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "temporarily_unavailable"})
		return
	}
	if _, err := a.store.Remember(ctx, jtiKey, logoutTokenMaxAge+2*logoutTokenSkew); err != nil {
		// The sessions ended; only the replay cache missed the jti (a replay would end them again).
		a.logger.WarnContext(ctx, "back-channel logout: remembering the jti failed", "err", err)
	}
	a.logger.InfoContext(ctx, "back-channel logout", "subject", claims.Subject, "by_sid", claims.ProviderSID != "")
	a.sessionsEnded(ctx, claims.Subject)
	c.Status(http.StatusOK)
}

func (a *Authenticator) refuseLogoutToken(c *gin.Context, err error) {
	a.logger.WarnContext(c.Request.Context(), "back-channel logout refused", "reason", err.Error())
	c.JSON(http.StatusBadRequest, gin.H{"error": "invalid_request", "error_description": "invalid logout token"})
}

// verifyLogoutToken checks raw as Back-Channel Logout 1.0, 2.6 requires (jti replay aside).
func (a *Authenticator) verifyLogoutToken(ctx context.Context, raw string) (logoutClaims, error) {
	if raw == "" {
		return logoutClaims{}, fmt.Errorf("%w: no logout_token parameter", errBadLogoutToken)
	}
	if len(raw) > maxLogoutToken {
		return logoutClaims{}, fmt.Errorf("%w: %d bytes", errBadLogoutToken, len(raw))
	}
	d, err := a.providerNow(ctx)
	if err != nil {
		return logoutClaims{}, err
	}
	// Signature (alg among the provider's, key from its JWKS; "none" is never accepted), iss, aud
	// and exp, as for ID tokens.
	token, err := d.logoutVerifier.Verify(a.idpContext(ctx), raw)
	if err != nil {
		return logoutClaims{}, fmt.Errorf("%w: %w", errBadLogoutToken, err)
	}
	var fields map[string]json.RawMessage
	if err := token.Claims(&fields); err != nil {
		return logoutClaims{}, fmt.Errorf("%w: claims: %w", errBadLogoutToken, err)
	}
	var claims struct {
		JTI    string         `json:"jti"`
		SID    string         `json:"sid"`
		Events map[string]any `json:"events"`
	}
	if err := token.Claims(&claims); err != nil {
		return logoutClaims{}, fmt.Errorf("%w: claims: %w", errBadLogoutToken, err)
	}
	now := a.now()
	switch {
	case token.IssuedAt.IsZero():
		return logoutClaims{}, fmt.Errorf("%w: no iat", errBadLogoutToken)
	case now.Sub(token.IssuedAt) > logoutTokenMaxAge:
		return logoutClaims{}, fmt.Errorf("%w: issued %s ago (iat), more than %s", errBadLogoutToken, now.Sub(token.IssuedAt).Round(time.Second), logoutTokenMaxAge)
	case token.IssuedAt.Sub(now) > logoutTokenSkew:
		return logoutClaims{}, fmt.Errorf("%w: issued in the future (iat)", errBadLogoutToken)
	}
	if _, ok := fields["nonce"]; ok {
		return logoutClaims{}, fmt.Errorf("%w: carries a nonce (an ID token?)", errBadLogoutToken)
	}
	event, ok := claims.Events[backChannelEvent]
	if !ok {
		return logoutClaims{}, fmt.Errorf("%w: events claim lacks %s", errBadLogoutToken, backChannelEvent)
	}
	if _, isObject := event.(map[string]any); !isObject {
		return logoutClaims{}, fmt.Errorf("%w: the back-channel event is not a JSON object", errBadLogoutToken)
	}
	if token.Subject == "" && claims.SID == "" {
		return logoutClaims{}, fmt.Errorf("%w: neither sub nor sid", errBadLogoutToken)
	}
	if claims.JTI == "" {
		return logoutClaims{}, fmt.Errorf("%w: no jti", errBadLogoutToken)
	}
	return logoutClaims{Issuer: token.Issuer, Subject: token.Subject, ProviderSID: claims.SID, JTI: claims.JTI}, nil
}

// seenBefore tells whether key was remembered already, without remembering it.
func (a *Authenticator) seenBefore(ctx context.Context, key string) (bool, error) {
	if r, ok := a.store.(session.Recaller); ok {
		return r.Seen(ctx, key)
	}
	return false, nil
}
