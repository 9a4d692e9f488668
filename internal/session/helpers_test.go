package session

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fakeJWT builds a JWT-shaped token of at least size bytes that looks like an enterprise access token:
// JSON claims with many random group ids (hex GUIDs, as Entra ID issues them) and a random 2048-bit RSA
// signature. Only its shape and entropy matter here, not the signature.
func fakeJWT(t testing.TB, size int) string {
	t.Helper()
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","kid":"` + randomHex(t, 8) + `","typ":"JWT"}`))
	signature := base64.RawURLEncoding.EncodeToString(randomBytes(t, 256))
	claims := map[string]any{
		"iss": "https://login.example.com/" + randomHex(t, 16) + "/v2.0",
		"sub": randomHex(t, 16), "aud": "portal", "azp": "portal",
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
		"name": "Sam Sales", "preferred_username": "sam.sales@demo.example", "email": "sam.sales@demo.example",
	}
	var groups []string
	token := func(pad string) string {
		claims["groups"] = groups
		claims["ext"] = pad
		payload, err := json.Marshal(claims)
		if err != nil {
			t.Fatal(err)
		}
		return header + "." + base64.RawURLEncoding.EncodeToString(payload) + "." + signature
	}
	for len(token("")) < size-120 {
		g := randomHex(t, 16)
		groups = append(groups, g[:8]+"-"+g[8:12]+"-"+g[12:16]+"-"+g[16:20]+"-"+g[20:])
	}
	pad := ""
	for len(token(pad)) < size {
		pad += randomHex(t, 1)
	}
	return token(pad)
}

func randomBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func randomHex(t testing.TB, n int) string { return hex.EncodeToString(randomBytes(t, n)) }

// randomBase64URL returns an opaque token of n base64url characters (random, so incompressible).
func randomBase64URL(t testing.TB, n int) string {
	return base64.RawURLEncoding.EncodeToString(randomBytes(t, n))[:n]
}

// newKey returns a fresh 32-byte secret in base64.
func newKey(t testing.TB) string {
	return base64.StdEncoding.EncodeToString(randomBytes(t, 32))
}

// testClock is a movable clock.
type testClock struct{ now time.Time }

func (c *testClock) Now() time.Time { return c.now }

// saveCookies runs Save and returns the response's cookies.
func saveCookies(t testing.TB, store Store, req *http.Request, s *Session) []*http.Cookie {
	t.Helper()
	if req == nil {
		req = httptest.NewRequest(http.MethodGet, "/", nil)
	}
	rec := httptest.NewRecorder()
	if err := Save(store, rec, req, s); err != nil {
		t.Fatalf("Save: %v", err)
	}
	return rec.Result().Cookies()
}

// requestWith builds a request carrying the live cookies (those not being deleted).
func requestWith(cookies []*http.Cookie) *http.Request {
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	for _, c := range cookies {
		if c.MaxAge >= 0 && c.Value != "" {
			req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
		}
	}
	return req
}

// cookieHeaderSize is the size of the Cookie header a browser would send.
func cookieHeaderSize(req *http.Request) int {
	return len(strings.Join(req.Header.Values("Cookie"), "; "))
}
