package main

import (
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/session"
)

// everywhereAuth is the authenticator plus "sign out everywhere", which only server-side sessions
// make possible: a cookie session copied to another browser cannot be revoked, a redis one can
// (docs/operations.md, "Scaling out"). The handlers register POST /auth/logout-everywhere when the
// authenticator they are given has LogoutEverywhere.
type everywhereAuth struct {
	*auth.Authenticator
	store  *session.RedisStore
	logger *slog.Logger
	// render is the handlers' page renderer (see SetPageRenderer); nil until they set it.
	render atomic.Pointer[auth.PageRenderer]
}

// SetPageRenderer keeps the handlers' renderer for this action's error page and hands it on to auth.
func (a *everywhereAuth) SetPageRenderer(render func(c *gin.Context, status int, title, message, linkURL, linkText string)) {
	r := auth.PageRenderer(render)
	a.render.Store(&r)
	a.Authenticator.SetPageRenderer(render)
}

// LogoutEverywhere signs the user out of every browser and device: POST /auth/logout-everywhere
// deletes all of the user's sessions in redis (their cookies become worthless at once), then signs
// this browser out as POST /auth/logout does, including the provider's end-session redirect. When
// redis cannot be reached nothing is signed out and the user is told so: saying "signed out
// everywhere" while other sessions live on would be worse than an error.
func (a *everywhereAuth) LogoutEverywhere(c *gin.Context) {
	ctx := c.Request.Context()
	s, err := a.store.Load(c.Request)
	switch {
	case errors.Is(err, session.ErrNoSession):
		// Not signed in here (or already signed out): nothing to end but this browser's cookie.
	case err != nil:
		a.failEverywhere(c, err)
		return
	default:
		if err := a.store.DeleteAllForSubject(ctx, s.Subject); err != nil {
			a.failEverywhere(c, err)
			return
		}
		a.logger.InfoContext(ctx, "signed out everywhere", slog.String("component", "auth"), slog.String("subject", s.Subject))
	}
	a.Logout(c)
}

func (a *everywhereAuth) failEverywhere(c *gin.Context, err error) {
	a.logger.ErrorContext(c.Request.Context(), "sign out everywhere failed", slog.String("component", "auth"), slog.Any("err", err))
	const title, message = "Sign-out failed", "The portal could not reach its session store, so your other sessions are still signed in. Please try again in a moment."
	c.Header("Cache-Control", "no-store")
	if r := a.render.Load(); r != nil {
		(*r)(c, http.StatusServiceUnavailable, title, message, "/", "Back to the portal")
		return
	}
	c.String(http.StatusServiceUnavailable, title+": "+message)
}
