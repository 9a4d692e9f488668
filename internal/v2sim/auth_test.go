package v2sim

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// testIssuer is a minimal OpenID provider: discovery and JWKS, and a way to sign tokens. It answers 503 until
// ready, to show that the simulator discovers lazily and retries.
type testIssuer struct {
	srv   *httptest.Server
	key   *rsa.PrivateKey
	ready atomic.Bool
}

func newTestIssuer(t *testing.T) *testIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	iss := &testIssuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		if !iss.ready.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": iss.srv.URL, "jwks_uri": iss.srv.URL + "/keys",
			"authorization_endpoint": iss.srv.URL + "/auth", "token_endpoint": iss.srv.URL + "/token",
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	iss.srv = httptest.NewServer(mux)
	t.Cleanup(iss.srv.Close)
	return iss
}

func signJWT(t *testing.T, key *rsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: "k1"}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	token, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func TestJWTVerification(t *testing.T) {
	t.Parallel()
	iss := newTestIssuer(t)
	e := newEnv(t, Options{IssuerURL: iss.srv.URL})
	now := e.clock.Now()
	claims := func(extra map[string]any) map[string]any {
		c := map[string]any{"iss": iss.srv.URL, "sub": "user-123", "aud": "portal", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
			"preferred_username": "sales"}
		for k, v := range extra {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	bearer := func(token string) reqOpt { return withHeader("Authorization", "Bearer "+token) }
	good := signJWT(t, iss.key, claims(nil))

	// The issuer is not up yet: the simulator says so and retries discovery on the next request.
	e.do("GET", "/v2/cpq/list", nil, bearer(good)).wantError(t, http.StatusServiceUnavailable, "UNAVAILABLE")
	iss.ready.Store(true)
	e.do("GET", "/v2/cpq/list", nil, bearer(good)).wantStatus(t, http.StatusOK)

	otherKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	for name, token := range map[string]string{
		"other key":    signJWT(t, otherKey, claims(nil)),
		"expired":      signJWT(t, iss.key, claims(map[string]any{"exp": now.Add(-time.Minute).Unix()})),
		"other issuer": signJWT(t, iss.key, claims(map[string]any{"iss": "https://evil.example"})),
		"not a JWT":    "opaque-token",
	} {
		r := e.do("GET", "/v2/cpq/list", nil, bearer(token))
		r.wantError(t, http.StatusUnauthorized, codeInvalidToken)
		if !strings.Contains(r.header.Get("WWW-Authenticate"), "invalid_token") {
			t.Errorf("%s: WWW-Authenticate = %q", name, r.header.Get("WWW-Authenticate"))
		}
	}
	e.do("GET", "/v2/cpq/list", nil, withoutHeader("Authorization")).wantError(t, http.StatusUnauthorized, codeUnauthorized)

	// The acting user is preferred_username, else sub (A1).
	sid := e.session(1, 8, bearer(good))
	var q tQuote
	e.do("POST", "/v2/cpq/1/tof/11/addcart", `{"productId":101,"tofProductId":1101,"customerId":8}`, bearer(good), withSession(sid)).wantStatus(t, 200).decode(t, &q)
	noName := signJWT(t, iss.key, claims(map[string]any{"preferred_username": nil}))
	e.do("PUT", path("/v2/cpq/1/quote/%d/basket/%d/quantity", q.QuoteID, q.Carts[0].BasketID), `{"quantity":3}`, bearer(noName), withSession(sid)).wantStatus(t, 200)
	var audit struct {
		Entries []struct{ Action, Actor string }
	}
	e.do("GET", path("/v2/contract/getjsonvalidationaudit/%d", q.QuoteID), nil, bearer(good)).wantStatus(t, 200).decode(t, &audit)
	if len(audit.Entries) != 3 || audit.Entries[0].Actor != "sales" || audit.Entries[2].Action != auditQuantityChanged || audit.Entries[2].Actor != "user-123" {
		t.Errorf("audit actors = %+v", audit.Entries)
	}
}

func TestAcceptAnyTokenWithIssuer(t *testing.T) {
	t.Parallel()
	iss := newTestIssuer(t)
	iss.ready.Store(true)
	e := newEnv(t, Options{IssuerURL: iss.srv.URL, AcceptAnyToken: true})
	e.do("GET", "/v2/cpq/list", nil, withHeader("Authorization", "Bearer opaque")).wantStatus(t, http.StatusOK)
	e.do("GET", "/v2/cpq/list", nil, withoutHeader("Authorization")).wantError(t, http.StatusUnauthorized, codeUnauthorized)
}
