package handlers

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/i18n"
)

// languageCookieMaxAge keeps a person's choice of language for a year: it is a preference, not a
// session, so it outlives sign-outs and is read on the sign-in pages too.
const languageCookieMaxAge = 365 * 24 * time.Hour

// language puts the request's translator in its context (templates and the error edge read it
// from there), showing times in the person's time zone (the zone cookie app.js keeps, UTC
// without one: docs/i18n.md), and says which language the response is in. Responses differ by the preference
// cookie and Accept-Language, but no cache keeps them (no-store, securityHeaders), so no Vary.
func (h *Handler) language(c *gin.Context) {
	tr := h.i18n.Translator(h.i18n.Match(c.Request)).InZone(h.i18n.Zone(c.Request))
	c.Request = c.Request.WithContext(i18n.WithTranslator(c.Request.Context(), tr))
	c.Header("Content-Language", tr.Lang())
	c.Next()
}

// tr is the request's translator.
func tr(c *gin.Context) *i18n.Translator { return i18n.From(c.Request.Context()) }

// t translates key in the request's language.
func t(c *gin.Context, key string, args ...any) string { return tr(c).T(key, args...) }

// setLanguage keeps the language chosen in the header's menu (a plain form, so it works without
// JavaScript) in the preference cookie, then goes back to the page it was chosen on: the page's
// state lives on the server and in its address, so nothing is lost by the reload.
func (h *Handler) setLanguage(c *gin.Context) {
	if err := c.Request.ParseForm(); err != nil {
		h.fail(c, err) // too large: 413
		return
	}
	tag, ok := h.i18n.Supported(c.Request.PostForm.Get("lang"))
	if !ok {
		h.fail(c, badRequest("language.error.unknown"))
		return
	}
	http.SetCookie(c.Writer, &http.Cookie{
		Name:     i18n.CookieName,
		Value:    tag.String(),
		Path:     "/",
		MaxAge:   int(languageCookieMaxAge / time.Second),
		HttpOnly: true,
		Secure:   h.cfg.PublicURL.Scheme == "https",
		SameSite: http.SameSiteLaxMode,
	})
	c.Redirect(http.StatusSeeOther, localReturnPath(c.Request.PostForm.Get("next")))
}

// localReturnPath is next when it is a path on this site ("/quotes/1/2/3?tab=x"), else "/": the
// form's value is the user's, so it must never send them to another site.
func localReturnPath(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") ||
		strings.ContainsAny(next, "\r\n\\") {
		return "/"
	}
	return next
}
