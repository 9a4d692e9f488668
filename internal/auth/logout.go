package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/session"
)

// Logout signs the user out: POST /auth/logout clears the session (cookies and, with the database store,
// the server-side state) and, when the provider has an end_session_endpoint, sends the browser there
// (RP-initiated logout) with id_token_hint, or client_id when the ID token was not kept, and
// post_logout_redirect_uri = PublicURL + /auth/logged-out. Otherwise it goes straight to /auth/logged-out.
func (a *Authenticator) Logout(c *gin.Context) {
	noStore(c)
	ctx := c.Request.Context()
	s, err := session.Load(a.store, c.Request)
	if err != nil && !errors.Is(err, session.ErrNoSession) {
		a.logger.WarnContext(ctx, "logout: loading the session failed", "err", err)
	}
	if err := session.Delete(a.store, c.Writer, c.Request); err != nil {
		// Saying "signed out" while the session lives on (and its cookie copies work) would be worse
		// than an error: the browser keeps its cookie and the user tries again.
		a.logger.ErrorContext(ctx, "logout: deleting the session failed", "err", err)
		a.renderPage(c, http.StatusServiceUnavailable, "auth.sign_out_failed.title", i18n.M("auth.sign_out_failed.message"), "/", "auth.link.back")
		return
	}
	if s != nil {
		a.logger.InfoContext(ctx, "signed out", "subject", s.Subject)
		a.sessionsEnded(ctx, s.Subject)
	}

	a.redirectAfterLogout(c, a.endSessionURL(c, s))
}

// endSessionURL is the provider's end-session URL for s, or LoggedOutPath when there is none.
func (a *Authenticator) endSessionURL(c *gin.Context, s *session.Session) string {
	d := a.provider.Load() // never wait for the provider to sign out locally
	if d == nil || d.endSession == "" {
		return LoggedOutPath
	}
	target, err := url.Parse(d.endSession)
	if err != nil {
		a.logger.ErrorContext(c.Request.Context(), "logout: bad end_session_endpoint", "endpoint", d.endSession, "err", err)
		return LoggedOutPath
	}
	query := target.Query()
	if s != nil && s.IDToken != "" {
		query.Set("id_token_hint", s.IDToken)
	} else {
		query.Set("client_id", a.cfg.ClientID)
	}
	query.Set("post_logout_redirect_uri", a.loggedOutURL)
	query.Set("state", rand.Text())
	target.RawQuery = query.Encode()
	return target.String()
}

// redirectAfterLogout sends the browser on: 303 for a form post, HX-Redirect for an htmx request (an
// XHR must not follow a redirect to the provider's origin).
func (a *Authenticator) redirectAfterLogout(c *gin.Context, target string) {
	if c.GetHeader("HX-Request") == "true" {
		c.Header("HX-Redirect", target)
		c.Status(http.StatusNoContent)
		return
	}
	c.Redirect(http.StatusSeeOther, target)
}

// LoggedOut shows "You are signed out" with a link to sign in again: GET /auth/logged-out.
func (a *Authenticator) LoggedOut(c *gin.Context) {
	noStore(c)
	a.renderPage(c, http.StatusOK, "auth.signed_out.title", i18n.M("auth.signed_out.message"), LoginPath, "auth.link.sign_in")
}

// sessionsEnded tells Config.OnSessionsEnded that subject's sessions (some or all) ended.
func (a *Authenticator) sessionsEnded(ctx context.Context, subject string) {
	if a.cfg.OnSessionsEnded == nil || subject == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	a.cfg.OnSessionsEnded(ctx, subject)
}
