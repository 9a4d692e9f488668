package auth

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every path works with each store: sign-in, the CPQ session per quote, token refresh, HX-Redirect
// after the idle timeout, and logout with id_token_hint that leaves a copied cookie useless.
func TestEveryPathWithEveryStore(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]envOptions{"cookie": {}, "file": {file: true}, "postgres": {postgres: true}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			opts.idleTimeout = 30 * time.Minute
			e := newEnv(t, opts)
			browser := e.newBrowser(t)
			if landed := e.signIn(t, browser, "/quotes"); landed.status != http.StatusOK || landed.url.Path != "/quotes" {
				t.Fatalf("sign-in landed on %d %s", landed.status, landed.url)
			}

			// The CPQ session id is kept with the session.
			if p := fetch(t, browser, http.MethodPost, e.server.URL+"/cpq", nil, url.Values{}); p.status != http.StatusOK {
				t.Fatalf("store the CPQ session: %d %s", p.status, p.body)
			}
			if p := e.get(t, browser, "/cpq"); p.body != "cpq-session-1" {
				t.Fatalf("CPQ session read back %q", p.body)
			}

			// Refresh once the access token expires; the new tokens are kept.
			before := e.who(t, browser)
			e.clock.Advance(16 * time.Minute)
			after := e.who(t, browser)
			if after.AccessToken == before.AccessToken || e.refreshCalls.Load() != 1 {
				t.Fatalf("no refresh (%d calls)", e.refreshCalls.Load())
			}
			if again := e.who(t, browser); again.AccessToken != after.AccessToken || e.refreshCalls.Load() != 1 {
				t.Fatal("the refreshed tokens were not kept")
			}
			if p := e.get(t, browser, "/cpq"); p.body != "cpq-session-1" {
				t.Fatalf("CPQ session after the refresh %q", p.body)
			}

			// Logout names the ID token; a copy of the cookie opens nothing afterwards.
			copied := e.copyCookies(t, browser)
			p := fetch(t, noRedirects(browser), http.MethodPost, e.server.URL+LogoutPath, nil, nil)
			end, _ := url.Parse(p.header.Get("Location"))
			if p.status != http.StatusSeeOther || end == nil || end.Query().Get("id_token_hint") != after.IDToken {
				t.Fatalf("logout: %d %q", p.status, p.header.Get("Location"))
			}
			if p := fetch(t, noRedirects(copied), http.MethodGet, e.server.URL+"/quotes", nil, nil); p.status != http.StatusSeeOther {
				t.Fatalf("a copied cookie after logout: %d", p.status)
			}

			// Idle timeout: an htmx request gets 401 with HX-Redirect to sign-in.
			e.signIn(t, browser, "/quotes")
			e.clock.Advance(31 * time.Minute)
			htmx := http.Header{"Hx-Request": {"true"}}
			p = fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/quotes", htmx, nil)
			if p.status != http.StatusUnauthorized || !strings.HasPrefix(p.header.Get("HX-Redirect"), LoginPath) {
				t.Fatalf("htmx after the idle timeout: %d HX-Redirect %q", p.status, p.header.Get("HX-Redirect"))
			}
		})
	}
}

// The file store's directory gone at run time: a 503 page, never a 500 and never a sign-out; the
// session is back with the directory, without a restart.
func TestFileStoreDownAnswers503AndRecovers(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions")
	e := newEnv(t, envOptions{file: true, fileDir: dir})
	browser := e.newBrowser(t)
	e.signIn(t, browser, "/quotes")

	if err := os.Rename(dir, dir+".aside"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p := fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/quotes", nil, nil)
	if p.status != http.StatusServiceUnavailable || !strings.Contains(p.body, "cannot be read") {
		t.Fatalf("data directory gone: %d %s", p.status, p.body)
	}
	// Sign-out cannot end the session now: it says so and the browser keeps its cookie to try again.
	p = fetch(t, noRedirects(browser), http.MethodPost, e.server.URL+LogoutPath, nil, nil)
	if p.status != http.StatusServiceUnavailable || !strings.Contains(p.body, "still signed in") {
		t.Fatalf("logout with the data directory gone: %d %s", p.status, p.body)
	}
	if strings.Contains(strings.Join(p.header.Values("Set-Cookie"), "\n"), "portal_sid=;") {
		t.Fatal("a failed logout cleared the session cookie")
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir+".aside", dir); err != nil {
		t.Fatal(err)
	}
	if p := fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/quotes", nil, nil); p.status != http.StatusOK {
		t.Fatalf("after the directory came back: %d, want the page (signed in)", p.status)
	}
}
