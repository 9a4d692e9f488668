package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// readInboxItem marks one item read without opening it: POST /inbox/:itemId/read.
func (h *Handler) readInboxItem(c *gin.Context) {
	if _, ok := h.markInboxItem(c); ok {
		c.Redirect(http.StatusSeeOther, "/inbox")
	}
}

// readAllInbox marks every item of the person read: POST /inbox/read-all.
func (h *Handler) readAllInbox(c *gin.Context) {
	if h.inbox == nil {
		h.notFound(c)
		return
	}
	if err := h.inbox.MarkAllRead(c.Request.Context(), inboxPerson(c).Key); err != nil {
		h.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, "/inbox")
}
