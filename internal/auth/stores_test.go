package auth

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Every path works with each store: sign-in, the CPQ session per quote, token refresh, HX-Redirect
// after the idle timeout, and logout with id_token_hint that leaves a copied cookie useless.
func TestEveryPathWithEveryStore(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]envOptions{"cookie": {}, "sqlite": {sqlite: true}, "postgres": {postgres: true}} {
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
