package demoidp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

const (
	testClientID     = "portal"
	testClientSecret = "portal-secret"
)

// testIdP runs the provider mounted under /idp, as the portal does, next to a fake relying party path.
type testIdP struct {
	server   *httptest.Server
	provider *Provider
	oauth    *oauth2.Config
	oidc     *oidc.Provider
}

func startIdP(t *testing.T, tweak func(*Options)) *testIdP {
	t.Helper()
	var handler http.Handler
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(server.Close)
	opts := Options{
		Issuer:                 server.URL + "/idp",
		ClientID:               testClientID,
		ClientSecret:           testClientSecret,
		RedirectURIs:           []string{server.URL + "/auth/callback"},
		PostLogoutRedirectURIs: []string{server.URL + "/auth/logged-out"},
	}
	if tweak != nil {
		tweak(&opts)
	}
	provider, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/idp/", http.StripPrefix("/idp", provider.Handler()))
	handler = mux

	ctx := oidc.ClientContext(context.Background(), server.Client())
	discovered, err := oidc.NewProvider(ctx, server.URL+"/idp")
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	return &testIdP{
		server:   server,
		provider: provider,
		oidc:     discovered,
		oauth: &oauth2.Config{
			ClientID: testClientID, ClientSecret: testClientSecret,
			Endpoint:    discovered.Endpoint(),
			RedirectURL: server.URL + "/auth/callback",
			Scopes:      []string{oidc.ScopeOpenID, "profile", "email", oidc.ScopeOfflineAccess},
		},
	}
}

func (idp *testIdP) ctx() context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, idp.server.Client())
}

// browser returns a client that does not follow redirects to the relying party's callback.
func (idp *testIdP) browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if req.URL.Path == "/auth/callback" || req.URL.Path == "/auth/logged-out" {
			return http.ErrUseLastResponse
		}
		return nil
	}}
}

// signIn drives the code flow with PKCE through the login form and returns the callback query.
func (idp *testIdP) signIn(t *testing.T, username, password, verifier string) url.Values {
	t.Helper()
	browser := idp.browser(t)
	authURL := idp.oauth.AuthCodeURL("state-1", oidc.Nonce("nonce-1"), oauth2.S256ChallengeOption(verifier))
	resp, err := browser.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	form := parseLoginForm(t, resp)
	if !strings.HasPrefix(resp.Request.URL.Path, "/idp/login") {
		t.Fatalf("login page at %s, want under /idp/login", resp.Request.URL.Path)
	}
	resp, err = browser.PostForm(idp.server.URL+form.action, url.Values{
		"authRequestID": {form.authRequestID}, "username": {username}, "password": {password},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("after login: status %d, body %s", resp.StatusCode, body)
	}
	callback, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || callback.Path != "/auth/callback" {
		t.Fatalf("redirect to %q, want the callback", resp.Header.Get("Location"))
	}
	if callback.Query().Get("state") != "state-1" || callback.Query().Get("code") == "" {
		t.Fatalf("callback query %v", callback.Query())
	}
	return callback.Query()
}

type loginForm struct{ action, authRequestID string }

func parseLoginForm(t *testing.T, resp *http.Response) loginForm {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login page status %d", resp.StatusCode)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	form := doc.Find("form")
	return loginForm{action: form.AttrOr("action", ""), authRequestID: form.Find(`input[name="authRequestID"]`).AttrOr("value", "")}
}

func TestDiscoveryUnderPathPrefix(t *testing.T) {
	t.Parallel()
	idp := startIdP(t, nil)
	var claims struct {
		Issuer             string   `json:"issuer"`
		EndSession         string   `json:"end_session_endpoint"`
		UserInfo           string   `json:"userinfo_endpoint"`
		JWKS               string   `json:"jwks_uri"`
		CodeChallenge      []string `json:"code_challenge_methods_supported"`
		GrantTypes         []string `json:"grant_types_supported"`
		SigningAlgorithms  []string `json:"id_token_signing_alg_values_supported"`
		AuthorizationPoint string   `json:"authorization_endpoint"`
	}
	if err := idp.oidc.Claims(&claims); err != nil {
		t.Fatal(err)
	}
	base := idp.server.URL + "/idp"
	if claims.Issuer != base || !strings.HasPrefix(claims.EndSession, base+"/") || !strings.HasPrefix(claims.UserInfo, base+"/") ||
		!strings.HasPrefix(claims.JWKS, base+"/") || !strings.HasPrefix(claims.AuthorizationPoint, base+"/") {
		t.Fatalf("endpoints not under the issuer: %+v", claims)
	}
	if !contains(claims.CodeChallenge, "S256") || !contains(claims.GrantTypes, "refresh_token") || !contains(claims.SigningAlgorithms, "RS256") {
		t.Fatalf("capabilities: %+v", claims)
	}
}

func TestLoginPage(t *testing.T) {
	t.Parallel()
	idp := startIdP(t, nil)
	browser := idp.browser(t)
	resp, err := browser.Get(idp.oauth.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	for _, sel := range []string{`input[name="username"]`, `input[name="password"][type="password"]`, `input[type="hidden"][name="authRequestID"]`} {
		if doc.Find(sel).Length() != 1 {
			t.Errorf("missing %s", sel)
		}
	}
	if got := strings.TrimSpace(doc.Find(`button[type="submit"]`).Text()); got != "Sign in" {
		t.Errorf("submit button %q, want Sign in", got)
	}
	if action := doc.Find("form").AttrOr("action", ""); action != "/idp/login" {
		t.Errorf("form action %q, want /idp/login", action)
	}

	// The same page for a German browser (the portal's language cookie works the same way).
	req, err := http.NewRequest(http.MethodGet, resp.Request.URL.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Language", "de-DE,de;q=0.9")
	de, err := browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	deBody, _ := io.ReadAll(de.Body)
	de.Body.Close()
	deDoc, err := goquery.NewDocumentFromReader(strings.NewReader(string(deBody)))
	if err != nil {
		t.Fatal(err)
	}
	if lang, submit := deDoc.Find("html").AttrOr("lang", ""), strings.TrimSpace(deDoc.Find(`button[type="submit"]`).Text()); lang != "de" || submit != "Anmelden" {
		t.Errorf("German login page: lang %q, submit %q", lang, submit)
	}
	// The portal's CSP forbids inline script and style.
	if doc.Find("script, style, [style]").Length() != 0 {
		t.Error("the login page must have no script or inline style")
	}
	doc.Find("*").Each(func(_ int, sel *goquery.Selection) {
		for _, attr := range sel.Nodes[0].Attr {
			if strings.HasPrefix(attr.Key, "on") {
				t.Errorf("inline event handler %s on <%s>", attr.Key, goquery.NodeName(sel))
			}
		}
	})
	href := doc.Find(`link[rel="stylesheet"]`).AttrOr("href", "")
	css, err := browser.Get(idp.server.URL + href)
	if err != nil || css.StatusCode != http.StatusOK || !strings.HasPrefix(css.Header.Get("Content-Type"), "text/css") {
		t.Errorf("stylesheet %q: %v %v", href, err, css)
	}
	if css != nil {
		css.Body.Close()
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("CSP %q", csp)
	}

	// Unknown requests get a clear message, not the library's error.
	resp, err = browser.Get(idp.server.URL + "/idp/login?authRequestID=nope")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "expired") {
		t.Errorf("unknown auth request: %d %s", resp.StatusCode, body)
	}
}

func TestLoginRejectsBadCredentials(t *testing.T) {
	t.Parallel()
	idp := startIdP(t, nil)
	browser := idp.browser(t)
	resp, err := browser.Get(idp.oauth.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	if err != nil {
		t.Fatal(err)
	}
	form := parseLoginForm(t, resp)
	for _, creds := range [][2]string{{"sales", "wrong"}, {"nobody", "sales-demo"}, {"", ""}} {
		resp, err := browser.PostForm(idp.server.URL+form.action, url.Values{
			"authRequestID": {form.authRequestID}, "username": {creds[0]}, "password": {creds[1]},
		})
		if err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := doc.Find(`[data-testid="login-error"]`).Text(); got != "Invalid username or password" {
			t.Errorf("%v: error %q", creds, got)
		}
		if got := doc.Find(`input[name="username"]`).AttrOr("value", ""); got != creds[0] {
			t.Errorf("%v: username not kept: %q", creds, got)
		}
	}
}

type accessClaims struct {
	Issuer            string   `json:"iss"`
	Subject           string   `json:"sub"`
	Audience          any      `json:"aud"`
	PreferredUsername string   `json:"preferred_username"`
	Name              string   `json:"name"`
	Email             string   `json:"email"`
	Roles             []string `json:"roles"`
	Pad               string   `json:"pad"`
}

// verifyAccessToken checks the JWT access token's signature against the JWKS, issuer and audience.
func (idp *testIdP) verifyAccessToken(t *testing.T, token string) accessClaims {
	t.Helper()
	verifier := idp.oidc.VerifierContext(oidc.ClientContext(context.Background(), idp.server.Client()), &oidc.Config{ClientID: testClientID})
	parsed, err := verifier.Verify(context.Background(), token)
	if err != nil {
		t.Fatalf("access token does not verify as an RS256 JWT for the client: %v", err)
	}
	var claims accessClaims
	if err := parsed.Claims(&claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

func TestCodeFlowTokensRefreshAndLogout(t *testing.T) {
	t.Parallel()
	idp := startIdP(t, nil)
	verifier := oauth2.GenerateVerifier()
	callback := idp.signIn(t, "Sales", "sales-demo", verifier)

	// PKCE: the code is bound to the verifier.
	if _, err := idp.oauth.Exchange(idp.ctx(), callback.Get("code"), oauth2.VerifierOption(oauth2.GenerateVerifier())); err == nil {
		t.Fatal("exchange with the wrong PKCE verifier succeeded")
	}
	callback = idp.signIn(t, "sales", "sales-demo", verifier)
	token, err := idp.oauth.Exchange(idp.ctx(), callback.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if _, err := idp.oauth.Exchange(idp.ctx(), callback.Get("code"), oauth2.VerifierOption(verifier)); err == nil {
		t.Fatal("a code must be single-use")
	}

	claims := idp.verifyAccessToken(t, token.AccessToken)
	if claims.Subject != "demo-sales" || claims.PreferredUsername != "sales" || claims.Name != "Sam Sales" ||
		claims.Email != "sam.sales@demo.example" || len(claims.Roles) != 1 || claims.Roles[0] != "sales" {
		t.Fatalf("access token claims %+v", claims)
	}

	rawID, _ := token.Extra("id_token").(string)
	idToken, err := idp.oidc.VerifierContext(oidc.ClientContext(context.Background(), idp.server.Client()), &oidc.Config{ClientID: testClientID}).Verify(context.Background(), rawID)
	if err != nil {
		t.Fatalf("ID token: %v", err)
	}
	var idClaims struct{ Nonce, Name, Email string }
	if err := idToken.Claims(&idClaims); err != nil || idClaims.Nonce != "nonce-1" || idClaims.Name != "Sam Sales" || idClaims.Email != "sam.sales@demo.example" {
		t.Fatalf("ID token claims %+v (%v)", idClaims, err)
	}

	info, err := idp.oidc.UserInfo(oidc.ClientContext(context.Background(), idp.server.Client()), oauth2.StaticTokenSource(token))
	if err != nil || info.Subject != "demo-sales" || info.Email != "sam.sales@demo.example" {
		t.Fatalf("userinfo %+v, %v", info, err)
	}

	// Refresh rotates: the new refresh token works, the old one is dead.
	if token.RefreshToken == "" {
		t.Fatal("no refresh token with offline_access")
	}
	refreshed, err := idp.oauth.TokenSource(idp.ctx(), &oauth2.Token{RefreshToken: token.RefreshToken}).Token()
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if refreshed.RefreshToken == "" || refreshed.RefreshToken == token.RefreshToken || refreshed.AccessToken == token.AccessToken {
		t.Fatal("refresh did not rotate the tokens")
	}
	_, err = idp.oauth.TokenSource(idp.ctx(), &oauth2.Token{RefreshToken: token.RefreshToken}).Token()
	var retrieveErr *oauth2.RetrieveError
	if !errors.As(err, &retrieveErr) || retrieveErr.ErrorCode != "invalid_grant" {
		t.Fatalf("reusing a rotated refresh token: %v, want invalid_grant", err)
	}

	// End session with the ID token hint goes back to the registered post-logout URI and ends the tokens.
	var endSession struct {
		URL string `json:"end_session_endpoint"`
	}
	if err := idp.oidc.Claims(&endSession); err != nil {
		t.Fatal(err)
	}
	logout := endSession.URL + "?" + url.Values{
		"id_token_hint":            {rawID},
		"post_logout_redirect_uri": {idp.server.URL + "/auth/logged-out"},
		"state":                    {"bye"},
	}.Encode()
	resp, err := idp.browser(t).Get(logout)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); loc != idp.server.URL+"/auth/logged-out?state=bye" {
		t.Fatalf("end session redirected to %q (status %d)", loc, resp.StatusCode)
	}
	if _, err := idp.oauth.TokenSource(idp.ctx(), &oauth2.Token{RefreshToken: refreshed.RefreshToken}).Token(); err == nil {
		t.Fatal("refresh token still works after end session")
	}

	// An unregistered post-logout URI is refused.
	resp, err = idp.browser(t).Get(endSession.URL + "?" + url.Values{"client_id": {testClientID}, "post_logout_redirect_uri": {"https://evil.example/"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Location"), "https://evil.example") {
		t.Fatal("end session redirected to an unregistered URI")
	}
}

func TestPaddedAccessToken(t *testing.T) {
	t.Parallel()
	idp := startIdP(t, func(o *Options) { o.PadAccessTokenTo = 4096 })
	verifier := oauth2.GenerateVerifier()
	callback := idp.signIn(t, "backoffice", "backoffice-demo", verifier)
	token, err := idp.oauth.Exchange(idp.ctx(), callback.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(token.AccessToken); n < 4096-16 || n > 4096+64 {
		t.Fatalf("access token is %d bytes, want about 4096", n)
	}
	claims := idp.verifyAccessToken(t, token.AccessToken)
	if claims.Pad == "" || claims.Name != "Bea Backoffice" || claims.Roles[0] != "backoffice" {
		t.Fatalf("claims %+v", claims)
	}
}

func TestExtraUsers(t *testing.T) {
	t.Parallel()
	idp := startIdP(t, func(o *Options) {
		o.ExtraUsers = []User{{Subject: "t-1", Username: "tess", Password: "pw", Name: "Tess Test", Email: "tess@demo.example", Role: "sales"}}
	})
	verifier := oauth2.GenerateVerifier()
	callback := idp.signIn(t, "tess", "pw", verifier)
	token, err := idp.oauth.Exchange(idp.ctx(), callback.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if claims := idp.verifyAccessToken(t, token.AccessToken); claims.Name != "Tess Test" {
		t.Fatalf("claims %+v", claims)
	}
}

func TestNewValidatesOptions(t *testing.T) {
	t.Parallel()
	good := Options{Issuer: "http://127.0.0.1:8080/idp", ClientID: "c", ClientSecret: "s", RedirectURIs: []string{"http://127.0.0.1:8080/auth/callback"}}
	if _, err := New(good); err != nil {
		t.Fatalf("valid options: %v", err)
	}
	for name, tweak := range map[string]func(*Options){
		"relative issuer": func(o *Options) { o.Issuer = "/idp" },
		"no client":       func(o *Options) { o.ClientID = "" },
		"no secret":       func(o *Options) { o.ClientSecret = "" },
		"no redirect":     func(o *Options) { o.RedirectURIs = nil },
	} {
		o := good
		tweak(&o)
		if _, err := New(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestDemoUsers(t *testing.T) {
	t.Parallel()
	users := DemoUsers()
	want := map[string]string{"sales": "sales-demo", "backoffice": "backoffice-demo", "teamlead": "teamlead-demo"}
	if len(users) != len(want) {
		t.Fatalf("users %+v", users)
	}
	for _, u := range users {
		if want[u.Username] != u.Password || u.Name == "" || u.Email == "" || u.Role == "" || u.Subject == "" {
			t.Errorf("user %+v", u)
		}
	}
	b, _ := json.Marshal(users)
	if !strings.Contains(string(b), "Sam Sales") || !strings.Contains(string(b), "Bea Backoffice") || !strings.Contains(string(b), `"Role":"team-lead"`) {
		t.Errorf("names: %s", b)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
