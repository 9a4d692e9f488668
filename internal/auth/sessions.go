package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/session"
)

// ActiveSession is one of the signed-in user's sessions, for the sessions page.
type ActiveSession struct {
	// Handle names the session in forms. It is a digest of the session id, never the id itself: the
	// page must not hand out the keys of other sessions.
	Handle              string
	CreatedAt, LastSeen time.Time
	UserAgent, ClientIP string
	// Current marks the session of this request.
	Current bool
}

// ErrUnknownSession: the handle names no active session of the user (already ended, or not theirs).
var ErrUnknownSession = errors.New("auth: no such session")

// ErrSessionStoreUnavailable wraps a failure of the session store (the state database down, data directory gone):
// nothing was listed or ended; the handlers answer 503.
var ErrSessionStoreUnavailable = errors.New("auth: session store unavailable")

func handleOf(id string) string {
	sum := sha256.Sum256([]byte("session handle\x00" + id))
	return hex.EncodeToString(sum[:16])
}

// Sessions lists the signed-in user's active sessions, most recently seen first, the current one
// marked. listed is false when the store cannot enumerate sessions (the cookie store): then only the
// current session is returned, and RevokeOtherSessions still works.
func (a *Authenticator) Sessions(c *gin.Context) (sessions []ActiveSession, listed bool, err error) {
	current := CurrentSession(c)
	if current == nil {
		return nil, false, ErrNotSignedIn
	}
	infos, err := a.store.List(c.Request.Context(), current.Subject)
	if errors.Is(err, session.ErrNotListable) {
		return []ActiveSession{{
			Handle: handleOf(current.ID), CreatedAt: current.CreatedAt, LastSeen: current.LastSeen,
			UserAgent: current.UserAgent, ClientIP: current.ClientIP, Current: true,
		}}, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%w: list sessions: %w", ErrSessionStoreUnavailable, err)
	}
	for _, info := range infos {
		sessions = append(sessions, ActiveSession{
			Handle: handleOf(info.ID), CreatedAt: info.CreatedAt, LastSeen: info.LastSeen,
			UserAgent: info.UserAgent, ClientIP: info.ClientIP, Current: info.ID == current.ID,
		})
	}
	return sessions, true, nil
}

// RevokeSession ends one of the user's other sessions, named by its handle. It returns
// ErrUnknownSession when the handle names none (or the current one: that is a sign-out).
func (a *Authenticator) RevokeSession(c *gin.Context, handle string) error {
	current := CurrentSession(c)
	if current == nil {
		return ErrNotSignedIn
	}
	infos, err := a.store.List(c.Request.Context(), current.Subject)
	if err != nil && !errors.Is(err, session.ErrNotListable) {
		return fmt.Errorf("%w: list sessions: %w", ErrSessionStoreUnavailable, err)
	}
	for _, info := range infos {
		if info.ID != current.ID && handleOf(info.ID) == handle {
			if err := a.store.Revoke(c.Request.Context(), current.Subject, info.ID); err != nil {
				return fmt.Errorf("%w: revoke session: %w", ErrSessionStoreUnavailable, err)
			}
			a.logger.InfoContext(c.Request.Context(), "session signed out from the sessions page", "subject", current.Subject)
			a.sessionsEnded(c.Request.Context(), current.Subject)
			return nil
		}
	}
	return ErrUnknownSession
}

// RevokeOtherSessions ends every session of the user but this one ("sign out all others").
func (a *Authenticator) RevokeOtherSessions(c *gin.Context) error {
	current := CurrentSession(c)
	if current == nil {
		return ErrNotSignedIn
	}
	if err := a.store.RevokeSubject(c.Request.Context(), current.Subject, current.ID); err != nil {
		return fmt.Errorf("%w: revoke other sessions: %w", ErrSessionStoreUnavailable, err)
	}
	a.logger.InfoContext(c.Request.Context(), "signed out all other sessions", "subject", current.Subject)
	a.sessionsEnded(c.Request.Context(), current.Subject)
	return nil
}

// LogoutEverywhere signs the user out of every browser and device: POST /auth/logout-everywhere ends
// all of the user's sessions (every store can: server-side ones are deleted, cookie ones revoked),
// then signs this browser out as Logout does, including the provider's end-session redirect. When the
// store cannot be reached nothing is signed out and the user is told so: saying "signed out
// everywhere" while other sessions live on would be worse than an error.
func (a *Authenticator) LogoutEverywhere(c *gin.Context) {
	ctx := c.Request.Context()
	s, err := session.Load(a.store, c.Request)
	if err == nil {
		err = a.store.RevokeSubject(ctx, s.Subject, "")
	}
	if err != nil && !errors.Is(err, session.ErrNoSession) {
		a.logger.ErrorContext(ctx, "sign out everywhere failed", "err", err)
		noStore(c)
		a.renderPage(c, http.StatusServiceUnavailable, "auth.sign_out_failed.title", i18n.M("auth.sign_out_failed.others"), "/", "auth.link.back")
		return
	}
	if s != nil {
		a.logger.InfoContext(ctx, "signed out everywhere", "subject", s.Subject)
	}
	a.Logout(c)
}
