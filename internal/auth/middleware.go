package auth

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/session"
)

// lastSeenGranularity is how stale LastSeen may get before a request records it: writing it on every
// request would send a Set-Cookie (or a database write) each time.
const lastSeenGranularity = time.Minute

// RequireLogin loads the session and lets the request through with it in the context (CurrentSession,
// CurrentUser, AccessToken). It ends sessions past the idle timeout or the absolute lifetime, and
// refreshes the access token when it expires within RefreshBefore. Without a usable session it answers
// as Unauthenticated does.
func (a *Authenticator) RequireLogin() gin.HandlerFunc {
	return func(c *gin.Context) {
		ctx := c.Request.Context()
		s, err := session.Load(a.store, c.Request)
		if errors.Is(err, session.ErrNoSession) {
			reason := ""
			if session.HasCookie(c.Request) {
				reason = ReasonEnded // a session cookie whose session is gone: signed out elsewhere or revoked
			}
			a.unauthenticated(c, reason)
			return
		}
		if err != nil {
			a.logger.ErrorContext(ctx, "session store failed", "err", err)
			noStore(c)
			a.renderPage(c, http.StatusServiceUnavailable, "auth.store_unavailable.title", i18n.M("auth.store_unavailable.session"), c.Request.URL.RequestURI(), "auth.link.try_again")
			c.Abort()
			return
		}

		now := a.now()
		if now.Sub(s.CreatedAt) >= a.cfg.AbsoluteLifetime || now.Sub(s.LastSeen) >= a.cfg.IdleTimeout {
			a.logger.InfoContext(ctx, "session expired", "subject", s.Subject,
				"age", now.Sub(s.CreatedAt).Round(time.Second), "idle", now.Sub(s.LastSeen).Round(time.Second))
			a.endSession(c, ReasonExpired)
			return
		}
		changed := false
		if now.Sub(s.LastSeen) >= lastSeenGranularity {
			s.LastSeen = now
			// The sessions page shows where a session was last used.
			s.ClientIP, s.UserAgent = c.ClientIP(), c.Request.UserAgent()
			changed = true
		}

		renewed, ok := a.renewIfDue(c, s, now)
		if !ok {
			return
		}
		changed = changed || renewed

		if changed {
			if err := session.Save(a.store, c.Writer, c.Request, s); err != nil {
				if errors.Is(err, session.ErrNoSession) {
					a.endSession(c, ReasonEnded) // signed out elsewhere meanwhile
					return
				}
				// The request can still be served with the fresh token; the next one will retry.
				a.logger.ErrorContext(ctx, "saving the session failed", "subject", s.Subject, "err", err)
			}
		}
		c.Set(sessionKey, s)
		c.Next()
	}
}

// renewIfDue refreshes the access token when it expires within RefreshBefore. It reports whether the
// tokens changed, and ok=false when it has answered the request itself (session ended, provider down with
// an expired token).
func (a *Authenticator) renewIfDue(c *gin.Context, s *session.Session, now time.Time) (renewed, ok bool) {
	ctx := c.Request.Context()
	if s.TokenExpiry.IsZero() || now.Add(a.cfg.RefreshBefore).Before(s.TokenExpiry) {
		return false, true
	}
	stillValid := now.Before(s.TokenExpiry)
	if s.RefreshToken == "" {
		// No refresh token (the provider did not grant offline_access): use the token to its end.
		if stillValid {
			return false, true
		}
		a.logger.InfoContext(ctx, "access token expired and cannot be refreshed", "subject", s.Subject)
		a.endSession(c, ReasonExpired)
		return false, false
	}
	err := a.refresh(c, s)
	switch {
	case err == nil:
		return true, true
	case errors.Is(err, ErrSessionEnded):
		a.logger.InfoContext(ctx, "refresh refused; signing out", "subject", s.Subject, "err", err)
		a.endSession(c, ReasonEnded)
		a.sessionsEnded(ctx, s.Subject)
		return false, false
	case stillValid:
		// The provider is unreachable but the token still works: carry on, retry next request.
		a.logger.WarnContext(ctx, "token refresh failed; using the current token", "subject", s.Subject, "err", err)
		return false, true
	default:
		a.logger.ErrorContext(ctx, "token refresh failed and the token has expired", "subject", s.Subject, "err", err)
		noStore(c)
		a.renderPage(c, http.StatusServiceUnavailable, "auth.renew_unavailable.title", i18n.M("auth.renew_unavailable.message"),
			c.Request.URL.RequestURI(), "auth.link.try_again")
		return false, false
	}
}

// Why a signed-in person was signed out (issue 26): the sign-in link carries it as reason=, and the
// portal says it before sending the person to the identity provider.
const (
	// ReasonEnded: the session was signed out elsewhere, revoked from the sessions page, or the
	// identity provider refused to renew it.
	ReasonEnded = "ended"
	// ReasonExpired: the session was unused too long or reached its lifetime.
	ReasonExpired = "expired"
)

// endSession clears the session and answers as Unauthenticated, saying why.
func (a *Authenticator) endSession(c *gin.Context, reason string) {
	if err := session.Delete(a.store, c.Writer, c.Request); err != nil {
		a.logger.ErrorContext(c.Request.Context(), "deleting the session failed", "err", err)
	}
	a.unauthenticated(c, reason)
}

// Unauthenticated answers a request that needs a signed-in user and aborts the chain:
//   - htmx requests (HX-Request: true): 401 with HX-Redirect to the login, returning to the page the user
//     is on (HX-Current-URL when it is on our origin, else the request path);
//   - other non-GET requests: 401;
//   - page GETs: 303 to /auth/login?return_to=<path?query>.
//
// Handlers call it after ForceRefresh returned ErrSessionEnded.
func (a *Authenticator) Unauthenticated(c *gin.Context) {
	reason := ""
	if session.HasCookie(c.Request) {
		reason = ReasonEnded
	}
	a.unauthenticated(c, reason)
}

// unauthenticated is Unauthenticated with the reason the sign-in page gives ("" for none).
func (a *Authenticator) unauthenticated(c *gin.Context, reason string) {
	noStore(c)
	r := c.Request
	if r.Header.Get("HX-Request") == "true" {
		returnTo := a.sameOriginReturnTo(r.Header.Get("HX-Current-URL"))
		if returnTo == "" {
			returnTo = safeReturnTo(r.URL.EscapedPath())
		}
		c.Header("HX-Redirect", loginURL(returnTo, reason))
		c.AbortWithStatus(http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		c.Header("Content-Type", "text/plain; charset=utf-8")
		c.String(http.StatusUnauthorized, i18n.T(c.Request.Context(), "auth.sign_in_required"))
		c.Abort()
		return
	}
	c.Redirect(http.StatusSeeOther, loginURL(safeReturnTo(r.URL.RequestURI()), reason))
	c.Abort()
}

func loginURL(returnTo, reason string) string {
	q := url.Values{"return_to": {returnTo}}
	if reason != "" {
		q.Set("reason", reason)
	}
	return LoginPath + "?" + q.Encode()
}
