package auth

import (
	"net/url"
	"strings"
)

// maxReturnTo bounds the return-to target (it travels in a cookie).
const maxReturnTo = 2048

// safeReturnTo accepts only a same-origin relative path: it starts with exactly one "/" (not "//" or
// "/\", which browsers read as another host), has no scheme, backslash or control character, also after
// percent-decoding once (so "/%2F%2Fevil.example" is refused too), and does not point back into /auth/
// (a loop). Anything else becomes "/", so a crafted login link can never send the user elsewhere.
func safeReturnTo(raw string) string {
	if !isSafePath(raw) || len(raw) > maxReturnTo {
		return "/"
	}
	decoded, err := url.PathUnescape(raw)
	if err != nil || !isSafePath(decoded) {
		return "/"
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return "/"
	}
	if u.Path == "/auth" || strings.HasPrefix(u.Path, "/auth/") {
		return "/"
	}
	return raw
}

func isSafePath(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
		return false
	}
	for _, r := range p {
		if r == '\\' || r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// sameOriginReturnTo turns an absolute URL (htmx's HX-Current-URL) into a return-to target when it is on
// the portal's own origin; otherwise it returns "".
func (a *Authenticator) sameOriginReturnTo(absolute string) string {
	u, err := url.Parse(absolute)
	if err != nil || a.cfg.PublicURL == nil || !strings.EqualFold(u.Scheme, a.cfg.PublicURL.Scheme) ||
		!strings.EqualFold(u.Host, a.cfg.PublicURL.Host) {
		return ""
	}
	target := u.EscapedPath()
	if target == "" {
		target = "/"
	}
	if u.RawQuery != "" {
		target += "?" + u.RawQuery
	}
	if safe := safeReturnTo(target); safe == target {
		return target
	}
	return ""
}
