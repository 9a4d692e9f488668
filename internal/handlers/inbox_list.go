package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/i18n"
	inboxpages "github.com/cpqportal/portal/web/templates/inbox"
	"github.com/cpqportal/portal/web/templates/layout"
)

// inboxShown is how many items the inbox page lists (the newest).
const inboxShown = 100

// inboxNotice confirms an inbox action (?done=...).
func inboxNotice(tr *i18n.Translator, done string) string {
	if done == "preference" {
		return tr.T("inbox.preferences.saved")
	}
	return ""
}

// showInbox lists the person's items and their preference: GET /inbox.
func (h *Handler) showInbox(c *gin.Context) {
	if h.inbox == nil {
		h.notFound(c)
		return
	}
	ctx := c.Request.Context()
	p := inboxPerson(c)
	items, err := h.inbox.List(ctx, p.Key, inboxShown)
	if err != nil {
		h.fail(c, err)
		return
	}
	n, err := h.inbox.Unread(ctx, p.Key)
	if err != nil {
		h.fail(c, err)
		return
	}
	delivery, err := h.inbox.Preference(ctx, p.Key)
	if err != nil {
		h.fail(c, err)
		return
	}
	tr := tr(c)
	vm := inboxpages.PageVM{Unread: n, Delivery: string(delivery), MailOff: !h.mail.Enabled(), NoAddress: p.Email == "",
		Email: p.Email, Notice: inboxNotice(tr, c.Query("done"))}
	for _, it := range items {
		vm.Rows = append(vm.Rows, inboxpages.Row{ID: it.ID, Text: inboxText(tr, it), Unread: it.Unread(), CreatedAt: it.CreatedAt})
	}
	h.renderPage(c, http.StatusOK, tr.T("inbox.title"), layout.SectionNone, inboxpages.Page(vm))
}
