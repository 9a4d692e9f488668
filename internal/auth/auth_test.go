package auth

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/session"
)

func TestPageRenderer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	var got string
	e.auth.SetPageRenderer(func(c *gin.Context, status int, title, message, linkURL, linkText string) {
		got = fmt.Sprintf("%d|%s|%s|%s|%s", status, title, message, linkURL, linkText)
		c.String(status, "custom")
	})
	p := e.get(t, e.newBrowser(t), LoggedOutPath)
	if p.body != "custom" || got != "200|Signed out|You are signed out.|/auth/login|Sign in" {
		t.Fatalf("renderer got %q, page %q", got, p.body)
	}
	p = e.get(t, e.newBrowser(t), CallbackPath+"?state=x&code=y")
	if p.status != http.StatusBadRequest || !strings.HasPrefix(got, "400|Sign-in failed|") || !strings.HasSuffix(got, "|/auth/login|Try again") {
		t.Fatalf("callback error through the renderer: %d %q", p.status, got)
	}
}

func TestMisconfiguredAuthenticator(t *testing.T) {
	t.Parallel()
	store, err := session.NewCookieStore(session.Options{Keys: []string{randomKey(t)}})
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]Config{
		"no issuer":         {ClientID: "c", PublicURL: &url.URL{Scheme: "http", Host: "x"}},
		"no public URL":     {IssuerURL: "http://idp", ClientID: "c"},
		"relative public":   {IssuerURL: "http://idp", ClientID: "c", PublicURL: &url.URL{Path: "/portal"}},
		"no client":         {IssuerURL: "http://idp", PublicURL: &url.URL{Scheme: "http", Host: "x"}},
		"odd public scheme": {IssuerURL: "http://idp", ClientID: "c", PublicURL: &url.URL{Scheme: "ftp", Host: "x"}},
	} {
		a := New(cfg, store, nil)
		if a.Ready() {
			t.Errorf("%s: ready", name)
		}
		rec := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(rec)
		c.Request = inEnglish(httptest.NewRequest(http.MethodGet, LoginPath, nil))
		a.Login(c)
		if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "not configured correctly") {
			t.Errorf("%s: Login answered %d %s", name, rec.Code, rec.Body.String())
		}
		a.Close()
	}
}

func TestAccessorsWithoutSession(t *testing.T) {
	t.Parallel()
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	if CurrentSession(c) != nil || CurrentUser(c) != (User{}) || AccessToken(c) != "" {
		t.Fatal("accessors must be empty without RequireLogin")
	}
	a := &Authenticator{}
	if err := a.SaveSession(c); err != ErrNotSignedIn {
		t.Fatalf("SaveSession without session: %v", err)
	}
	if err := a.ForceRefresh(c); err != ErrNotSignedIn {
		t.Fatalf("ForceRefresh without session: %v", err)
	}
}

func TestSessionTooLargeForCookies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{padAccessTokenTo: 16000})
	browser := e.newBrowser(t)
	p := e.signIn(t, browser, "/quotes")
	if p.status != http.StatusInternalServerError || !strings.Contains(p.body, "Try again") || strings.Contains(p.body, "too large for cookies") {
		t.Fatalf("oversized session: %d %s", p.status, p.body)
	}
	if strings.Contains(e.cookieHeader(browser, "/"), "portal_s0") {
		t.Fatal("a partial session cookie was set")
	}
}
