package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/layout"
)

// isHTMX reports whether the request wants a partial: an htmx request that is neither a history
// restore nor a boosted navigation (those want the whole page).
func isHTMX(c *gin.Context) bool {
	return c.GetHeader("HX-Request") == "true" &&
		c.GetHeader("HX-History-Restore-Request") != "true" &&
		c.GetHeader("HX-Boosted") != "true"
}

// render writes component with status as HTML. The component is rendered into a buffer first,
// with a context detached from the client's cancellation, so a page is either sent whole or, if
// rendering fails, replaced by the error page; never cut in the middle. Gin's HTML renderer is
// never used (it drops the request context).
func (h *Handler) render(c *gin.Context, status int, component templ.Component) {
	buf := h.buffers.get()
	defer h.buffers.put(buf) // after the write below: net/http has copied or sent the bytes by then
	if err := component.Render(context.WithoutCancel(c.Request.Context()), buf); err != nil {
		h.log(c).Error("rendering failed", slog.Any("err", err), slog.String("path", c.Request.URL.Path))
		h.writeFallbackError(c)
		return
	}
	c.Header("Content-Type", "text/html; charset=utf-8")
	// The whole body goes out in one write: the compress middleware sends small ones as they are.
	announceBodySize(c.Writer, buf.Len())
	c.Status(status)
	_, _ = c.Writer.Write(buf.Bytes()) // a write error means the client went away
}

// writeFallbackError answers 500 in plain text when even rendering failed.
func (h *Handler) writeFallbackError(c *gin.Context) {
	if c.Writer.Written() {
		return
	}
	c.Header("Content-Type", "text/plain; charset=utf-8")
	c.String(http.StatusInternalServerError, "%s\n", t(c, "error.fallback", requestIDOf(c)))
}

// renderPage renders content inside the page frame (layout.Page) with the given title and the
// navigation section marked as current.
func (h *Handler) renderPage(c *gin.Context, status int, title string, section layout.Section, content templ.Component) {
	vm := h.layoutVM(c, title, section)
	if status < http.StatusBadRequest {
		vm.RequestID = "" // only a page that went wrong needs the id support asks for (issue 26)
	}
	h.render(c, status, layout.Page(vm, content))
}

// layoutVM builds the frame's view model: title, current section, asset URLs, the signed-in user.
func (h *Handler) layoutVM(c *gin.Context, title string, section layout.Section) layout.LayoutVM {
	return layout.LayoutVM{
		Title:       title,
		Section:     section,
		Static:      h.assets,
		UserName:    displayName(c),
		RequestID:   requestIDOf(c),
		Languages:   h.i18n.Choices(),
		CurrentPath: c.Request.URL.RequestURI(),
		InboxEvery:  h.inboxEvery(c),
	}
}

// inboxEvery is how often (ms) the header polls the unread count: for a signed-in person when the
// inbox is on, else 0 (no link).
func (h *Handler) inboxEvery(c *gin.Context) int {
	if h.inbox == nil || auth.CurrentSession(c) == nil {
		return 0
	}
	every := h.cfg.InboxRefresh
	if every <= 0 {
		every = 20 * time.Second
	}
	return int(every.Milliseconds())
}

// displayName is the signed-in user's name for the header, or "" when nobody is signed in.
func displayName(c *gin.Context) string {
	if auth.CurrentSession(c) == nil {
		return ""
	}
	u := auth.CurrentUser(c)
	switch {
	case u.Name != "":
		return u.Name
	case u.Email != "":
		return u.Email
	}
	return u.Subject
}

// apiContext is the context for v2 calls made for this request: it carries the signed-in user's
// access token and the request id (forwarded as X-Request-Id). The client applies its own per-call
// time limit (PORTAL_V2_TIMEOUT); the request's cancellation stops the call when the user leaves.
func (h *Handler) apiContext(c *gin.Context) context.Context {
	ctx := apiclient.WithRequestID(c.Request.Context(), requestIDOf(c))
	return apiclient.WithToken(ctx, auth.AccessToken(c))
}

// toast sends a notification with an htmx response, via the HX-Trigger header (app.js shows it).
// Use it after a successful htmx action: h.toast(c, components.ToastSuccess, t(c, "customer.toast.saved")).
// Call it before rendering the body.
func (h *Handler) toast(c *gin.Context, level components.ToastLevel, message string) {
	type toastEvent struct {
		Level     components.ToastLevel `json:"level"`
		Message   string                `json:"message"`
		RequestID string                `json:"requestId,omitempty"`
	}
	id := ""
	if level == components.ToastError || level == components.ToastWarning {
		id = requestIDOf(c)
	}
	triggerEvent(c, "showToast", toastEvent{Level: level, Message: message, RequestID: id})
}

// announce asks app.js to read message to screen-reader users (the #announcer live region),
// e.g. "12 customers found" after a search. Call it before rendering the body.
func announce(c *gin.Context, message string) {
	triggerEvent(c, "announce", message)
}

// triggerEvent adds an event to the HX-Trigger response header, keeping events already there.
func triggerEvent(c *gin.Context, name string, detail any) {
	events := map[string]any{}
	if existing := c.Writer.Header().Get("HX-Trigger"); existing != "" {
		if err := json.Unmarshal([]byte(existing), &events); err != nil {
			events = map[string]any{existing: nil} // a plain event name set elsewhere
		}
	}
	events[name] = detail
	encoded, err := json.Marshal(events)
	if err != nil {
		return // the details are our own plain structs: cannot fail
	}
	c.Header("HX-Trigger", asciiJSON(encoded))
}

// asciiJSON escapes every non-ASCII character of a JSON text as \uXXXX: browsers read response
// headers as Latin-1, so "Müller" sent as UTF-8 would arrive garbled; JSON.parse restores it.
func asciiJSON(encoded []byte) string {
	var b strings.Builder
	for _, r := range string(encoded) {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
			continue
		}
		if r > 0xFFFF {
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, "\\u%04x\\u%04x", r1, r2)
			continue
		}
		fmt.Fprintf(&b, "\\u%04x", r)
	}
	return b.String()
}

// renderAuthPage renders the pages of internal/auth (callback errors, "signed out") in the portal's
// layout: error statuses as the error page, others as a notice. link is a local path chosen by auth.
func (h *Handler) renderAuthPage(c *gin.Context, status int, title, message, linkURL, linkText string) {
	link := components.Link{Href: linkURL, Label: linkText}
	if !strings.HasPrefix(linkURL, "/") || strings.HasPrefix(linkURL, "//") {
		link = components.Link{} // only local links: auth never needs another
	}
	if status >= 400 {
		h.renderPage(c, status, title, layout.SectionNone, components.ErrorPage(status, title, message, requestIDOf(c), link))
		return
	}
	h.renderPage(c, status, title, layout.SectionNone, components.Notice(title, message, link))
}
