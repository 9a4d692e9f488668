package handlers

import (
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/web/templates/layout"
	"github.com/cpqportal/portal/web/templates/pages"
)

// sessionNotice is the confirmation of a sessions page action (?done=...): the actions redirect
// back to the page, so a reload never repeats them.
func sessionNotice(done string) string {
	switch done {
	case "revoked":
		return "The session was signed out."
	case "others":
		return "All your other sessions were signed out."
	case "gone":
		return "That session had already ended."
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
	vm := pages.SessionsVM{Listed: listed, Notice: sessionNotice(c.Query("done"))}
	for _, s := range list {
		vm.Sessions = append(vm.Sessions, pages.SessionRow{
			Handle:   s.Handle,
			Started:  formatSessionTime(s.CreatedAt),
			LastSeen: formatSessionTime(s.LastSeen),
			Browser:  browserOf(s.UserAgent),
			IP:       s.ClientIP,
			Current:  s.Current,
		})
	}
	h.renderPage(c, http.StatusOK, "Your sessions", layout.SectionNone, pages.SessionsPage(vm))
}

func formatSessionTime(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// browserOf names the browser and system of a User-Agent in a few words ("Chrome on Linux"); an
// unknown agent is shown as given, cut short.
func browserOf(ua string) string {
	if ua == "" {
		return "Unknown browser"
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
		return browser + " on " + system
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
