package handlers

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// Configuration sessions (spec rule R4, docs/v2-assumptions.md A3).
//
// The sessionId of call 2 lives in the user's session, keyed by configurator, customer and quote
// (session.CPQKey; QuoteID 0 until call 3 has created the quote, then re-keyed), so two quotes in
// two tabs never share or clobber a session. It is sent as X-SessionId on calls 3-9 and 11-16
// only; calls 1, 2 and 10 go without it (the API client applies that rule per endpoint).
//
// A quote opened from its address by someone without a session for it (a bookmark, a colleague)
// is shown with call 10 alone; the first action starts a session with call 2. When the v2 API
// answers SESSION_INVALID (expired after 30 minutes without use), the user is told and restarts
// the session in one click; the action is not retried on their behalf.

// sessionSaver is implemented by *auth.Authenticator: it persists changes made to the user's
// session. Asserted rather than added to the Authenticator interface, which other areas implement
// in their tests.
type sessionSaver interface {
	SaveSession(c *gin.Context) error
}

// saveUserSession persists the user's session (the CPQ session ids) before the response is written.
func (h *Handler) saveUserSession(c *gin.Context) error {
	saver, ok := h.auth.(sessionSaver)
	if !ok {
		return errors.New("handlers: the authenticator cannot save sessions")
	}
	return saver.SaveSession(c)
}

// cpqKeyOf is the session key of a quote.
func cpqKeyOf(ref quotes.Ref) session.CPQKey {
	return session.CPQKey{CPQID: ref.CPQID, CustomerID: ref.CustomerID, QuoteID: ref.QuoteID}
}

// hasCPQSession reports whether the user holds a configuration session for key.
func hasCPQSession(c *gin.Context, key session.CPQKey) bool {
	s := auth.CurrentSession(c)
	if s == nil {
		return false
	}
	_, ok := s.CPQSession(key)
	return ok
}

// cpqSession returns the user's configuration session for key, starting one (call 2) when they
// have none.
func (h *Handler) cpqSession(c *gin.Context, key session.CPQKey) (string, error) {
	s := auth.CurrentSession(c)
	if s == nil {
		return "", auth.ErrNotSignedIn
	}
	if id, ok := s.CPQSession(key); ok {
		return id, nil
	}
	res, err := h.startCPQSession(c, key)
	if err != nil {
		return "", err
	}
	return res.SessionID, nil
}

// startCPQSession starts a new configuration session (call 2) and remembers it under key.
func (h *Handler) startCPQSession(c *gin.Context, key session.CPQKey) (*apiclient.InitResult, error) {
	s := auth.CurrentSession(c)
	if s == nil {
		return nil, auth.ErrNotSignedIn
	}
	res, err := h.api.CPQ.Init(h.apiContext(c), key.CPQID, key.CustomerID)
	if err != nil {
		return nil, fmt.Errorf("start configuration session for configurator %d, customer %d: %w", key.CPQID, key.CustomerID, err)
	}
	if res.SessionID == "" {
		return nil, fmt.Errorf("start configuration session: %w: no sessionId", apiclient.ErrMalformedResponse)
	}
	s.SetCPQSession(key, res.SessionID, h.now())
	if err := h.saveUserSession(c); err != nil {
		return nil, err
	}
	h.log(c).Info("configuration session started", slog.Int("cpq_id", int(key.CPQID)),
		slog.Int("customer_id", int(key.CustomerID)), slog.Int64("quote_id", key.QuoteID))
	return res, nil
}

// forgetCPQSession drops a session the v2 API no longer accepts.
func (h *Handler) forgetCPQSession(c *gin.Context, key session.CPQKey) {
	s := auth.CurrentSession(c)
	if s == nil {
		return
	}
	if _, ok := s.CPQSession(key); !ok {
		return
	}
	s.DeleteCPQSession(key)
	if err := h.saveUserSession(c); err != nil {
		h.log(c).Warn("forgetting an expired configuration session failed", slog.Any("err", err))
	}
}

// quoteAlert is the "session expired" prompt of a quote page: restart for the same quote.
func quoteAlert(ref quotes.Ref) quotes.SessionAlertVM {
	return quotes.SessionAlertVM{
		RestartURL: ref.Sub("/session"),
		Target:     "#quote-session-alert",
		Message:    i18n.M("quote.session.quote_safe"),
	}
}

// startAlert is the prompt of the start flow (no quote yet): start the session again for the
// same configurator and customer.
func startAlert(cpqID, customerID int32) quotes.SessionAlertVM {
	return quotes.SessionAlertVM{
		RestartURL: "/quotes/new",
		Target:     "#quote-start-step",
		Fields: []components.KV{
			{Key: "cpqId", Value: strconv.FormatInt(int64(cpqID), 10)},
			{Key: "customerId", Value: strconv.FormatInt(int64(customerID), 10)},
		},
		Message: i18n.M("start.session_restart"),
	}
}

// failCPQ is the error edge of configuration actions. SESSION_INVALID forgets the session and
// shows the restart prompt; a 422 with field errors goes to the form's error slot (formID, when
// the action has a form; fields maps v2 body field names to input ids); anything else to h.fail.
func (h *Handler) failCPQ(c *gin.Context, key session.CPQKey, alert quotes.SessionAlertVM, formID string, fields map[string]string, err error) {
	if errors.Is(err, apiclient.ErrSessionInvalid) {
		h.forgetCPQSession(c, key)
		h.log(c).Info("configuration session expired upstream", slog.Any("err", err))
		if !isHTMX(c) {
			h.renderError(c, http.StatusConflict, t(c, "error.session_expired.title"), alert.Message.In(tr(c)))
			return
		}
		announce(c, t(c, "quote.session.expired_announce"))
		c.Header("HX-Retarget", alert.Target)
		c.Header("HX-Reswap", "innerHTML")
		h.render(c, http.StatusConflict, quotes.SessionAlert(alert))
		return
	}
	if formID != "" {
		if fe := fieldErrorsFrom(err); fe != nil && errors.Is(err, apiclient.ErrUnprocessable) {
			h.log(c).Info("the v2 API refused the values", slog.Any("err", err))
			var errs []components.FieldError
			for field, msg := range fe {
				id := fields[field]
				if id == "" {
					id = formID
				}
				errs = append(errs, components.FieldError{FieldID: id, Message: field + ": " + msg})
			}
			sortFieldErrors(errs)
			h.renderFormErrors(c, formID, http.StatusUnprocessableEntity, errs)
			return
		}
	}
	h.fail(c, err)
}

// restartQuoteSession is "Restart session" on a quote page: a new configuration session (call 2)
// for the same quote. Nothing is retried: the user repeats their action.
func (h *Handler) restartQuoteSession(c *gin.Context) {
	ref, err := parseQuoteRef(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	if _, err := h.startCPQSession(c, cpqKeyOf(ref)); err != nil {
		h.fail(c, err)
		return
	}
	if !isHTMX(c) {
		c.Redirect(http.StatusSeeOther, ref.URL())
		return
	}
	announce(c, t(c, "quote.session.restarted_announce"))
	h.render(c, http.StatusOK, quotes.SessionRestarted()) // replaces the prompt
}
