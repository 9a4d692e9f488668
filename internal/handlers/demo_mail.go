package handlers

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/demomail"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/layout"
	"github.com/cpqportal/portal/web/templates/pages"
)

// DemoMail is the demo's own mail server (internal/demomail): what the portal's e-mail reached.
type DemoMail interface {
	Mails() []demomail.Mail
	Mail(id int) (demomail.Mail, bool)
}

// demoMailPath is the demo's "Sent mail" page (routes.go registers it by its literal path, so the
// leak crawl reads it).
const demoMailPath = "/demo/mail"

// showDemoMail lists the mails the demo's mail server received (demo mode without
// PORTAL_SMTP_URL; 404 otherwise).
func (h *Handler) showDemoMail(c *gin.Context) {
	if h.demoMail == nil {
		h.notFound(c)
		return
	}
	trr := tr(c)
	var vm pages.DemoMailVM
	mails, err := h.ownDemoMails(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	ids := make([]string, 0, len(mails))
	for _, m := range mails {
		ids = append(ids, m.MessageID)
	}
	// A demo run with a bounce mailbox (PORTAL_MAIL_BOUNCE_IMAP_URL) marks the mails that bounced.
	bounces, err := h.mail.BouncesOf(c.Request.Context(), auth.CurrentUser(c).Subject, ids)
	if err != nil {
		h.fail(c, err)
		return
	}
	for _, m := range mails {
		row := pages.DemoMailRow{ID: m.ID, Received: m.Received, From: m.From, To: m.To, Subject: m.Subject, Text: m.Text,
			Bounce: bounces[strings.Trim(m.MessageID, "<>")]}
		for i, a := range m.Attachments {
			row.Attachments = append(row.Attachments, pages.DemoMailAttachment{Name: a.Name,
				Href: demoMailPath + "/" + strconv.Itoa(m.ID) + "/attachments/" + strconv.Itoa(i), Size: i18n.Bytes(int64(len(a.Data))).In(trr)})
		}
		vm.Mails = append(vm.Mails, row)
	}
	h.renderPage(c, http.StatusOK, trr.T("demomail.title"), layout.SectionNone, pages.DemoMailPage(vm))
}

// ownDemoMails are the mails the demo's server received that the signed-in person sent (the
// outbox knows each mail's Message-ID and sender): a demo with several people shows each their own.
func (h *Handler) ownDemoMails(c *gin.Context) ([]demomail.Mail, error) {
	all := h.demoMail.Mails()
	ids := make([]string, 0, len(all))
	for _, m := range all {
		if m.MessageID != "" {
			ids = append(ids, m.MessageID)
		}
	}
	own, err := h.mail.SentBy(c.Request.Context(), auth.CurrentUser(c).Subject, ids)
	if err != nil {
		return nil, fmt.Errorf("demo mail: %w", err)
	}
	mails := all[:0]
	for _, m := range all {
		if own[m.MessageID] {
			mails = append(mails, m)
		}
	}
	return mails, nil
}

// downloadDemoMailAttachment sends one attachment of a mail as it arrived.
func (h *Handler) downloadDemoMailAttachment(c *gin.Context) {
	if h.demoMail == nil {
		h.notFound(c)
		return
	}
	id, err1 := strconv.Atoi(c.Param("mailId"))
	n, err2 := strconv.Atoi(c.Param("n"))
	m, ok := h.demoMail.Mail(id)
	if err1 != nil || err2 != nil || !ok || n < 0 || n >= len(m.Attachments) {
		h.notFound(c)
		return
	}
	// Only a mail the person sent (another's is as unknown as a mail that never was).
	own, err := h.mail.SentBy(c.Request.Context(), auth.CurrentUser(c).Subject, []string{m.MessageID})
	if err != nil {
		h.fail(c, err)
		return
	}
	if !own[m.MessageID] {
		h.notFound(c)
		return
	}
	a := m.Attachments[n]
	c.Header("Content-Disposition", contentDisposition("attachment", a.Name))
	c.Data(http.StatusOK, downloadContentType(a.ContentType), a.Data)
}
