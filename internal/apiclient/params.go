package apiclient

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxSegmentBytes bounds a string path parameter (a contract number, an
// attachment type) and the query text of a customer search.
const MaxSegmentBytes = 1024

// param is one validated path or query parameter. err is set when the value
// must not become part of a URL; newRequest reports it before sending.
type param struct {
	name  string
	value string
	err   error
}

// id32 is an int32 identifier (docs/v2-assumptions.md, conventions: an id is >= 1).
func id32(name string, v int32) param {
	if v < 1 {
		return param{name: name, err: fmt.Errorf("%w: %s must be >= 1, got %d", ErrInvalidParameter, name, v)}
	}
	return param{name: name, value: strconv.FormatInt(int64(v), 10)}
}

// id64 is an int64 identifier (>= 1).
func id64(name string, v int64) param {
	if v < 1 {
		return param{name: name, err: fmt.Errorf("%w: %s must be >= 1, got %d", ErrInvalidParameter, name, v)}
	}
	return param{name: name, value: strconv.FormatInt(v, 10)}
}

// segment is a string path parameter. It is escaped later as exactly one
// path segment (url.PathEscape: "/" becomes %2F, "%" becomes %25), so no
// value can change the path. "." and ".." are refused because servers and
// proxies remove such segments even when they stand alone.
func segment(name, v string) param {
	switch {
	case v == "":
		return param{name: name, err: fmt.Errorf("%w: %s must not be empty", ErrInvalidParameter, name)}
	case len(v) > MaxSegmentBytes:
		return param{name: name, err: fmt.Errorf("%w: %s is %d bytes, more than %d", ErrInvalidParameter, name, len(v), MaxSegmentBytes)}
	case v == "." || v == "..":
		return param{name: name, err: fmt.Errorf("%w: %s must not be %q", ErrInvalidParameter, name, v)}
	case !utf8.ValidString(v):
		return param{name: name, err: fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalidParameter, name)}
	}
	return param{name: name, value: v}
}

// expandPath fills the {placeholders} of an endpoint's path template with the
// params, in order. It returns the decoded path and its escaped form, for
// url.URL's Path and RawPath.
func expandPath(template string, params []param) (path, rawPath string, err error) {
	var p, raw strings.Builder
	rest := template
	i := 0
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			p.WriteString(rest)
			raw.WriteString(rest)
			break
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return "", "", fmt.Errorf("path template %q: unclosed {", template)
		}
		if i >= len(params) {
			return "", "", fmt.Errorf("path template %q: %d parameters given", template, len(params))
		}
		name := rest[open+1 : open+end]
		if params[i].name != name {
			return "", "", fmt.Errorf("path template %q: parameter %d is %s, want %s", template, i, params[i].name, name)
		}
		p.WriteString(rest[:open])
		raw.WriteString(rest[:open])
		p.WriteString(params[i].value)
		raw.WriteString(url.PathEscape(params[i].value))
		rest = rest[open+end+1:]
		i++
	}
	if i != len(params) {
		return "", "", fmt.Errorf("path template %q: %d parameters given, %d used", template, len(params), i)
	}
	return p.String(), raw.String(), nil
}

// ParseID32 parses a decimal int32 identifier (>= 1) from untrusted text, such
// as a URL segment of the portal, with a clear error wrapping
// [ErrInvalidParameter].
func ParseID32(s string) (int32, error) {
	v, err := parseID(s, math.MaxInt32)
	return int32(v), err
}

func parseID(s string, maxValue int64) (int64, error) {
	if s == "" || len(s) > 19 {
		return 0, fmt.Errorf("%w: id %.32q is not a number from 1 to %d", ErrInvalidParameter, s, maxValue)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%w: id %.32q is not a number from 1 to %d", ErrInvalidParameter, s, maxValue)
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 1 || v > maxValue {
		return 0, fmt.Errorf("%w: id %.32q is not a number from 1 to %d", ErrInvalidParameter, s, maxValue)
	}
	return v, nil
}
