package handlers

import (
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// Form values of the quote area. Every value is checked here before any v2 call: a value that
// does not parse or is out of the bounds of docs/v2-assumptions.md A5 answers 400 with a message
// next to the form, and nothing is sent upstream.

// Bounds of A5.
const (
	maxQuantity     = 9999      // #8: integer 1..9999
	maxRepricePrice = 1_000_000 // #13: prices 0..1,000,000
	maxLabelRunes   = 100       // #3: label 0-100 chars
	maxSearchRunes  = 100       // customer search text (the portal's own bound)
	maxPercent      = 100       // #12: an extra discount is a percentage
	maxExtraFields  = 50        // extra discount inputs accepted in one form
)

var digitsOnly = regexp.MustCompile(`^[0-9]+$`)

// formErrors collects the messages of a form, in form order.
type formErrors []components.FieldError

func (e *formErrors) add(fieldID, message string) {
	*e = append(*e, components.FieldError{FieldID: fieldID, Message: message})
}

// addMessage adds a catalogue message in the reader's language.
func (e *formErrors) addMessage(tr *i18n.Translator, fieldID string, m i18n.Message) {
	e.add(fieldID, m.In(tr))
}

// parseForm reads the request's form (the query for DELETE, the body too for POST): ids, values
// and the previous-state fingerprint "prev".
func parseForm(c *gin.Context) error {
	return c.Request.ParseForm()
}

// formValue is a value of the parsed form, trimmed.
func formValue(c *gin.Context, name string) string {
	return strings.TrimSpace(c.Request.Form.Get(name))
}

// prevDigest is the previous-state fingerprint the page sent (quote_digest.go).
func prevDigest(c *gin.Context) quoteDigest {
	return parseDigest(c.Request.Form.Get("prev"))
}

// formID parses a positive id of at most maxValue; ok=false when it is not one.
func formID(raw string, maxValue int64) (int64, bool) {
	if raw == "" || len(raw) > 19 || !digitsOnly.MatchString(raw) {
		return 0, false
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 1 || n > maxValue {
		return 0, false
	}
	return n, true
}

// formID32 parses a positive int32 id.
func formID32(raw string) (int32, bool) {
	n, ok := formID(raw, math.MaxInt32)
	return int32(n), ok
}

// queryID32 reads an int32 id from the query string: 400 when absent or malformed.
func queryID32(c *gin.Context, name string) (int32, error) {
	n, ok := formID32(strings.TrimSpace(c.Query(name)))
	if !ok {
		return 0, badRequest("error.path_param", name, math.MaxInt32)
	}
	return n, nil
}

// parseQuantity reads a cart quantity: a whole number from 1 to 9999 (A5 #8), typed as plain
// digits, which every language reads the same way. A decimal ("2,5" in Italian) is a number but
// not a quantity: the message says so in the reader's language. The message is zero when the
// value is good.
func parseQuantity(raw string) (int32, i18n.Message) {
	switch {
	case raw == "":
		return 0, i18n.M("quote.form.quantity_empty")
	case !digitsOnly.MatchString(raw):
		if strings.HasPrefix(raw, "-") {
			return 0, i18n.M("quote.form.quantity_min")
		}
		return 0, i18n.M("quote.form.quantity_whole")
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 1 || n > maxQuantity {
		return 0, i18n.M("quote.form.quantity_range")
	}
	return int32(n), i18n.Message{}
}

// readNumber reads a number typed the reader's way ("12,5" in Italian, "12.5" in English; the
// other separator is refused) with at most maxDecimals decimals. It is the only place where the
// reader's separators are undone: what goes upstream is a plain float64, as the spec wants.
func readNumber(tr *i18n.Translator, raw string, maxDecimals int) (float64, bool) {
	v, err := tr.ParseDecimal(raw)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) { // ParseFloat would read "NaN" and "Inf"
		return 0, false
	}
	scaled := v * math.Pow10(maxDecimals)
	return v, math.Abs(scaled-math.Round(scaled)) < 1e-6
}

// parsePrice reads a unit price in euros: 0 to 1,000,000 with at most two decimals (A5 #13),
// written the reader's way ("49,90" in Italian); a euro sign before or after is ignored.
// recurring picks the words of the monthly price, else the one-off's.
func parsePrice(tr *i18n.Translator, raw string, recurring bool) (float64, i18n.Message) {
	raw = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(raw), "€"), "€"))
	pick := func(activationKey, recurringKey string, args ...any) i18n.Message {
		if recurring {
			return i18n.M(recurringKey, args...)
		}
		return i18n.M(activationKey, args...)
	}
	if raw == "" {
		return 0, pick("quote.form.activation_empty", "quote.form.recurring_empty")
	}
	if strings.HasPrefix(raw, "-") {
		return 0, pick("quote.form.activation_negative", "quote.form.recurring_negative")
	}
	v, ok := readNumber(tr, raw, 2)
	if !ok {
		return 0, pick("quote.form.activation_format", "quote.form.recurring_format", tr.Decimal(49.90, 2))
	}
	if v < 0 || v > maxRepricePrice {
		return 0, pick("quote.form.activation_range", "quote.form.recurring_range", tr.Integer(maxRepricePrice))
	}
	return v, i18n.Message{}
}

// parsePercent reads an extra discount value, written the reader's way ("12,5" in Italian): more
// than 0 and at most maxValue, with at most two decimals (A5 #12).
func parsePercent(tr *i18n.Translator, raw string, maxValue float64) (float64, i18n.Message) {
	if strings.HasPrefix(raw, "-") {
		return 0, i18n.M("quote.form.extra_positive")
	}
	v, ok := readNumber(tr, raw, 2)
	if !ok {
		return 0, i18n.M("quote.form.extra_format", tr.Decimal(7.5, 1))
	}
	if v <= 0 || v > maxValue {
		return 0, i18n.M("quote.form.extra_range", quotes.InputNumber(tr, maxValue))
	}
	return v, i18n.Message{}
}

// validText checks free text for a v2 body: valid UTF-8, no control characters, at most maxRunes.
func validText(s string, maxRunes int) bool {
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > maxRunes {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// renderFormErrors answers a form that failed validation: the error summary goes into the form's
// error slot (#<formID>-errors) and the form keeps what the user typed. Full requests get the
// error page.
func (h *Handler) renderFormErrors(c *gin.Context, formID string, status int, errs []components.FieldError) {
	if !isHTMX(c) {
		msgs := make([]string, 0, len(errs))
		for _, e := range errs {
			msgs = append(msgs, e.Message)
		}
		h.renderError(c, status, t(c, "error.bad_request.title"), strings.Join(msgs, " "))
		return
	}
	announce(c, t(c, "quote.form.problem_announce", errs[0].Message))
	c.Header("HX-Retarget", "#"+formID+"-errors")
	c.Header("HX-Reswap", "innerHTML")
	h.render(c, status, quotes.FormErrors(errs))
}

// badForm answers a form the portal refused itself (400).
func (h *Handler) badForm(c *gin.Context, formID string, errs formErrors) {
	h.renderFormErrors(c, formID, http.StatusBadRequest, errs)
}

// sortFieldErrors orders messages by field id, so the answer does not depend on map order.
func sortFieldErrors(errs []components.FieldError) {
	slices.SortFunc(errs, func(a, b components.FieldError) int { return strings.Compare(a.FieldID+a.Message, b.FieldID+b.Message) })
}
