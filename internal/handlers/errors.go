package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/customerimport"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/layout"
)

// badRequestError is a request the portal itself refuses (a malformed path parameter, a form value
// that does not parse): 400, with a message meant for the user, translated at the error edge.
type badRequestError struct{ msg i18n.Message }

func (e *badRequestError) Error() string {
	return fmt.Sprintf("bad request: %s %v", e.msg.Key, e.msg.Args)
}

// badRequest returns a badRequestError with the catalogue's key and its arguments; the message is
// shown to the user in their language.
func badRequest(key string, args ...any) error { return badRequestMessage(i18n.M(key, args...)) }

// badRequestMessage is badRequest of a Message built elsewhere (a form's first problem).
func badRequestMessage(msg i18n.Message) error { return &badRequestError{msg: msg} }

// failure is how the error edge answers an error. Title and message are translated when rendered.
type failure struct {
	status  int
	title   i18n.Message
	message i18n.Message // shown to the user, escaped
	level   slog.Level   // how loudly to log
}

// statusClientClosedRequest is logged when the user left before the answer (nginx's 499);
// nobody reads the response.
const statusClientClosedRequest = 499

// classify maps an error to what the user sees. It is pure, so the table test covers it whole.
// 401 from the v2 API is not handled here: fail first tries to renew the sign-in.
func classify(err error) failure {
	var (
		bad      *badRequestError
		tooLarge *http.MaxBytesError
		apiErr   *apiclient.APIError
		stale    *staleCheckError
		quota    *jobs.QuotaError
		imports  *customerimport.QuotaError
	)
	m := i18n.M
	switch {
	case errors.As(err, &stale):
		// The status of the failed read (502, 504...), with a message saying nothing was applied.
		f := classify(stale.err)
		f.title = m("error.stale_check.title")
		f.message = m("error.stale_check.message")
		return f
	case errors.As(err, &bad):
		return failure{http.StatusBadRequest, m("error.bad_request.title"), bad.msg, slog.LevelInfo}
	case errors.Is(err, auth.ErrSessionStoreUnavailable): // before isConnectionFailure: the state database is not the CPQ service
		return failure{http.StatusServiceUnavailable, m("error.unavailable.title"), m("error.session_store.message"), slog.LevelError}
	case errors.As(err, &tooLarge):
		return failure{http.StatusRequestEntityTooLarge, m("error.too_large.title"),
			m("error.too_large.message", formatBytes(tooLarge.Limit)), slog.LevelInfo}
	case errors.As(err, &apiErr):
		return classifyAPIError(apiErr)
	case errors.Is(err, jobs.ErrNotFound):
		return failure{http.StatusNotFound, m("batch.error.not_found.title"), m("batch.error.not_found.message"), slog.LevelInfo}
	case errors.As(err, &quota):
		return failure{http.StatusTooManyRequests, m("batch.quota.title"), quota.Message, slog.LevelInfo}
	case errors.Is(err, errWorkOff), errors.Is(err, workindex.ErrUnavailable):
		// The work index cannot be read (the worklist's date range, "Archive all N matching").
		return failure{http.StatusServiceUnavailable, m("error.unavailable.title"), m("work.unavailable"), slog.LevelWarn}
	case errors.Is(err, customerimport.ErrNotFound):
		return failure{http.StatusNotFound, m("import.error.not_found.title"), m("import.error.not_found.message"), slog.LevelInfo}
	case errors.As(err, &imports):
		return failure{http.StatusTooManyRequests, m("batch.quota.title"), imports.Message, slog.LevelInfo}
	case errors.Is(err, errImportInFlight):
		return failure{http.StatusTooManyRequests, m("batch.quota.title"), m("import.quota.in_flight"), slog.LevelInfo}
	case errors.Is(err, errImportsOff):
		return failure{http.StatusServiceUnavailable, m("import.error.off.title"), m("import.error.off.message"), slog.LevelError}
	case errors.Is(err, errReadInFlight):
		return failure{http.StatusTooManyRequests, m("batch.quota.title"), m("upload.busy.person"), slog.LevelInfo}
	case errors.Is(err, errReadsBusy):
		return failure{http.StatusTooManyRequests, m("batch.quota.title"), m("upload.busy"), slog.LevelWarn}
	case errors.Is(err, errReadStopped):
		return failure{http.StatusServiceUnavailable, m("error.unavailable.title"), m("upload.stopped"), slog.LevelInfo}
	case errors.Is(err, errExportsInFlight):
		return failure{http.StatusTooManyRequests, m("batch.quota.title"), m("export.quota.in_flight", exportsPerUser), slog.LevelInfo}
	case errors.Is(err, jobs.ErrState):
		return failure{http.StatusConflict, m("batch.error.state.title"), m("batch.error.state.message"), slog.LevelInfo}
	case errors.Is(err, errJobsOff):
		return failure{http.StatusServiceUnavailable, m("batch.error.off.title"), m("batch.error.off.message"), slog.LevelError}
	case errors.Is(err, apiclient.ErrInvalidParameter):
		return failure{http.StatusBadRequest, m("error.bad_request.title"), m("error.invalid_value.message"), slog.LevelInfo}
	case errors.Is(err, apiclient.ErrMalformedResponse), errors.Is(err, apiclient.ErrResponseTooLarge),
		errors.Is(err, io.ErrUnexpectedEOF): // a v2 answer cut short (its body ended before Content-Length)
		return failure{http.StatusBadGateway, m("error.upstream.title"), m("error.upstream_unreadable.message"), slog.LevelError}
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return failure{http.StatusGatewayTimeout, m("error.upstream_silent.title"), m("error.upstream_timeout.message"), slog.LevelError}
	case isConnectionFailure(err):
		return failure{http.StatusBadGateway, m("error.upstream_silent.title"), m("error.upstream_unreachable.message"), slog.LevelError}
	}
	return failure{http.StatusInternalServerError, m("error.internal.title"), m("error.internal.message"), slog.LevelError}
}

// classifyAPIError maps a v2 error answer (docs/v2-assumptions.md A2). The service's own message
// is shown (escaped, as it comes) where it helps the user; 5xx and unexpected statuses become 502.
func classifyAPIError(e *apiclient.APIError) failure {
	m := i18n.M
	msg := func(fallback string) i18n.Message {
		if e.Message != "" {
			return i18n.Verbatim(e.Message)
		}
		return m(fallback)
	}
	switch {
	case e.Status == http.StatusBadRequest && e.Code == apiclient.CodeSessionInvalid:
		return failure{http.StatusBadRequest, m("error.session_expired.title"), m("error.session_expired.message"), slog.LevelInfo}
	case e.Status == http.StatusBadRequest:
		return failure{http.StatusBadRequest, m("error.upstream_refused.title"), msg("error.upstream_refused.message"), slog.LevelWarn}
	case e.Status == http.StatusUnauthorized:
		return failure{http.StatusUnauthorized, m("error.signin_refused.title"), m("error.signin_refused.message"), slog.LevelWarn}
	case e.Status == http.StatusForbidden:
		// Never the service's own words: a refusal may name what the person may not read ("customer
		// 62 is not one of teamlead's customers", issue 38).
		return failure{http.StatusForbidden, m("error.forbidden.title"), m("error.forbidden.message"), slog.LevelInfo}
	case e.Status == http.StatusNotFound:
		return failure{http.StatusNotFound, m("error.not_found.title"), msg("error.not_found.message"), slog.LevelInfo}
	case e.Status == http.StatusConflict:
		return failure{http.StatusConflict, m("error.conflict.title"), msg("error.conflict.message"), slog.LevelInfo}
	case e.Status == http.StatusRequestEntityTooLarge:
		return failure{http.StatusRequestEntityTooLarge, m("error.too_large.title"), msg("error.upload_too_large.message"), slog.LevelInfo}
	case e.Status == http.StatusUnprocessableEntity:
		return failure{http.StatusUnprocessableEntity, m("error.unprocessable.title"), validationMessage(e), slog.LevelInfo}
	case e.Status == http.StatusGatewayTimeout:
		return failure{http.StatusGatewayTimeout, m("error.upstream_silent.title"), m("error.upstream_timeout.message"), slog.LevelError}
	}
	return failure{http.StatusBadGateway, m("error.upstream.title"), m("error.upstream_status.message", e.Status), slog.LevelError}
}

// validationMessage joins the service's message and its field errors into one sentence list, for
// places that are not forms (forms show fieldErrorsFrom next to each field instead). The words are
// the v2 API's, shown as they come.
func validationMessage(e *apiclient.APIError) i18n.Message {
	parts := []string{}
	if e.Message != "" {
		parts = append(parts, e.Message)
	}
	for _, fe := range e.FieldErrors {
		parts = append(parts, fe.Field+": "+fe.Message)
	}
	if len(parts) == 0 {
		return i18n.M("error.unprocessable.message")
	}
	return i18n.Verbatim(strings.Join(parts, "; "))
}

// fieldErrorsFrom returns the v2 API's field errors of a 409/422 answer keyed by field name (the
// v2 body's field names, e.g. "taxId"), or nil when err carries none. A form handler checks this
// first and re-renders the form with the messages next to the fields (status 422); the first
// message per field wins.
func fieldErrorsFrom(err error) map[string]string {
	var apiErr *apiclient.APIError
	if !errors.As(err, &apiErr) || len(apiErr.FieldErrors) == 0 {
		return nil
	}
	out := make(map[string]string, len(apiErr.FieldErrors))
	for _, fe := range apiErr.FieldErrors {
		if _, seen := out[fe.Field]; !seen {
			out[fe.Field] = fe.Message
		}
	}
	return out
}

func isTimeout(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// isConnectionFailure reports transport failures: refused or reset connections, DNS errors, a
// connection closed before the answer.
func isConnectionFailure(err error) bool {
	var (
		urlErr *url.Error
		opErr  *net.OpError
		dnsErr *net.DNSError
	)
	return errors.As(err, &urlErr) || errors.As(err, &opErr) || errors.As(err, &dnsErr)
}

// fail is the error edge: handlers call it once with any error and return. It logs (with the
// request id) and answers with the status classify picks: full requests get the error page, htmx
// requests a toast (see renderError). A 401 from the v2 API first renews the sign-in.
func (h *Handler) fail(c *gin.Context, err error) {
	if errors.Is(err, context.Canceled) && c.Request.Context().Err() != nil {
		h.log(c).Info("client went away", slog.String("path", c.Request.URL.Path))
		c.AbortWithStatus(statusClientClosedRequest)
		return
	}
	if errors.Is(err, apiclient.ErrUnauthorized) {
		h.failUnauthorized(c, err)
		return
	}
	h.forgetRefusedRow(c, err)
	f := classify(err)
	h.log(c).Log(c.Request.Context(), f.level, "request failed",
		slog.Int("status", f.status), slog.String("method", c.Request.Method), slog.String("path", c.Request.URL.Path), slog.Any("err", err))
	h.renderError(c, f.status, f.title.In(tr(c)), f.message.In(tr(c)))
}

// renewedParam marks the one automatic retry of a GET page after the sign-in was renewed,
// so a v2 API that keeps refusing fresh tokens cannot cause a redirect loop.
const renewedParam = "renewed"

// failUnauthorized handles a 401 from the v2 API: the access token was refused (expired early,
// revoked). The sign-in is renewed once. A GET page is then loaded again automatically (303 to the
// same URL, marked with renewedParam); anything else asks the user to repeat the action, because
// repeating a POST on their behalf could do it twice. If the session has ended, the user signs in
// again and comes back (auth's Unauthenticated); if the provider cannot be reached, 503.
func (h *Handler) failUnauthorized(c *gin.Context, apiErr error) {
	log := h.log(c)
	if err := h.auth.ForceRefresh(c); err != nil {
		if errors.Is(err, auth.ErrSessionEnded) || errors.Is(err, auth.ErrNotSignedIn) {
			log.Info("v2 API refused the token and the session has ended: sign-in needed", slog.Any("err", apiErr), slog.Any("refresh_err", err))
			h.auth.Unauthenticated(c)
			return
		}
		log.Error("v2 API refused the token and renewing it failed", slog.Any("err", apiErr), slog.Any("refresh_err", err))
		h.renderError(c, http.StatusServiceUnavailable, t(c, "error.idp_unavailable.title"), t(c, "error.idp_unavailable.message"))
		return
	}
	page := c.Request.Method == http.MethodGet && !isHTMX(c)
	switch {
	case page && c.Query(renewedParam) == "":
		log.Info("v2 API refused the token; renewed it, loading the page again", slog.Any("err", apiErr))
		u := *c.Request.URL
		q := u.Query()
		q.Set(renewedParam, "1")
		u.RawQuery = q.Encode()
		c.Redirect(http.StatusSeeOther, u.RequestURI())
	case page:
		log.Error("v2 API refused a freshly renewed token", slog.Any("err", apiErr))
		h.renderError(c, http.StatusUnauthorized, t(c, "error.signin_refused.title"), t(c, "error.signin_refused_again.message"))
	default:
		log.Info("v2 API refused the token; renewed it, asking the user to repeat", slog.Any("err", apiErr))
		h.renderError(c, http.StatusUnauthorized, t(c, "error.signin_renewed.title"), t(c, "error.signin_renewed.message"))
	}
}

// renderError answers an error: the error page inside the layout for full requests; for htmx
// requests a toast fragment with HX-Retarget: #toasts and HX-Reswap: beforeend, so the toast lands
// in the toast region and the element that made the request keeps its content. The status is the
// real one; htmx swaps error answers because the layout configures responseHandling to.
func (h *Handler) renderError(c *gin.Context, status int, title, message string) {
	id := requestIDOf(c)
	if isHTMX(c) {
		text := message
		if text == "" {
			text = title
		}
		c.Header("HX-Retarget", "#toasts")
		c.Header("HX-Reswap", "beforeend")
		h.render(c, status, components.Toast(components.ToastError, text, id))
		return
	}
	h.renderPage(c, status, title, sectionOf(c.Request.URL.Path),
		components.ErrorPage(status, title, message, id, backLink(tr(c), c.Request.URL.Path)))
}

// notFound answers routes that do not exist.
func (h *Handler) notFound(c *gin.Context) {
	h.renderError(c, http.StatusNotFound, t(c, "error.page_not_found.title"), t(c, "error.page_not_found.message"))
}

// sectionOf is the navigation section of a path ("/customers/17" is in customers).
func sectionOf(path string) layout.Section {
	first, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	for _, item := range layout.NavItems() {
		if string(item.Section) == first {
			return item.Section
		}
	}
	return layout.SectionNone
}

// backLink is the way back offered by an error page: the list of the area the path belongs to.
func backLink(tr *i18n.Translator, path string) components.Link {
	section := sectionOf(path)
	for _, item := range layout.NavItems() {
		if item.Section == section && path != item.Href {
			return components.Link{Href: item.Href, Label: tr.T(item.BackKey)}
		}
	}
	return components.Link{Href: "/", Label: tr.T("error.back_to_start")}
}

// formatBytes is a byte count for people, written in the reader's language when shown: "1 MiB",
// "512 bytes", "1,5 Mio". A message argument resolves itself (i18n.Localized); elsewhere call In.
func formatBytes(n int64) i18n.Bytes { return i18n.Bytes(n) }

// rowPages are the routes whose own page reads the quote or contract of their path: a 404 there
// is the row's own, where a 404 of an action may be a cart's or an item's.
var rowPages = map[string]bool{
	"/quotes/:cpqId/:customerId/:quoteId": true, "/quotes/:cpqId/:customerId/:quoteId/current": true,
	"/contracts/:contractId": true, "/audits/:quoteId": true, "/palette/quotes/:quoteId": true,
}

// forgetRefusedRow applies the visibility rule's last clause at the error edge (docs/work-index.md
// "Visibility rule"): when the v2 API refused the viewer (403) anything on a quote's or a
// contract's route, or answered 404 for the row's own page, the row is forgotten for them at once
// (workindex.Forget): no list, figure or export of theirs shows it until their token reads it again.
func (h *Handler) forgetRefusedRow(c *gin.Context, err error) {
	if errors.Is(err, apiclient.ErrForbidden) {
		// Access follows the customer (docs/v2-assumptions.md A13): a refusal about one of its
		// quotes or contracts refuses the customer too.
		if id, perr := strconv.ParseInt(c.Param("customerId"), 10, 32); perr == nil && id > 0 {
			h.forgetRefusedCustomer(c, int32(id))
		}
	}
	if !(errors.Is(err, apiclient.ErrForbidden) || (errors.Is(err, apiclient.ErrNotFound) && rowPages[c.FullPath()])) {
		return
	}
	kind, raw := workindex.KindContract, c.Param("contractId")
	if raw == "" {
		kind, raw = workindex.KindQuote, c.Param("quoteId")
	}
	id, perr := strconv.ParseInt(raw, 10, 64)
	if perr != nil || id < 1 {
		return
	}
	h.forgetForViewer(c.Request.Context(), c, h.viewer(c), kind, id, err)
}
