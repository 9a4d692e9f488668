package handlers

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
)

// revokeSession signs out one of the user's other sessions: POST /sessions/revoke (form: session,
// the handle shown on the sessions page).
func (h *Handler) revokeSession(c *gin.Context) {
	err := h.auth.RevokeSession(c, c.PostForm("session"))
	switch {
	case errors.Is(err, auth.ErrUnknownSession):
		c.Redirect(http.StatusSeeOther, "/sessions?done=gone")
	case err != nil:
		h.fail(c, err)
	default:
		c.Redirect(http.StatusSeeOther, "/sessions?done=revoked")
	}
}

// revokeOtherSessions signs out every session of the user but this one: POST /sessions/revoke-others.
func (h *Handler) revokeOtherSessions(c *gin.Context) {
	if err := h.auth.RevokeOtherSessions(c); err != nil {
		h.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, "/sessions?done=others")
}
