package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// idTokenClaims reads sub and sid from the browser's ID token (as the provider issued it).
func (e *env) idTokenClaims(t *testing.T, browser *http.Client) (subject, sid string) {
	t.Helper()
	parts := strings.Split(e.who(t, browser).IDToken, ".")
	if len(parts) != 3 {
		t.Fatal("no ID token in the session")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct{ Sub, Sid string }
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	if claims.Sid == "" {
		t.Fatal("the provider's ID token carries no sid")
	}
	return claims.Sub, claims.Sid
}

// postLogoutToken sends token to the back-channel endpoint as a provider does: a server-to-server
// form POST without cookies.
func (e *env) postLogoutToken(t *testing.T, token string) (int, string) {
	t.Helper()
	return postForm(t, e.server.URL+BackChannelLogoutPath, "logout_token="+url.QueryEscape(token))
}

func postForm(t *testing.T, target, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("back-channel logout answered Cache-Control %q, want no-store", cc)
	}
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(answer)
}

// signedIn reports whether browser's session still opens a protected page.
func (e *env) signedIn(t *testing.T, browser *http.Client) bool {
	t.Helper()
	p := fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/quotes", nil, nil)
	return p.status == http.StatusOK
}

func unsignedJWT(claims map[string]any) string {
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	payload, _ := json.Marshal(claims)
	return header + "." + base64.RawURLEncoding.EncodeToString(payload) + "."
}

// signedByStranger signs claims with a key the provider never published, under the kid of none.
func signedByStranger(t *testing.T, claims map[string]any) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	object, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	token, err := object.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// Hand-made hostile logout tokens are refused with 400 and end nothing; a valid one ends the
// session once, and its replay is refused. With every store.
func TestBackChannelLogoutValidatesTheToken(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]envOptions{"cookie": {}, "sqlite": {sqlite: true}, "postgres": {postgres: true}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, opts)
			browser := e.newBrowser(t)
			e.signIn(t, browser, "/quotes")
			subject, sid := e.idTokenClaims(t, browser)
			idToken := e.who(t, browser).IDToken

			now := e.clock.Now()
			valid := func() map[string]any {
				return map[string]any{
					"iss": e.issuer, "aud": testClientID, "sub": subject, "sid": sid,
					"iat": now.Unix(), "exp": now.Add(2 * time.Minute).Unix(), "jti": rand.Text(),
					"events": map[string]any{backChannelEvent: map[string]any{}},
				}
			}
			with := func(change func(map[string]any)) map[string]any {
				claims := valid()
				change(claims)
				return claims
			}
			sign := func(claims map[string]any) string {
				token, err := e.idp.Sign(claims)
				if err != nil {
					t.Fatal(err)
				}
				return token
			}
			tampered := func() string {
				parts := strings.Split(sign(valid()), ".")
				payload, _ := json.Marshal(with(func(c map[string]any) { c["sub"] = "someone-else" }))
				parts[1] = base64.RawURLEncoding.EncodeToString(payload)
				return strings.Join(parts, ".")
			}
			hostile := map[string]string{
				"empty":               "",
				"garbage":             "not.a.jwt",
				"unsigned (alg none)": unsignedJWT(valid()),
				"forged (other key)":  signedByStranger(t, valid()),
				"tampered payload":    tampered(),
				"expired":             sign(with(func(c map[string]any) { c["exp"] = now.Add(-time.Minute).Unix() })),
				"no exp":              sign(with(func(c map[string]any) { delete(c, "exp") })),
				"iat too old":         sign(with(func(c map[string]any) { c["iat"] = now.Add(-10 * time.Minute).Unix() })),
				"iat in the future":   sign(with(func(c map[string]any) { c["iat"] = now.Add(10 * time.Minute).Unix() })),
				"no iat":              sign(with(func(c map[string]any) { delete(c, "iat") })),
				"wrong audience":      sign(with(func(c map[string]any) { c["aud"] = "another-client" })),
				"wrong issuer":        sign(with(func(c map[string]any) { c["iss"] = "https://evil.example" })),
				"with a nonce":        sign(with(func(c map[string]any) { c["nonce"] = "n-0S6_WzA2Mj" })),
				"no events":           sign(with(func(c map[string]any) { delete(c, "events") })),
				"other event":         sign(with(func(c map[string]any) { c["events"] = map[string]any{"urn:other": map[string]any{}} })),
				"event not an object": sign(with(func(c map[string]any) { c["events"] = map[string]any{backChannelEvent: "yes"} })),
				"neither sub nor sid": sign(with(func(c map[string]any) { delete(c, "sub"); delete(c, "sid") })),
				"no jti":              sign(with(func(c map[string]any) { delete(c, "jti") })),
				"the user's ID token": idToken,
				"too large":           strings.Repeat("a", maxLogoutToken+1),
			}
			for name, token := range hostile {
				status, body := e.postLogoutToken(t, token)
				if status != http.StatusBadRequest || !strings.Contains(body, "invalid_request") {
					t.Errorf("%s: %d %q, want 400 invalid_request", name, status, body)
				}
			}
			if !e.signedIn(t, browser) {
				t.Fatal("a refused logout token ended the session")
			}

			good := sign(valid())
			if status, body := e.postLogoutToken(t, good); status != http.StatusOK {
				t.Fatalf("valid logout token: %d %q", status, body)
			}
			if e.signedIn(t, browser) {
				t.Fatal("the session survived a valid back-channel logout")
			}

			// Replayed: refused, and a new sign-in is not touched by it.
			e.signIn(t, browser, "/quotes")
			if status, _ := e.postLogoutToken(t, good); status != http.StatusBadRequest {
				t.Errorf("replayed logout token: %d, want 400", status)
			}
			if !e.signedIn(t, browser) {
				t.Fatal("a replayed logout token ended a new session")
			}

			// sub alone ends every session of the user.
			second := e.newBrowser(t)
			e.signIn(t, second, "/quotes")
			bySubject := sign(with(func(c map[string]any) { delete(c, "sid") }))
			if status, body := e.postLogoutToken(t, bySubject); status != http.StatusOK {
				t.Fatalf("logout token with sub only: %d %q", status, body)
			}
			if e.signedIn(t, browser) || e.signedIn(t, second) {
				t.Fatal("a logout token naming only the subject left a session of the user")
			}
		})
	}
}

// The embedded provider sends real logout tokens when the user's sessions end there; two replicas
// sharing a PostgreSQL state database both refuse the user's sessions within a second, and a captured token replayed to
// the other replica changes nothing.
func TestBackChannelLogoutFromTheProviderOnTwoReplicas(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{postgres: true})
	replicaB := e.newReplica(t)
	replicaB.store.release() // no pause in this test

	first, second := e.newBrowser(t), e.newBrowser(t)
	e.signIn(t, first, "/quotes")
	e.signIn(t, second, "/quotes")
	onB := func(browser *http.Client) int {
		rec := httptest.NewRecorder()
		replicaB.handler.ServeHTTP(rec, requestWithCookies(e.cookieHeader(browser, "/whoami")))
		return rec.Code
	}
	if onB(first) != http.StatusOK || onB(second) != http.StatusOK {
		t.Fatal("control: replica B does not serve the signed-in browsers")
	}

	started := time.Now()
	if err := e.idp.EndSessions(context.Background(), "sales"); err != nil {
		t.Fatal(err)
	}
	for _, browser := range []*http.Client{first, second} {
		if code := onB(browser); code != http.StatusSeeOther {
			t.Errorf("replica B after the provider ended the sessions: %d, want 303 to sign-in", code)
		}
		if e.signedIn(t, browser) {
			t.Error("replica A still serves a session the provider ended")
		}
	}
	if elapsed := time.Since(started); elapsed > time.Second {
		t.Errorf("the sessions ended after %s, want within a second", elapsed)
	}
	sent := e.logoutTokens.All()
	if len(sent) != 2 {
		t.Fatalf("the provider sent %d logout tokens, want one per provider session (2)", len(sent))
	}

	// The user signs in again; a captured token replayed to replica B changes nothing.
	e.signIn(t, first, "/quotes")
	status, _ := postForm(t, serveOn(t, replicaB.handler)+BackChannelLogoutPath, sent[0])
	if status != http.StatusBadRequest {
		t.Errorf("replayed logout token on replica B: %d, want 400", status)
	}
	if onB(first) != http.StatusOK {
		t.Error("a replayed logout token ended the new session")
	}
}

// serveOn serves handler on a loopback server for the test and returns its URL.
func serveOn(t *testing.T, handler http.Handler) string {
	t.Helper()
	server := httptest.NewServer(handler)
	t.Cleanup(server.Close)
	return server.URL
}
