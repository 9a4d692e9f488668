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

var (
	digitsOnly = regexp.MustCompile(`^[0-9]+$`)
	// moneyInput: digits with at most two decimals, "." or "," as the separator.
	moneyInput = regexp.MustCompile(`^[0-9]{1,7}([.,][0-9]{1,2})?$`)
	// percentInput: a percentage with at most two decimals.
	percentInput = regexp.MustCompile(`^[0-9]{1,3}([.,][0-9]{1,2})?$`)
)

// formErrors collects the messages of a form, in form order.
type formErrors []components.FieldError

func (e *formErrors) add(fieldID, message string) {
	*e = append(*e, components.FieldError{FieldID: fieldID, Message: message})
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

// parseQuantity reads a cart quantity: a whole number from 1 to 9999 (A5 #8).
func parseQuantity(raw string) (int32, string) {
	switch {
	case raw == "":
		return 0, "Enter a quantity."
	case !digitsOnly.MatchString(raw):
		if strings.HasPrefix(raw, "-") {
			return 0, "The quantity must be at least 1."
		}
		return 0, "The quantity must be a whole number, like 3."
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 1 || n > maxQuantity {
		return 0, "The quantity must be between 1 and 9999."
	}
	return int32(n), ""
}

// parsePrice reads a unit price in euros: 0 to 1,000,000 with at most two decimals (A5 #13).
func parsePrice(raw, what string) (float64, string) {
	raw = strings.TrimPrefix(strings.TrimSpace(raw), "€")
	raw = strings.TrimSpace(raw)
	switch {
	case raw == "":
		return 0, "Enter the " + what + "."
	case strings.HasPrefix(raw, "-"):
		return 0, "The " + what + " cannot be negative."
	case !moneyInput.MatchString(raw):
		return 0, "The " + what + " must be an amount in euros with at most two decimals, like 49.90."
	}
	v, err := strconv.ParseFloat(strings.Replace(raw, ",", ".", 1), 64)
	if err != nil || v < 0 || v > maxRepricePrice {
		return 0, "The " + what + " must be between 0 and 1,000,000."
	}
	return v, ""
}

// parsePercent reads an extra discount value: more than 0 and at most maxValue (A5 #12).
func parsePercent(raw string, maxValue float64, name string) (float64, string) {
	switch {
	case strings.HasPrefix(raw, "-"):
		return 0, name + " must be more than 0."
	case !percentInput.MatchString(raw):
		return 0, name + " must be a percentage with at most two decimals, like 5 or 7.5."
	}
	v, err := strconv.ParseFloat(strings.Replace(raw, ",", ".", 1), 64)
	if err != nil || v <= 0 || v > maxValue {
		return 0, name + " must be more than 0 and at most " + strconv.FormatFloat(maxValue, 'f', -1, 64) + "."
	}
	return v, ""
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
		h.renderError(c, status, "The request is not valid", strings.Join(msgs, " "))
		return
	}
	announce(c, "There is a problem: "+errs[0].Message)
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
