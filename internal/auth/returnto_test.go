package auth

import (
	"net/url"
	"testing"
)

func TestSafeReturnTo(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		// Same-origin relative paths are kept.
		"/":                      "/",
		"/quotes":                "/quotes",
		"/quotes?tab=2&q=a%20b":  "/quotes?tab=2&q=a%20b",
		"/customers/7#contracts": "/customers/7#contracts",
		"/search?q=100%25":       "/search?q=100%25",
		"/a/b/../c":              "/a/b/../c",
		// Everything that could leave the origin, or is odd, becomes "/".
		"":                        "/",
		"//evil.example":          "/",
		"//evil.example/path":     "/",
		"///evil.example":         "/",
		"https://evil.example":    "/",
		"http://evil.example/x":   "/",
		"/\\evil.example":         "/",
		"\\\\evil":                "/",
		"\\/evil.example":         "/",
		"/%2F%2Fevil.example":     "/",
		"/%2f%2fevil.example":     "/",
		"/%5Cevil.example":        "/",
		"/%5cevil.example":        "/",
		"javascript:alert(1)":     "/",
		"JavaScript:alert(1)":     "/",
		"/quotes\r\nSet-Cookie:x": "/",
		"/quotes%0d%0aX:y":        "/",
		"/quotes\x00":             "/",
		"/quotes\t":               "/",
		"quotes":                  "/",
		"evil.example":            "/",
		"/%zz":                    "/",
		"/auth/logout":            "/",
		"/auth/login?return_to=/": "/",
		"/auth":                   "/",
	}
	for in, want := range cases {
		if got := safeReturnTo(in); got != want {
			t.Errorf("safeReturnTo(%q) = %q, want %q", in, got, want)
		}
	}
	long := "/" + string(make([]byte, maxReturnTo))
	if got := safeReturnTo(long); got != "/" {
		t.Errorf("overlong target kept")
	}
}

func TestSameOriginReturnTo(t *testing.T) {
	t.Parallel()
	public, _ := url.Parse("https://portal.example")
	a := &Authenticator{cfg: Config{PublicURL: public}}
	cases := map[string]string{
		"https://portal.example/quotes?tab=1":  "/quotes?tab=1",
		"https://PORTAL.example/customers/7":   "/customers/7",
		"https://portal.example":               "/",
		"http://portal.example/quotes":         "",
		"https://evil.example/quotes":          "",
		"https://portal.example.evil/quotes":   "",
		"https://portal.example//evil.example": "",
		"/quotes":                              "",
		"not a url\x00":                        "",
	}
	for in, want := range cases {
		if got := a.sameOriginReturnTo(in); got != want {
			t.Errorf("sameOriginReturnTo(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzSafeReturnTo(f *testing.F) {
	for _, seed := range []string{"/quotes", "//evil", "/\\evil", "/%2F%2Fx", "https://x"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := safeReturnTo(in)
		u, err := url.Parse(got)
		if err != nil || u.Scheme != "" || u.Host != "" || got[0] != '/' || (len(got) > 1 && (got[1] == '/' || got[1] == '\\')) {
			t.Fatalf("safeReturnTo(%q) = %q leaves the origin", in, got)
		}
		// Resolved against our origin, the target must stay there.
		base, _ := url.Parse("https://portal.example/x/y")
		if resolved := base.ResolveReference(u); resolved.Host != "portal.example" {
			t.Fatalf("safeReturnTo(%q) = %q resolves to %s", in, got, resolved)
		}
	})
}
