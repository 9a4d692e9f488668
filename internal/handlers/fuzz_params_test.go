package handlers

import (
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Fuzz targets for every parser of user input in the handlers (docs/security.md, suite 2). The seed
// corpora live in testdata/fuzz/<FuzzName>/; `go test` runs the seeds as ordinary tests, and
// `make fuzz` explores each target for a few seconds (one target per go invocation):
//
//	go test -run='^$' -fuzz='^FuzzPathID$' -fuzztime=10s ./internal/handlers/
//
// Session cookie decoding is fuzzed in internal/session, the return-to check in internal/auth.

// wantBadRequest checks that a parser's error is the portal's 400 with a message for the user.
func wantBadRequest(t *testing.T, what string, err error) {
	t.Helper()
	var bad *badRequestError
	if !errors.As(err, &bad) {
		t.Fatalf("%s: error %v (%T) is not a badRequestError", what, err, err)
	}
	if f := classify(err); f.status != http.StatusBadRequest || f.message.IsZero() {
		t.Fatalf("%s: classified as %d %q, want 400 with a message", what, f.status, f.message)
	}
}

// FuzzPathID: path ids (customerId, quoteId, contractId...) are accepted only as decimal numbers
// from 1 to the type's maximum; anything else is a 400 that never becomes part of a v2 URL.
func FuzzPathID(f *testing.F) {
	for _, s := range []string{"1", "900001", "2147483647", "2147483648", "9223372036854775807", "9223372036854775808",
		"0", "-1", "+1", "01", " 1", "1 ", "1e3", "0x10", "1.0", "１", "", "../1", "1/2", "%31", strings.Repeat("9", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, maxValue := range []int64{math.MaxInt32, math.MaxInt64} {
			n, err := parseID(raw, "id", maxValue)
			if err != nil {
				wantBadRequest(t, raw, err)
				continue
			}
			if n < 1 || n > maxValue {
				t.Fatalf("%q accepted as %d, outside 1..%d", raw, n, maxValue)
			}
			for _, r := range raw {
				if r < '0' || r > '9' {
					t.Fatalf("%q accepted although it has the character %q", raw, r)
				}
			}
			// What reaches the v2 API is the canonical form of the number, never the raw text.
			canonical := strconv.FormatInt(n, 10)
			if canonical != strings.TrimLeft(raw, "0") || !secCanonicalID.MatchString(canonical) {
				t.Fatalf("%q parsed as %d, whose canonical form %q differs from the input", raw, n, canonical)
			}
		}
	})
}

// FuzzContractNumber: contract numbers (the contract search box, and any route that takes one) are
// accepted only as 1 to 200 characters of valid UTF-8 without control characters, and then always
// travel to the v2 API as exactly one path segment.
func FuzzContractNumber(f *testing.F) {
	for _, s := range []string{"C-2026-000042", "C-2026-000042/../../customer/1", "..", ".", "a/b", "a%2Fb", "a?b#c",
		"\x00", "\xff\xfe", "C\r\nX-Injected: 1", "<script>alert(1)</script>", strings.Repeat("C", 201), "", " ", "１２"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := validateContractNumber(s)
		problem := contractQueryProblem(s)
		if err != nil {
			wantBadRequest(t, s, err)
			if problem.IsZero() {
				t.Fatalf("%q: refused by validateContractNumber but accepted by the contract search", s)
			}
			return
		}
		if !utf8.ValidString(s) || s == "" || utf8.RuneCountInString(s) > maxContractNumberRunes {
			t.Fatalf("%q accepted: not 1 to %d runes of valid UTF-8", s, maxContractNumberRunes)
		}
		for _, r := range s {
			if unicode.IsControl(r) {
				t.Fatalf("%q accepted with the control character %U", s, r)
			}
		}
		if !problem.IsZero() && s != "." && s != ".." {
			t.Fatalf("%q: accepted by validateContractNumber but the search says %v", s, problem)
		}
		if s == "." || s == ".." {
			if problem.IsZero() {
				t.Fatalf("%q would become a dot segment upstream, yet the search accepts it", s)
			}
			return
		}
		// The v2 URL the client builds (one url.PathEscape'd segment) keeps the path's shape.
		v2 := "/v2/contract/bycontractnumber/" + url.PathEscape(s)
		if got := strings.Count(v2, "/"); got != 4 {
			t.Fatalf("%q escapes to %q: %d segments instead of one", s, v2, got-3)
		}
		u, err := url.Parse("http://v2.invalid" + v2)
		if err != nil {
			t.Fatalf("%q: the v2 URL does not parse: %v", s, err)
		}
		if last := u.Path[len("/v2/contract/bycontractnumber/"):]; last != s {
			t.Fatalf("%q: the v2 server would read the number as %q", s, last)
		}
	})
}

// FuzzSignInReturnTarget: whatever path, query and HX-Current-URL a signed-out request carries, the
// portal sends the browser to its own sign-in page with a return target on the portal itself.
func FuzzSignInReturnTarget(f *testing.F) {
	sp := newSecPortal(f, secOptions{})
	var pages []string
	for _, r := range sp.protectedRoutes() {
		if p, err := secBuildPath(r.Path, secAnonymousWorld().sampleValues(), false); err == nil && r.Method == http.MethodGet {
			pages = append(pages, p)
		}
	}
	if len(pages) == 0 {
		f.Fatal("no protected GET route")
	}
	for _, s := range [][2]string{
		{"next=//evil.example", ""}, {"a=%5C%5Cevil.example", "https://evil.example/x"}, {"", "//evil.example"},
		{"x=1", "http://127.0.0.1:1/customers"}, {"q=%00", "javascript:alert(1)"}, {"", "/\\evil.example"},
	} {
		f.Add(uint8(0), s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pageIndex uint8, rawQuery, currentURL string) {
		target := pages[int(pageIndex)%len(pages)]
		req := httptest.NewRequest(http.MethodGet, "http://portal.invalid/", nil)
		req.URL.Path = target
		req.URL.RawQuery = rawQuery
		req.RequestURI = req.URL.RequestURI()
		if currentURL != "" {
			if !validHeader(currentURL) {
				return // net/http would refuse to send it
			}
			req.Header.Set("HX-Request", "true")
			req.Header.Set("HX-Current-URL", currentURL)
		}
		rec := httptest.NewRecorder()
		sp.engine.ServeHTTP(rec, req)
		loc := rec.Header().Get("Location")
		if currentURL != "" {
			loc = rec.Header().Get("HX-Redirect")
		}
		if rec.Code >= 500 {
			t.Fatalf("GET %s?%s (HX-Current-URL %q): %d", target, rawQuery, currentURL, rec.Code)
		}
		if loc == "" {
			if rec.Code != http.StatusBadRequest && rec.Code != http.StatusNotFound {
				t.Fatalf("GET %s?%s: %d without a sign-in redirect", target, rawQuery, rec.Code)
			}
			return
		}
		u, err := url.Parse(loc)
		if err != nil || u.Path != "/auth/login" || u.Host != "" {
			t.Fatalf("GET %s?%s (HX-Current-URL %q): sign-in redirect %q", target, rawQuery, currentURL, loc)
		}
		if rt := u.Query().Get("return_to"); !secIsLocalTarget(rt) {
			t.Fatalf("GET %s?%s (HX-Current-URL %q): return_to %q leaves the portal", target, rawQuery, currentURL, rt)
		}
	})
}

// validHeader reports whether net/http would send v as a header value.
func validHeader(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
