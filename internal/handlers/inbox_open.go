package handlers

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/inbox"
	"github.com/cpqportal/portal/internal/statedb"
)

// inboxText is an item's words in the reader's language.
func inboxText(tr *i18n.Translator, it inbox.Item) string { return inbox.Text(tr, it) }

// markInboxItem marks the person's item :itemId read and returns it; false when it answered.
func (h *Handler) markInboxItem(c *gin.Context) (inbox.Item, bool) {
	if h.inbox == nil {
		h.notFound(c)
		return inbox.Item{}, false
	}
	id := c.Param("itemId")
	if !statedb.ValidID(id) {
		h.notFound(c)
		return inbox.Item{}, false
	}
	it, err := h.inbox.MarkRead(c.Request.Context(), inboxPerson(c).Key, id)
	if errors.Is(err, inbox.ErrNotFound) {
		h.notFound(c)
		return inbox.Item{}, false
	}
	if err != nil {
		h.fail(c, err)
		return inbox.Item{}, false
	}
	return it, true
}

// openInboxItem marks the item read and goes to its page: POST /inbox/:itemId/open (a POST: it
// changes the item, so it is cross-origin protected like every state-changing route).
func (h *Handler) openInboxItem(c *gin.Context) {
	it, ok := h.markInboxItem(c)
	if !ok {
		return
	}
	link := it.Link
	if link == "" || link[0] != '/' || (len(link) > 1 && (link[1] == '/' || link[1] == '\\')) {
		link = "/inbox" // only the portal's own paths (Deliver checks them too)
	}
	c.Redirect(http.StatusSeeOther, link)
}
