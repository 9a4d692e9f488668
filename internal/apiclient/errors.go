package apiclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Errors raised before a request is sent.
var (
	// ErrNoToken: the call's context has no access token (see [WithToken]).
	ErrNoToken = errors.New("no access token in context")
	// ErrNoSessionID: a call that must carry X-SessionId (rule R4) got none.
	ErrNoSessionID = errors.New("no configuration session id")
	// ErrInvalidParameter: a parameter would make a bad URL, header or body.
	ErrInvalidParameter = errors.New("invalid parameter")
)

// Errors about an answer that is not what the endpoint promises.
var (
	// ErrMalformedResponse: a 2xx answer whose body is not the expected JSON
	// (or not a PDF where a PDF was asked for).
	ErrMalformedResponse = errors.New("malformed response")
	// ErrResponseTooLarge: a JSON answer over the client's bound
	// ([DefaultMaxResponseBytes], docs/v2-assumptions.md A9).
	ErrResponseTooLarge = errors.New("response too large")
)

// Sentinels an [*APIError] matches with errors.Is, by status
// (docs/v2-assumptions.md A2).
var (
	ErrBadRequest           = errors.New("bad request")            // 400
	ErrUnauthorized         = errors.New("unauthorized")           // 401
	ErrForbidden            = errors.New("forbidden")              // 403
	ErrNotFound             = errors.New("not found")              // 404
	ErrConflict             = errors.New("conflict")               // 409
	ErrPayloadTooLarge      = errors.New("payload too large")      // 413
	ErrUnsupportedMediaType = errors.New("unsupported media type") // 415
	ErrUnprocessable        = errors.New("validation failed")      // 422
	ErrServer               = errors.New("v2 service failure")     // 5xx
	ErrSessionInvalid       = errors.New("cpq session invalid")    // 400 SESSION_INVALID
)

// CodeSessionInvalid is the error code of an unknown or expired configuration
// session (docs/v2-assumptions.md A2, A3).
const CodeSessionInvalid = "SESSION_INVALID"

const (
	errorExcerptBytes = 4 << 10  // APIError.Body bound (A9)
	errorParseBytes   = 64 << 10 // how much of an error body is read to parse it
)

// FieldError is one rejected body field of a validation failure.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// APIError is a non-2xx answer of the v2 API (rule R3).
type APIError struct {
	Method   string // HTTP method
	Endpoint string // endpoint name, e.g. "customers.get"
	Path     string // escaped URL path, without the query
	Status   int    // HTTP status
	// Code, Message and FieldErrors come from the JSON error body (A2); they
	// are empty when the body is not that format.
	Code        string
	Message     string
	FieldErrors []FieldError
	// RequestID is the answer's X-Request-Id, when present.
	RequestID string
	// Body is the start of the answer's body, at most 4 KiB.
	Body string
}

// Error names the method, path and status, then the service's code and message.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiclient: %s %s (%s): %d %s", e.Method, e.Path, e.Endpoint, e.Status, http.StatusText(e.Status))
	if e.Code != "" {
		b.WriteString(": ")
		b.WriteString(e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Is matches the status sentinels (ErrNotFound for 404 and so on) and
// ErrSessionInvalid for a 400 with code SESSION_INVALID.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrBadRequest:
		return e.Status == http.StatusBadRequest
	case ErrSessionInvalid:
		return e.Status == http.StatusBadRequest && e.Code == CodeSessionInvalid
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized
	case ErrForbidden:
		return e.Status == http.StatusForbidden
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrConflict:
		return e.Status == http.StatusConflict
	case ErrPayloadTooLarge:
		return e.Status == http.StatusRequestEntityTooLarge
	case ErrUnsupportedMediaType:
		return e.Status == http.StatusUnsupportedMediaType
	case ErrUnprocessable:
		return e.Status == http.StatusUnprocessableEntity
	case ErrServer:
		return e.Status >= 500 && e.Status <= 599
	}
	return false
}

// FieldMessage returns the message for field, or "" (for forms that show
// each field's message next to it).
func (e *APIError) FieldMessage(field string) string {
	for _, fe := range e.FieldErrors {
		if fe.Field == field {
			return fe.Message
		}
	}
	return ""
}

// newAPIError reads a bounded part of a failed answer's body.
func newAPIError(endpoint string, req *http.Request, resp *http.Response) *APIError {
	e := &APIError{
		Method:    req.Method,
		Endpoint:  endpoint,
		Path:      req.URL.EscapedPath(),
		Status:    resp.StatusCode,
		RequestID: resp.Header.Get("X-Request-Id"),
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, errorParseBytes))
	e.Body = excerpt(body, errorExcerptBytes)
	var parsed struct {
		Code        string       `json:"code"`
		Message     string       `json:"message"`
		FieldErrors []FieldError `json:"fieldErrors"`
	}
	if json.Unmarshal(body, &parsed) == nil {
		e.Code, e.Message, e.FieldErrors = parsed.Code, parsed.Message, parsed.FieldErrors
	}
	return e
}

// excerpt cuts b to at most n bytes without splitting a UTF-8 sequence.
func excerpt(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
		// Drop a character cut in half at the end.
		for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
			if utf8.RuneStart(b[len(b)-i]) {
				if !utf8.FullRune(b[len(b)-i:]) {
					b = b[:len(b)-i]
				}
				break
			}
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
