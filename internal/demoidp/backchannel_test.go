package demoidp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// The provider puts sid in its ID tokens, advertises back-channel logout, and when the user's
// sessions end there it POSTs one logout token per provider session, signed with its own key.
func TestBackChannelLogoutTokensAreSent(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var received []string
	relyingParty := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.ParseForm() != nil {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		mu.Lock()
		received = append(received, r.PostForm.Get("logout_token"))
		mu.Unlock()
	}))
	t.Cleanup(relyingParty.Close)
	idp := startIdP(t, func(o *Options) { o.BackChannelLogoutURI = relyingParty.URL + "/auth/backchannel-logout" })

	var discovery struct {
		Supported        bool `json:"backchannel_logout_supported"`
		SessionSupported bool `json:"backchannel_logout_session_supported"`
	}
	if err := idp.oidc.Claims(&discovery); err != nil || !discovery.Supported || !discovery.SessionSupported {
		t.Fatalf("discovery does not advertise back-channel logout with sid: %+v %v", discovery, err)
	}

	verifier := idp.oidc.VerifierContext(oidc.ClientContext(context.Background(), idp.server.Client()), &oidc.Config{ClientID: testClientID})
	var sids []string
	for range 2 {
		pkce := oauth2.GenerateVerifier()
		callback := idp.signIn(t, "sales", "sales-demo", pkce)
		token, err := idp.oauth.Exchange(idp.ctx(), callback.Get("code"), oauth2.VerifierOption(pkce))
		if err != nil {
			t.Fatal(err)
		}
		rawID, _ := token.Extra("id_token").(string)
		idToken, err := verifier.Verify(context.Background(), rawID)
		if err != nil {
			t.Fatal(err)
		}
		var claims struct{ Sid string }
		if err := idToken.Claims(&claims); err != nil || claims.Sid == "" {
			t.Fatalf("ID token without sid (%v)", err)
		}
		sids = append(sids, claims.Sid)
	}
	if sids[0] == sids[1] {
		t.Fatal("two sign-ins share a provider session id")
	}

	if err := idp.provider.EndSessions(context.Background(), "sales"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(received) != 2 {
		t.Fatalf("%d logout tokens sent, want 2 (one per provider session)", len(received))
	}
	got := map[string]bool{}
	for _, raw := range received {
		// A logout token has no nonce and the verifier accepts it as to signature, iss, aud, exp.
		token, err := verifier.Verify(context.Background(), raw)
		if err != nil {
			t.Fatalf("logout token does not verify with the provider's keys: %v", err)
		}
		var claims struct {
			Sid    string         `json:"sid"`
			JTI    string         `json:"jti"`
			Events map[string]any `json:"events"`
			Nonce  *string        `json:"nonce"`
		}
		if err := token.Claims(&claims); err != nil || claims.JTI == "" || claims.Nonce != nil || token.Subject != "demo-sales" {
			t.Fatalf("logout token claims %+v (%v)", claims, err)
		}
		if _, ok := claims.Events["http://schemas.openid.net/event/backchannel-logout"].(map[string]any); !ok {
			t.Fatalf("logout token events %v", claims.Events)
		}
		got[claims.Sid] = true
	}
	if !got[sids[0]] || !got[sids[1]] {
		t.Fatalf("logout tokens for %v, want %v", got, sids)
	}
}

// With KeyFile the signing key (and its key id) survive a restart: a token issued before verifies
// against the JWKS after.
func TestKeyFileKeepsTheSigningKey(t *testing.T) {
	t.Parallel()
	keyFile := filepath.Join(t.TempDir(), "idp.pem")
	opts := func(o *Options) { o.KeyFile = keyFile }
	first := startIdP(t, opts)
	token, err := first.provider.Sign(map[string]any{"iss": first.provider.Issuer(), "aud": testClientID, "sub": "demo-sales", "exp": 4102444800, "iat": 1})
	if err != nil {
		t.Fatal(err)
	}
	second, err := New(Options{Issuer: first.provider.Issuer(), ClientID: testClientID, ClientSecret: testClientSecret,
		RedirectURIs: []string{first.server.URL + "/auth/callback"}, KeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := second.storage.KeySet(context.Background())
	if err != nil || len(keys) != 1 || keys[0].ID() != first.provider.storage.key.ID() {
		t.Fatalf("the restarted provider has other keys (%v)", err)
	}
	// The first provider's JWKS verifies it; the second publishes the same key, so it would too.
	if _, err := first.oidc.VerifierContext(oidc.ClientContext(context.Background(), first.server.Client()),
		&oidc.Config{ClientID: testClientID}).Verify(context.Background(), token); err != nil {
		t.Fatalf("token: %v", err)
	}
}
