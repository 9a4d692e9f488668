package v2sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// Error codes of docs/v2-assumptions.md A2.
const (
	codeBadPathParameter  = "BAD_PATH_PARAMETER"
	codeBadRequest        = "BAD_REQUEST"
	codeSessionRequired   = "SESSION_REQUIRED"
	codeSessionInvalid    = "SESSION_INVALID"
	codeSessionNotAllowed = "SESSION_NOT_ALLOWED"
	codeUnauthorized      = "UNAUTHORIZED"
	codeInvalidToken      = "INVALID_TOKEN"
	codeNotFound          = "NOT_FOUND"
	codeMethodNotAllowed  = "METHOD_NOT_ALLOWED"
	codeConflict          = "CONFLICT"
	codePayloadTooLarge   = "PAYLOAD_TOO_LARGE"
	codeUnsupportedMedia  = "UNSUPPORTED_MEDIA_TYPE"
	codeValidationFailed  = "VALIDATION_FAILED"
	codeInternal          = "INTERNAL"
)

// fieldError names one unacceptable body field (A2 fieldErrors).
type fieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// apiError is an error answered with the A2 error body. Handlers return it; ServeHTTP renders it once.
type apiError struct {
	Status      int
	Code        string
	Message     string
	FieldErrors []fieldError
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// errorBody is the wire shape of A2.
type errorBody struct {
	Status      int          `json:"status"`
	Code        string       `json:"code"`
	Message     string       `json:"message"`
	Path        string       `json:"path"`
	FieldErrors []fieldError `json:"fieldErrors,omitempty"`
}

func newError(status int, code, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func errBadRequest(format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, codeBadRequest, format, args...)
}

func errNotFound(format string, args ...any) *apiError {
	return newError(http.StatusNotFound, codeNotFound, format, args...)
}

func errConflict(format string, args ...any) *apiError {
	return newError(http.StatusConflict, codeConflict, format, args...)
}

// errValidation is a 422 with one field error.
func errValidation(field, message string) *apiError {
	return &apiError{Status: http.StatusUnprocessableEntity, Code: codeValidationFailed,
		Message: "validation failed: " + field + " " + message, FieldErrors: []fieldError{{Field: field, Message: message}}}
}

// validator collects field errors so one 422 names every bad field at once.
type validator struct{ errs []fieldError }

func (v *validator) add(field, format string, args ...any) {
	v.errs = append(v.errs, fieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) check(ok bool, field, format string, args ...any) {
	if !ok {
		v.add(field, format, args...)
	}
}

// err answers nil when nothing failed, else the 422.
func (v *validator) err() error {
	if len(v.errs) == 0 {
		return nil
	}
	msg := "validation failed"
	if len(v.errs) == 1 {
		msg += ": " + v.errs[0].Field + " " + v.errs[0].Message
	} else {
		msg += " on " + strconv.Itoa(len(v.errs)) + " fields"
	}
	return &apiError{Status: http.StatusUnprocessableEntity, Code: codeValidationFailed, Message: msg, FieldErrors: v.errs}
}

// codeForStatus is the A2 code used when a fault forces a status.
func codeForStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return codeBadRequest
	case http.StatusUnauthorized:
		return codeUnauthorized
	case http.StatusForbidden:
		return "FORBIDDEN"
	case http.StatusNotFound:
		return codeNotFound
	case http.StatusConflict:
		return codeConflict
	case http.StatusRequestEntityTooLarge:
		return codePayloadTooLarge
	case http.StatusUnprocessableEntity:
		return codeValidationFailed
	case http.StatusTooManyRequests:
		return "TOO_MANY_REQUESTS"
	case http.StatusBadGateway:
		return "BAD_GATEWAY"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "GATEWAY_TIMEOUT"
	}
	return codeInternal
}

// writeErrorBody answers the A2 body for e.
func writeErrorBody(w http.ResponseWriter, r *http.Request, e *apiError) {
	body, _ := marshalJSON(errorBody{Status: e.Status, Code: e.Code, Message: e.Message,
		Path: r.URL.EscapedPath(), FieldErrors: e.FieldErrors})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Del("Content-Disposition")
	if e.Status == http.StatusUnauthorized {
		if e.Code == codeInvalidToken {
			h.Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		} else {
			h.Set("WWW-Authenticate", "Bearer")
		}
	}
	w.WriteHeader(e.Status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// writeJSON answers a pre-encoded JSON body.
func writeJSON(w http.ResponseWriter, status int, body []byte) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, err := w.Write(body)
	return err
}

// marshalJSON encodes without HTML escaping ("&" stays "&"), so bodies read naturally in logs and curl.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
