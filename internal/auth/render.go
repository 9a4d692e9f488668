package auth

import (
	"bytes"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/i18n"
)

// defaultPageHTML is the page written when the handlers package has not set a renderer. html/template
// escapes every value; there is no inline script or style (the portal's CSP forbids both).
const defaultPageHTML = `<!doctype html>
<html lang="{{.Lang}}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>{{.Title}}</title></head>
<body>
<main>
<h1>{{.Title}}</h1>
<p data-testid="auth-message">{{.Message}}</p>
{{if .LinkURL}}<p><a href="{{.LinkURL}}" data-testid="auth-link">{{.LinkText}}</a></p>{{end}}
</main>
</body>
</html>
`

// renderPage shows an auth page through the configured renderer and stops the chain. The title
// and link text are catalogue keys ("" for no link), translated here in the request's language
// (the portal's language middleware put the translator in the context), so the renderer gets
// the words a person reads and auth stays free of templates.
func (a *Authenticator) renderPage(c *gin.Context, status int, titleKey string, message i18n.Message, linkURL, linkTextKey string) {
	defer c.Abort()
	tr := i18n.From(c.Request.Context())
	title, text, linkText := tr.T(titleKey), message.In(tr), ""
	if linkTextKey != "" {
		linkText = tr.T(linkTextKey)
	}
	if render := a.renderer.Load(); render != nil {
		(*render)(c, status, title, text, linkURL, linkText)
		return
	}
	var buf bytes.Buffer
	err := a.defaultPage.Execute(&buf, struct{ Lang, Title, Message, LinkURL, LinkText string }{tr.Lang(), title, text, linkURL, linkText})
	if err != nil {
		c.String(http.StatusInternalServerError, "page rendering failed")
		return
	}
	c.Data(status, "text/html; charset=utf-8", buf.Bytes())
}

// fail logs an unexpected error once and shows a page without its details.
func (a *Authenticator) fail(c *gin.Context, status int, what string, err error, retryURL string) {
	a.logger.ErrorContext(c.Request.Context(), what, "err", err)
	message := i18n.M("auth.failed.internal")
	switch status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		message = i18n.M("auth.failed.upstream")
	}
	a.renderPage(c, status, "auth.failed.title", message, retryURL, "auth.link.try_again")
}
