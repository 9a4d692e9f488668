package handlers

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/textrules"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// Path parameter parsing. Every id is checked before any v2 call, so a malformed address answers
// 400 from the portal and never becomes part of an upstream URL (docs/v2-assumptions.md:
// ids are >= 1; int32 for cpqId, customerId, tofId, contractId...; int64 for quoteId, basketId...).
//
// Usage in a handler:
//
//	customerID, err := parseInt32ID(c, "customerId")
//	if err != nil {
//		h.fail(c, err) // 400 page or toast
//		return
//	}

// parseInt32ID reads the path parameter name as an int32 id (1 to 2147483647).
func parseInt32ID(c *gin.Context, name string) (int32, error) {
	n, err := parseID(c.Param(name), name, math.MaxInt32)
	return int32(n), err
}

// parseInt64ID reads the path parameter name as an int64 id (1 to 9223372036854775807).
func parseInt64ID(c *gin.Context, name string) (int64, error) {
	return parseID(c.Param(name), name, math.MaxInt64)
}

// parseID accepts only ASCII digits (no sign, no spaces, no hex) for a value from 1 to maxValue.
func parseID(raw, name string, maxValue int64) (int64, error) {
	if raw == "" || len(raw) > 19 {
		return 0, badRequest("error.path_param", name, maxValue)
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] < '0' || raw[i] > '9' {
			return 0, badRequest("error.path_param", name, maxValue)
		}
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 1 || n > maxValue {
		return 0, badRequest("error.path_param", name, maxValue)
	}
	return n, nil
}

// maxContractNumberRunes bounds a contract number: the spec gives none (docs/v2-assumptions.md A7,
// contract numbers are strings such as C-2026-000042); 200 is far above any real one.
const maxContractNumberRunes = 200

// validateContractNumber checks a contract number before it is path-escaped into a v2 URL:
// non-empty, at most 200 characters, valid UTF-8, no control characters.
func validateContractNumber(s string) error {
	switch {
	case s == "":
		return badRequest("contracts.error.number_empty")
	case !utf8.ValidString(s):
		return badRequest("contracts.error.number_chars")
	case utf8.RuneCountInString(s) > maxContractNumberRunes:
		return badRequest("contracts.error.number_too_long", maxContractNumberRunes)
	}
	if !textrules.Acceptable(s, false) { // controls, bidirectional and other format characters
		return badRequest("contracts.error.number_chars")
	}
	return nil
}

// contractNumberParam reads and validates the path parameter name as a contract number.
func contractNumberParam(c *gin.Context, name string) (string, error) {
	s := c.Param(name)
	if err := validateContractNumber(s); err != nil {
		return "", err
	}
	return s, nil
}

// parseQuoteRef reads the three ids of a documents route's path
// (/quotes/:cpqId/:customerId/:quoteId/...); bad ones answer 400 before any v2 call. The v2 API has
// no "get quote" call: the quote document (with its attachments and contract) is read through
// call 10, toflist, which needs all three (docs/v2-assumptions.md A4, A6).
func parseQuoteRef(c *gin.Context) (quotes.Ref, error) {
	cpqID, err := parseInt32ID(c, "cpqId")
	if err != nil {
		return quotes.Ref{}, err
	}
	customerID, err := parseInt32ID(c, "customerId")
	if err != nil {
		return quotes.Ref{}, err
	}
	quoteID, err := parseInt64ID(c, "quoteId")
	if err != nil {
		return quotes.Ref{}, err
	}
	return quotes.Ref{CPQID: cpqID, CustomerID: customerID, QuoteID: quoteID}, nil
}
