package auth

import (
	"bytes"
	"net/http"

	"github.com/gin-gonic/gin"
)

// defaultPageHTML is the page written when the handlers package has not set a renderer. html/template
// escapes every value; there is no inline script or style (the portal's CSP forbids both).
const defaultPageHTML = `<!doctype html>
<html lang="en">
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

// renderPage shows an auth page through the configured renderer and stops the chain.
func (a *Authenticator) renderPage(c *gin.Context, status int, title, message, linkURL, linkText string) {
	defer c.Abort()
	if render := a.renderer.Load(); render != nil {
		(*render)(c, status, title, message, linkURL, linkText)
		return
	}
	var buf bytes.Buffer
	err := a.defaultPage.Execute(&buf, struct{ Title, Message, LinkURL, LinkText string }{title, message, linkURL, linkText})
	if err != nil {
		c.String(http.StatusInternalServerError, "page rendering failed")
		return
	}
	c.Data(status, "text/html; charset=utf-8", buf.Bytes())
}

// fail logs an unexpected error once and shows a page without its details.
func (a *Authenticator) fail(c *gin.Context, status int, what string, err error, retryURL string) {
	a.logger.ErrorContext(c.Request.Context(), what, "err", err)
	message := "Signing in failed because of a problem on our side. Please try again."
	switch status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		message = "The sign-in service could not be reached or answered unexpectedly. Please try again in a moment."
	}
	a.renderPage(c, status, "Sign-in failed", message, retryURL, "Try again")
}
