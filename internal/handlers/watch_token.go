package handlers

import (
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
)

// keepWatchToken hands the person's current access token to the signature watcher
// (internal/signwatch), so the contracts they sent are read with it while nobody looks. The
// watcher writes only when the token is newer than the one it holds (a sign-in, a refresh), so
// this costs a page view a map lookup. A store that fails is logged; the request goes on.
func (h *Handler) keepWatchToken(c *gin.Context) {
	if h.watch != nil {
		if s := auth.CurrentSession(c); s != nil && s.AccessToken != "" {
			if err := h.watch.Keep(c.Request.Context(), h.viewer(c), s.AccessToken, s.TokenExpiry); err != nil {
				h.log(c).Warn("signature watcher: token not kept", slog.Any("err", err))
			}
		}
	}
	c.Next()
}
