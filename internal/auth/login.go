package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gin-gonic/gin"
	"github.com/gorilla/securecookie"
	"golang.org/x/oauth2"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/session"
)

const (
	// loginAttemptTTL bounds the time between "sign in" and the provider's callback.
	loginAttemptTTL = 10 * time.Minute
	// loginCookiePrefix names the per-attempt cookies: portal_login_<8 hex of sha256(state)>.
	loginCookiePrefix = "portal_login_"
	// loginCookiePath limits the attempt cookies to the auth routes.
	loginCookiePath = "/auth/"
	// maxLoginAttempts bounds the attempt cookies one browser keeps (tabs, retries).
	maxLoginAttempts = 5
)

// loginAttempt is one sign-in in progress, sealed in its own short-lived cookie keyed by its state, so
// several tabs can sign in at the same time without overwriting each other.
type loginAttempt struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	ReturnTo string `json:"r"`
	Created  int64  `json:"c"`
}

func (a *Authenticator) loginCookieName(state string) string {
	sum := sha256.Sum256([]byte(state))
	name := loginCookiePrefix + hex.EncodeToString(sum[:4])
	if a.secure {
		// __Host- needs Path=/; __Secure- still forbids plain-http writes.
		return "__Secure-" + name
	}
	return name
}

func (a *Authenticator) loginCookie(name, value string, maxAge int) *http.Cookie {
	cookie := &http.Cookie{
		Name:     name,
		Value:    value,
		Path:     loginCookiePath,
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   a.secure,
		// Lax: the provider's redirect back is a top-level GET navigation, which Lax cookies accompany.
		SameSite: http.SameSiteLaxMode,
	}
	if maxAge < 0 {
		// Max-Age=0 alone is ignored by some clients (curl 7.88 keeps the cookie); a past Expires is not.
		cookie.Expires = time.Unix(1, 0)
	}
	return cookie
}

// Login starts a sign-in: GET /auth/login?return_to=/path redirects to the provider with a fresh state,
// nonce and PKCE S256 challenge.
func (a *Authenticator) Login(c *gin.Context) {
	noStore(c)
	if a.configErr != nil {
		a.renderPage(c, http.StatusInternalServerError, "auth.unavailable.title", i18n.M("auth.misconfigured.message"), "", "")
		return
	}
	if why := signedOutReason(c.Query("reason")); !why.IsZero() {
		// Say why the person was signed out; the link goes on to the identity provider.
		a.renderPage(c, http.StatusOK, "auth.signed_out.title", why, loginURL(safeReturnTo(c.Query("return_to")), ""), "auth.link.sign_in_again")
		return
	}
	d, err := a.providerNow(c.Request.Context())
	if err != nil {
		a.logger.WarnContext(c.Request.Context(), "sign-in: provider unavailable", "err", err)
		a.renderPage(c, http.StatusServiceUnavailable, "auth.unavailable.title", i18n.M("auth.unavailable.message"),
			LoginPath+"?"+url.Values{"return_to": {safeReturnTo(c.Query("return_to"))}}.Encode(), "auth.link.try_again")
		return
	}
	attempt := loginAttempt{
		State:    rand.Text(),
		Nonce:    rand.Text(),
		Verifier: oauth2.GenerateVerifier(),
		ReturnTo: safeReturnTo(c.Query("return_to")),
		Created:  a.now().Unix(),
	}
	plain, err := json.Marshal(attempt)
	if err != nil {
		a.fail(c, http.StatusInternalServerError, "sign-in: encode attempt", err, "/")
		return
	}
	name := a.loginCookieName(attempt.State)
	sealed, err := securecookie.EncodeMulti(name, plain, a.loginCodecs...)
	if err != nil {
		a.fail(c, http.StatusInternalServerError, "sign-in: seal attempt", err, "/")
		return
	}
	a.pruneLoginAttempts(c)
	http.SetCookie(c.Writer, a.loginCookie(name, sealed, int(loginAttemptTTL/time.Second)))
	target := d.oauth.AuthCodeURL(attempt.State, oidc.Nonce(attempt.Nonce), oauth2.S256ChallengeOption(attempt.Verifier))
	c.Redirect(http.StatusFound, target)
}

// pruneLoginAttempts expires the oldest attempt cookies so a browser never holds more than
// maxLoginAttempts (including the one being added).
func (a *Authenticator) pruneLoginAttempts(c *gin.Context) {
	type held struct {
		name    string
		created int64
	}
	var attempts []held
	for _, cookie := range c.Request.Cookies() {
		if !strings.Contains(cookie.Name, loginCookiePrefix) {
			continue
		}
		var created int64 // undecodable cookies count as oldest
		var plain []byte
		if securecookie.DecodeMulti(cookie.Name, cookie.Value, &plain, a.loginCodecs...) == nil {
			var attempt loginAttempt
			if json.Unmarshal(plain, &attempt) == nil {
				created = attempt.Created
			}
		}
		attempts = append(attempts, held{cookie.Name, created})
	}
	if len(attempts) < maxLoginAttempts {
		return
	}
	sort.Slice(attempts, func(i, j int) bool { return attempts[i].created < attempts[j].created })
	for _, old := range attempts[:len(attempts)-maxLoginAttempts+1] {
		http.SetCookie(c.Writer, a.loginCookie(old.name, "", -1))
	}
}

// Callback completes a sign-in: GET /auth/callback?code=...&state=... from the provider. Every failure
// (unknown or reused state, the provider's error, a rejected or replayed code, a bad ID token or nonce)
// shows a 400 page with "Try again".
func (a *Authenticator) Callback(c *gin.Context) {
	noStore(c)
	ctx := c.Request.Context()
	query := c.Request.URL.Query()
	attempt, found := a.takeLoginAttempt(c, query.Get("state"))
	retry := LoginPath
	if found {
		retry += "?" + url.Values{"return_to": {attempt.ReturnTo}}.Encode()
	}

	if providerErr := query.Get("error"); providerErr != "" {
		description := query.Get("error_description")
		if description == "" {
			description = providerErr
		}
		a.logger.InfoContext(ctx, "sign-in: provider returned an error", "error", providerErr, "description", description)
		a.renderPage(c, http.StatusBadRequest, "auth.failed.title", i18n.M("auth.failed.idp_refused", description), retry, "auth.link.try_again")
		return
	}
	if !found {
		a.logger.InfoContext(ctx, "sign-in: callback with unknown, expired or reused state")
		a.renderPage(c, http.StatusBadRequest, "auth.failed.title", i18n.M("auth.failed.unknown_attempt"), retry, "auth.link.try_again")
		return
	}
	code := query.Get("code")
	if code == "" {
		a.renderPage(c, http.StatusBadRequest, "auth.failed.title", i18n.M("auth.failed.no_code"), retry, "auth.link.try_again")
		return
	}
	d, err := a.providerNow(ctx)
	if err != nil {
		a.fail(c, http.StatusServiceUnavailable, "sign-in: provider unavailable", err, retry)
		return
	}

	token, err := d.oauth.Exchange(a.idpContext(ctx), code, oauth2.VerifierOption(attempt.Verifier))
	if err != nil {
		var retrieveErr *oauth2.RetrieveError
		if errors.As(err, &retrieveErr) && retrieveErr.Response != nil && retrieveErr.Response.StatusCode < 500 {
			a.logger.InfoContext(ctx, "sign-in: code rejected", "err", err)
			a.renderPage(c, http.StatusBadRequest, "auth.failed.title", i18n.M("auth.failed.code_rejected"), retry, "auth.link.try_again")
			return
		}
		a.fail(c, http.StatusBadGateway, "sign-in: code exchange", err, retry)
		return
	}
	rawIDToken, _ := token.Extra("id_token").(string)
	if rawIDToken == "" {
		a.fail(c, http.StatusBadGateway, "sign-in: no ID token in the token response", errors.New("missing id_token"), retry)
		return
	}
	idToken, err := d.verifier.Verify(a.idpContext(ctx), rawIDToken)
	if err != nil {
		a.logger.WarnContext(ctx, "sign-in: ID token rejected", "err", err)
		a.renderPage(c, http.StatusBadRequest, "auth.failed.title", i18n.M("auth.failed.unverified"), retry, "auth.link.try_again")
		return
	}
	if subtle.ConstantTimeCompare([]byte(idToken.Nonce), []byte(attempt.Nonce)) != 1 {
		a.logger.WarnContext(ctx, "sign-in: nonce mismatch")
		a.renderPage(c, http.StatusBadRequest, "auth.failed.title", i18n.M("auth.failed.wrong_attempt"), retry, "auth.link.try_again")
		return
	}
	if idToken.AccessTokenHash != "" {
		if err := idToken.VerifyAccessToken(token.AccessToken); err != nil {
			a.logger.WarnContext(ctx, "sign-in: at_hash mismatch", "err", err)
			a.renderPage(c, http.StatusBadRequest, "auth.failed.title", i18n.M("auth.failed.unverified"), retry, "auth.link.try_again")
			return
		}
	}
	user, who, err := a.userFromTokens(c, d, idToken, token)
	if err != nil {
		a.fail(c, http.StatusBadGateway, "sign-in: user profile", err, retry)
		return
	}

	var sidClaim struct {
		SID string `json:"sid"`
	}
	_ = idToken.Claims(&sidClaim) // absent: the provider has no session id to send back-channel logouts for
	now := a.now()
	s := &session.Session{
		ProviderSID:  sidClaim.SID,
		UserAgent:    c.Request.UserAgent(),
		ClientIP:     c.ClientIP(),
		Subject:      user.Subject,
		Name:         user.Name,
		Email:        user.Email,
		Roles:        a.rolesOf(idToken),
		AccessToken:  token.AccessToken,
		RefreshToken: token.RefreshToken,
		IDToken:      rawIDToken,
		TokenExpiry:  a.expiryOf(token),
		CreatedAt:    now,
		LastSeen:     now,
	}
	if err := session.Save(a.store, c.Writer, c.Request, s); errors.Is(err, session.ErrSessionTooLarge) {
		a.fail(c, http.StatusInternalServerError, "sign-in: save session", err, retry)
		return
	} else if err != nil {
		// The store is unreachable (the state database down, data directory gone): a moment later it may work.
		a.logger.ErrorContext(ctx, "sign-in: saving the session failed", "err", err)
		a.renderPage(c, http.StatusServiceUnavailable, "auth.store_unavailable.title", i18n.M("auth.store_unavailable.sign_in"), retry, "auth.link.try_again")
		return
	}
	a.logger.InfoContext(ctx, "signed in", "subject", s.Subject)
	if a.cfg.OnSignIn != nil {
		a.cfg.OnSignIn(ctx, who)
	}
	c.Redirect(http.StatusSeeOther, attempt.ReturnTo)
}

// takeLoginAttempt finds, checks and clears the attempt cookie of state. A state is good once: the
// cookie is deleted whatever happens next.
func (a *Authenticator) takeLoginAttempt(c *gin.Context, state string) (loginAttempt, bool) {
	if state == "" || len(state) > 512 {
		return loginAttempt{}, false
	}
	name := a.loginCookieName(state)
	cookie, err := c.Request.Cookie(name)
	if err != nil {
		return loginAttempt{}, false
	}
	http.SetCookie(c.Writer, a.loginCookie(name, "", -1))
	var plain []byte
	if err := securecookie.DecodeMulti(name, cookie.Value, &plain, a.loginCodecs...); err != nil {
		return loginAttempt{}, false
	}
	var attempt loginAttempt
	if err := json.Unmarshal(plain, &attempt); err != nil {
		return loginAttempt{}, false
	}
	if subtle.ConstantTimeCompare([]byte(attempt.State), []byte(state)) != 1 {
		return loginAttempt{}, false
	}
	if a.now().Sub(time.Unix(attempt.Created, 0)) > loginAttemptTTL {
		return loginAttempt{}, false
	}
	attempt.ReturnTo = safeReturnTo(attempt.ReturnTo)
	return attempt, true
}

// userFromTokens reads the user from the ID token: name from name or preferred_username, e-mail from
// email. When the ID token lacks them and the provider has a userinfo endpoint, it asks there (the
// answer must be about the same subject). It also returns who signed in for Config.OnSignIn.
func (a *Authenticator) userFromTokens(c *gin.Context, d *discovered, idToken *oidc.IDToken, token *oauth2.Token) (User, SignedIn, error) {
	var claims profileClaims
	if err := idToken.Claims(&claims); err != nil {
		return User{}, SignedIn{}, fmt.Errorf("auth: ID token claims: %w", err)
	}
	if (claims.Name == "" && claims.PreferredUsername == "") || claims.Email == "" {
		if d.provider.UserInfoEndpoint() != "" {
			info, err := d.provider.UserInfo(a.idpContext(c.Request.Context()), oauth2.StaticTokenSource(token))
			switch {
			case err != nil:
				a.logger.WarnContext(c.Request.Context(), "sign-in: userinfo failed; continuing with the ID token", "err", err)
			case info.Subject != idToken.Subject:
				return User{}, SignedIn{}, fmt.Errorf("auth: userinfo subject %q differs from the ID token's %q", info.Subject, idToken.Subject)
			default:
				var more profileClaims
				_ = info.Claims(&more)
				claims.Name = firstNonEmpty(claims.Name, more.Name)
				claims.GivenName = firstNonEmpty(claims.GivenName, more.GivenName)
				claims.FamilyName = firstNonEmpty(claims.FamilyName, more.FamilyName)
				claims.PreferredUsername = firstNonEmpty(claims.PreferredUsername, more.PreferredUsername)
				claims.Email = firstNonEmpty(claims.Email, info.Email)
			}
		}
	}
	display := claims.displayName()
	return User{
			Subject: idToken.Subject,
			Name:    firstNonEmpty(display, claims.PreferredUsername, claims.Email, idToken.Subject),
			Email:   claims.Email,
		}, SignedIn{
			Login:       claims.PreferredUsername,
			DisplayName: display,
			Email:       claims.verifiedEmail(),
		}, nil
}

// profileClaims are the standard claims (OpenID Connect Core 5.1) that name the person.
type profileClaims struct {
	Name              string `json:"name"`
	GivenName         string `json:"given_name"`
	FamilyName        string `json:"family_name"`
	PreferredUsername string `json:"preferred_username"`
	Email             string `json:"email"`
	// EmailVerified is a boolean, or a string some providers send ("false"); absent is not false.
	EmailVerified any `json:"email_verified"`
}

// verifiedEmail is the e-mail address unless the provider says it is not verified (an address a
// person typed unchecked must not name them where the address is someone else's).
func (c profileClaims) verifiedEmail() string {
	switch v := c.EmailVerified.(type) {
	case bool:
		if !v {
			return ""
		}
	case string:
		if strings.EqualFold(strings.TrimSpace(v), "false") {
			return ""
		}
	}
	return c.Email
}

// displayName is the person's name as the provider gives it: name, else given and family name;
// "" when it gives neither (a login or an address is not a name).
func (c profileClaims) displayName() string {
	if name := strings.Join(strings.Fields(c.Name), " "); name != "" {
		return name
	}
	return strings.Join(strings.Fields(c.GivenName+" "+c.FamilyName), " ")
}

// expiryOf computes the access token's expiry on our clock from expires_in (oauth2 uses the wall clock).
func (a *Authenticator) expiryOf(token *oauth2.Token) time.Time {
	if token.ExpiresIn > 0 {
		return a.now().Add(time.Duration(token.ExpiresIn) * time.Second)
	}
	return token.Expiry
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// noStore keeps auth responses out of caches.
func noStore(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
}

// signedOutReason is the sentence for a sign-in link's reason=, or the zero Message.
func signedOutReason(reason string) i18n.Message {
	switch reason {
	case ReasonEnded:
		return i18n.M("auth.signed_out.reason_ended")
	case ReasonExpired:
		return i18n.M("auth.signed_out.reason_expired")
	}
	return i18n.Message{}
}
