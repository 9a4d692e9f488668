package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/inbox"
)

// saveInboxPreference stores how the person is told: POST /inbox/preferences (delivery: portal,
// email or digest). Their mails are written in the page's language from then on.
func (h *Handler) saveInboxPreference(c *gin.Context) {
	if h.inbox == nil {
		h.notFound(c)
		return
	}
	d, ok := inbox.ParseDelivery(c.PostForm("delivery"))
	if !ok {
		h.fail(c, badRequest("inbox.error.preference"))
		return
	}
	p := inboxPerson(c)
	if d != inbox.DeliverPortal && (!h.mail.Enabled() || p.Email == "") {
		d = inbox.DeliverPortal // no mail can reach them: the page says why
	}
	p.Delivery = d
	if err := h.inbox.SetPreference(c.Request.Context(), p); err != nil {
		h.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, "/inbox?done=preference")
}
