package v2sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// maxJSONBody bounds request bodies of JSON calls. The spec gives no limit (section 8); a customer document
// with generous attributes is far below it.
const maxJSONBody = 1 << 20

// parseID parses a canonical decimal identifier >= 1 that fits in bits (32 or 64). Only plain digits without a
// sign or leading zero are accepted: a client that formats ids normally never sends anything else, and the
// strict reading catches clients that build paths by string concatenation (docs/v2-assumptions.md A2).
func parseID(s string, bits int) (int64, bool) {
	if s == "" || len(s) > 19 || s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, bits)
	if err != nil || v < 1 {
		return 0, false
	}
	return v, true
}

// pathInt32 reads an int path parameter (A2 BAD_PATH_PARAMETER when malformed).
func pathInt32(r *http.Request, name string) (int32, error) {
	raw := r.PathValue(name)
	v, ok := parseID(raw, 32)
	if !ok {
		return 0, newError(http.StatusBadRequest, codeBadPathParameter,
			"path parameter %s must be an integer between 1 and %d, got %q", name, math.MaxInt32, raw)
	}
	return int32(v), nil
}

// pathInt64 reads a long path parameter (A2 BAD_PATH_PARAMETER when malformed).
func pathInt64(r *http.Request, name string) (int64, error) {
	raw := r.PathValue(name)
	v, ok := parseID(raw, 64)
	if !ok {
		return 0, newError(http.StatusBadRequest, codeBadPathParameter,
			"path parameter %s must be an integer between 1 and %d, got %q", name, int64(math.MaxInt64), raw)
	}
	return v, nil
}

// queryID reads a required id query parameter (A2: a bad query parameter is BAD_REQUEST).
func queryID(r *http.Request, name string, bits int) (int64, error) {
	values, ok := r.URL.Query()[name]
	if !ok || len(values) == 0 {
		return 0, errBadRequest("query parameter %s is required", name)
	}
	if len(values) > 1 {
		return 0, errBadRequest("query parameter %s is given %d times", name, len(values))
	}
	v, valid := parseID(values[0], bits)
	if !valid {
		return 0, errBadRequest("query parameter %s must be an integer >= 1, got %q", name, values[0])
	}
	return v, nil
}

// requireNoBody rejects a request that carries a body where the spec allows none (A2 BAD_REQUEST), e.g. the
// init call (A3) and every GET and DELETE.
func requireNoBody(r *http.Request) error {
	if r.ContentLength > 0 {
		return errBadRequest("this call takes no request body (got %d bytes)", r.ContentLength)
	}
	if r.ContentLength < 0 && r.Body != nil {
		var one [1]byte
		if n, _ := io.ReadFull(r.Body, one[:]); n > 0 {
			return errBadRequest("this call takes no request body")
		}
	}
	return nil
}

// isJSONContentType accepts application/json with optional parameters (e.g. charset=utf-8).
func isJSONContentType(v string) bool {
	if v == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(v)
	return err == nil && mt == "application/json"
}

// readJSONBody reads a required JSON body: 400 when absent, 415 without Content-Type application/json, 413 over
// maxJSONBody.
func readJSONBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, errBadRequest("a JSON request body is required")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxJSONBody+1))
	if err != nil {
		return nil, errBadRequest("reading the request body: %v", err)
	}
	if len(body) > maxJSONBody {
		return nil, newError(http.StatusRequestEntityTooLarge, codePayloadTooLarge, "JSON bodies are limited to %d bytes", maxJSONBody)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errBadRequest("a JSON request body is required")
	}
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		return nil, newError(http.StatusUnsupportedMediaType, codeUnsupportedMedia,
			"a JSON body needs Content-Type: application/json, got %q", r.Header.Get("Content-Type"))
	}
	return body, nil
}

// decodeJSON reads a JSON object body into dst. It is tolerant of unknown fields ("readers ignore unknown
// fields") but strict on types: a string where a number is expected, a fraction or an out-of-range number for
// an integer id, or trailing data answer 400 BAD_REQUEST (A2). Required fields are pointers checked by callers
// (422).
func decodeJSON(r *http.Request, dst any) error {
	body, err := readJSONBody(r)
	if err != nil {
		return err
	}
	trimmed := bytes.TrimSpace(body)
	if trimmed[0] != '{' {
		return errBadRequest("the request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errBadRequest("malformed JSON: unexpected data after the object")
	}
	return nil
}

// jsonError turns a decoding error into a 400 that names the field.
func jsonError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := typeErr.Field
		if field == "" {
			field = "(body)"
		}
		return &apiError{Status: http.StatusBadRequest, Code: codeBadRequest,
			Message:     "wrong JSON type for " + field + ": got " + typeErr.Value + ", want " + typeErr.Type.String(),
			FieldErrors: nil}
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return errBadRequest("malformed JSON at offset %d: %v", syntaxErr.Offset, syntaxErr)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errBadRequest("malformed JSON: unexpected end of body")
	}
	return errBadRequest("malformed JSON: %v", err)
}

// acceptQ answers the quality the Accept header gives mediaType (1 when the header is absent).
func acceptQ(accept, mediaType string) float64 {
	if strings.TrimSpace(accept) == "" {
		return 1
	}
	typ, _, _ := strings.Cut(mediaType, "/")
	best := 0.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if qs, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(qs, 64); err == nil {
				q = f
			}
		}
		if mt == mediaType || mt == "*/*" || mt == typ+"/*" {
			best = max(best, q)
		}
	}
	return best
}
