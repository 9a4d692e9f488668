package handlers

import (
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/inbox"
	inboxpages "github.com/cpqportal/portal/web/templates/inbox"
)

// inboxPerson is the signed-in person's inbox key, and what the inbox needs to reach them.
func inboxPerson(c *gin.Context) inbox.Person {
	u := auth.CurrentUser(c)
	return inbox.Person{Key: inbox.PersonKey(u.Subject), Email: u.Email, Name: displayName(c),
		Lang: i18n.Lang(c.Request.Context()), Roles: auth.CurrentRoles(c)}
}

// pollInboxCount is the header's unread count: GET /inbox/count, polled by app.js's live poller
// (data-live-poll) after the page loaded, so no page render reads the database for it. One
// primary-key read; ETag is the count (304 while it stays). It also keeps what the inbox needs to
// mail the person (their address and language: written only when changed, inbox.Remember).
func (h *Handler) pollInboxCount(c *gin.Context) {
	if h.inbox == nil {
		c.Status(http.StatusNotFound)
		return
	}
	ctx := c.Request.Context()
	p := inboxPerson(c)
	if err := h.inbox.Remember(ctx, p); err != nil {
		h.log(c).Warn("inbox: the person was not remembered", slog.Any("err", err))
	}
	n, err := h.inbox.Unread(ctx, p.Key)
	if err != nil {
		// The poller backs off and tries again; no toast for a count.
		h.log(c).Warn("inbox: count failed", slog.Any("err", err))
		c.Status(http.StatusServiceUnavailable)
		return
	}
	tag := `"` + strconv.Itoa(n) + `"`
	c.Header("Cache-Control", "no-store")
	c.Header("ETag", tag)
	if c.GetHeader("If-None-Match") == tag {
		c.Status(http.StatusNotModified)
		return
	}
	h.render(c, http.StatusOK, inboxpages.Count(n))
}
