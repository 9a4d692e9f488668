package handlers

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/layout"
	"github.com/cpqportal/portal/web/templates/pages"
)

// sessionNotice is the confirmation of a sessions page action (?done=...): the actions redirect
// back to the page, so a reload never repeats them.
func sessionNotice(tr *i18n.Translator, done string) string {
	switch done {
	case "revoked":
		return tr.T("sessions.notice.revoked")
	case "others":
		return tr.T("sessions.notice.others")
	case "gone":
		return tr.T("sessions.notice.gone")
	}
	return ""
}

// showSessions lists the signed-in user's active sessions: GET /sessions.
func (h *Handler) showSessions(c *gin.Context) {
	list, listed, err := h.auth.Sessions(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	tr := tr(c)
	vm := pages.SessionsVM{Listed: listed, Notice: sessionNotice(tr, c.Query("done"))}
	for _, s := range list {
		vm.Sessions = append(vm.Sessions, pages.SessionRow{
			Handle:   s.Handle,
			Started:  s.CreatedAt,
			LastSeen: s.LastSeen,
			Browser:  browserOf(tr, s.UserAgent),
			IP:       s.ClientIP,
			Current:  s.Current,
		})
	}
	h.renderPage(c, http.StatusOK, tr.T("sessions.title"), layout.SectionNone, pages.SessionsPage(vm))
}

// browserOf names the browser and system of a User-Agent in a few words ("Chrome on Linux"); an
// unknown agent is shown as given, cut short.
func browserOf(tr *i18n.Translator, ua string) string {
	if ua == "" {
		return tr.T("sessions.browser.unknown")
	}
	browser := ""
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"HeadlessChrome/", "Chrome (headless)"},
		{"Chrome/", "Chrome"}, {"Safari/", "Safari"}, {"curl/", "curl"},
	} {
		if strings.Contains(ua, b.token) {
			browser = b.name
			break
		}
	}
	system := ""
	for _, s := range []struct{ token, name string }{
		{"Android", "Android"}, {"iPhone", "iOS"}, {"iPad", "iPadOS"}, {"Windows", "Windows"},
		{"Mac OS X", "macOS"}, {"CrOS", "ChromeOS"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, s.token) {
			system = s.name
			break
		}
	}
	switch {
	case browser != "" && system != "":
		return tr.T("sessions.browser.on", browser, system)
	case browser != "":
		return browser
	}
	if len(ua) > 60 {
		cut := 60
		for cut > 0 && !utf8.RuneStart(ua[cut]) {
			cut-- // never split a character: the page must stay valid UTF-8
		}
		return ua[:cut] + "…"
	}
	return ua
}
