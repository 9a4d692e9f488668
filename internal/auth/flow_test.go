package auth

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

func TestSignInLandsOnTheOriginalPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	browser := e.newBrowser(t)

	landed := e.signIn(t, browser, "/quotes?tab=2&q=a%20b")
	if landed.status != http.StatusOK || landed.url.Path != "/quotes" || landed.url.RawQuery != "tab=2&q=a%20b" {
		t.Fatalf("landed on %d %s", landed.status, landed.url)
	}
	if !strings.Contains(landed.body, "quotes of Sam Sales") {
		t.Fatalf("the user's name is not available: %q", landed.body)
	}
	w := e.who(t, browser)
	if w.User != (User{Subject: "demo-sales", Name: "Sam Sales", Email: "sam.sales@demo.example"}) || w.AccessToken == "" || w.IDToken == "" {
		t.Fatalf("whoami %+v", w)
	}
	if e.codeCalls.Load() != 1 {
		t.Fatalf("code exchanges: %d", e.codeCalls.Load())
	}
	// The portal is told who signed in (login, display name, e-mail; never a token or subject).
	if got := e.signIns.All(); len(got) != 1 || got[0] != "sales|Sam Sales|sam.sales@demo.example" {
		t.Fatalf("OnSignIn was told %q", got)
	}
	// The login attempt's cookie is gone after use.
	if cookies := e.cookieHeader(browser, "/auth/callback"); strings.Contains(cookies, loginCookiePrefix) {
		t.Fatalf("login attempt cookie left behind: %s", cookies)
	}
	// The session survives a handler's change (SaveSession).
	if p := fetch(t, browser, http.MethodPost, e.server.URL+"/cpq", nil, nil); p.body != "stored" {
		t.Fatalf("POST /cpq: %d %s", p.status, p.body)
	}
	if p := e.get(t, browser, "/cpq"); p.body != "cpq-session-1" {
		t.Fatalf("CPQ session not kept: %q", p.body)
	}
}

func TestSessionCookieAttributesAndQuietRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	browser := e.newBrowser(t)
	e.signIn(t, browser, "/quotes")

	// Within a minute, requests do not rewrite the session cookie.
	quiet := noRedirects(browser)
	p := fetch(t, quiet, http.MethodGet, e.server.URL+"/quotes", nil, nil)
	if p.status != http.StatusOK || len(p.header.Values("Set-Cookie")) != 0 {
		t.Fatalf("a plain page view set cookies: %d %v", p.status, p.header.Values("Set-Cookie"))
	}
	// After a minute, LastSeen is recorded once.
	e.clock.Advance(2 * time.Minute)
	p = fetch(t, quiet, http.MethodGet, e.server.URL+"/quotes", nil, nil)
	if len(p.header.Values("Set-Cookie")) == 0 {
		t.Fatal("LastSeen was not refreshed after two minutes")
	}
	for _, line := range p.header.Values("Set-Cookie") {
		if !strings.Contains(line, "HttpOnly") || !strings.Contains(line, "SameSite=Lax") || !strings.Contains(line, "Path=/") {
			t.Errorf("session cookie lacks secure defaults: %s", line)
		}
	}
}

func TestHealthEndpointCreatesNoSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	anonymous := e.newBrowser(t)
	if p := e.get(t, anonymous, "/healthz"); p.status != http.StatusOK || len(p.header.Values("Set-Cookie")) != 0 {
		t.Fatalf("health check set cookies: %v", p.header.Values("Set-Cookie"))
	}
	browser := e.newBrowser(t)
	e.signIn(t, browser, "/quotes")
	e.clock.Advance(10 * time.Minute) // would refresh LastSeen on a protected route
	if p := e.get(t, browser, "/healthz"); len(p.header.Values("Set-Cookie")) != 0 {
		t.Fatalf("health check with a session set cookies: %v", p.header.Values("Set-Cookie"))
	}
}

func TestUnauthenticatedResponses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	client := noRedirects(e.newBrowser(t))

	p := fetch(t, client, http.MethodGet, e.server.URL+"/quotes?tab=2", nil, nil)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/auth/login?return_to=%2Fquotes%3Ftab%3D2" {
		t.Fatalf("page GET: %d Location %q", p.status, p.header.Get("Location"))
	}

	htmx := http.Header{"Hx-Request": {"true"}, "Hx-Current-Url": {e.server.URL + "/customers/7?tab=quotes"}}
	p = fetch(t, client, http.MethodPost, e.server.URL+"/quotes", htmx, url.Values{"x": {"1"}})
	if p.status != http.StatusUnauthorized || p.header.Get("HX-Redirect") != "/auth/login?return_to=%2Fcustomers%2F7%3Ftab%3Dquotes" {
		t.Fatalf("htmx: %d HX-Redirect %q", p.status, p.header.Get("HX-Redirect"))
	}

	foreign := http.Header{"Hx-Request": {"true"}, "Hx-Current-Url": {"https://evil.example/steal"}}
	p = fetch(t, client, http.MethodGet, e.server.URL+"/quotes?x=1", foreign, nil)
	if p.status != http.StatusUnauthorized || p.header.Get("HX-Redirect") != "/auth/login?return_to=%2Fquotes" {
		t.Fatalf("htmx from another origin: %d HX-Redirect %q", p.status, p.header.Get("HX-Redirect"))
	}

	p = fetch(t, client, http.MethodPost, e.server.URL+"/quotes", nil, url.Values{"x": {"1"}})
	if p.status != http.StatusUnauthorized || p.header.Get("Location") != "" || !strings.Contains(p.body, "Sign-in required") {
		t.Fatalf("plain POST: %d %q %q", p.status, p.header.Get("Location"), p.body)
	}
}

func TestLoginRejectsForeignReturnTo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	browser := e.newBrowser(t)
	form := parseLoginForm(t, e.get(t, browser, "/auth/login?return_to="+url.QueryEscape("//evil.example/x")))
	landed := e.submitLogin(t, browser, form, "sales", "sales-demo")
	if landed.url.Host != e.server.Listener.Addr().String() || landed.url.Path != "/" {
		t.Fatalf("landed on %s, want the portal's /", landed.url)
	}
}

func TestTwoTabsSignInConcurrently(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	browser := e.newBrowser(t)
	tabA := parseLoginForm(t, e.get(t, browser, "/quotes?tab=a"))
	tabB := parseLoginForm(t, e.get(t, browser, "/quotes?tab=b"))
	if tabA.authRequestID == tabB.authRequestID {
		t.Fatal("the two tabs share one authorization request")
	}
	if n := strings.Count(e.cookieHeader(browser, "/auth/callback"), loginCookiePrefix); n != 2 {
		t.Fatalf("want two login attempt cookies, got %d", n)
	}
	landedB := e.submitLogin(t, browser, tabB, "sales", "sales-demo")
	landedA := e.submitLogin(t, browser, tabA, "sales", "sales-demo")
	if landedB.status != http.StatusOK || landedB.url.RawQuery != "tab=b" || !strings.Contains(landedB.body, "Sam Sales") {
		t.Fatalf("tab B: %d %s %q", landedB.status, landedB.url, landedB.body)
	}
	if landedA.status != http.StatusOK || landedA.url.RawQuery != "tab=a" || !strings.Contains(landedA.body, "Sam Sales") {
		t.Fatalf("tab A: %d %s %q", landedA.status, landedA.url, landedA.body)
	}
}

func TestLoginAttemptCookiesAreBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	browser := e.newBrowser(t)
	var last loginForm
	for i := range maxLoginAttempts + 3 {
		last = parseLoginForm(t, e.get(t, browser, "/quotes?try="+string(rune('a'+i))))
	}
	if n := strings.Count(e.cookieHeader(browser, "/auth/callback"), loginCookiePrefix); n != maxLoginAttempts {
		t.Fatalf("browser holds %d login attempt cookies, want %d", n, maxLoginAttempts)
	}
	// The newest attempt still completes.
	if landed := e.submitLogin(t, browser, last, "sales", "sales-demo"); landed.status != http.StatusOK || landed.url.RawQuery != "try=h" {
		t.Fatalf("newest attempt: %d %s", landed.status, landed.url)
	}
}

// assertErrorPage checks the 400 page with its "Try again" link to the login.
func assertErrorPage(t *testing.T, name string, p page, wantText string) {
	t.Helper()
	if p.status != http.StatusBadRequest {
		t.Fatalf("%s: status %d, want 400: %s", name, p.status, p.body)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(p.body))
	if err != nil {
		t.Fatal(err)
	}
	link := doc.Find(`a[data-testid="auth-link"]`)
	if strings.TrimSpace(link.Text()) != "Try again" || !strings.HasPrefix(link.AttrOr("href", ""), "/auth/login") {
		t.Fatalf("%s: no Try again link to the login: %s", name, p.body)
	}
	if !strings.Contains(doc.Find(`[data-testid="auth-message"]`).Text(), wantText) {
		t.Fatalf("%s: message %q lacks %q", name, doc.Find(`[data-testid="auth-message"]`).Text(), wantText)
	}
}

func TestCallbackErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})

	t.Run("unknown state", func(t *testing.T) {
		browser := e.newBrowser(t)
		parseLoginForm(t, e.get(t, browser, "/quotes")) // a real attempt exists, with another state
		p := e.get(t, browser, "/auth/callback?code=abc&state=forged")
		assertErrorPage(t, "unknown state", p, "unknown, expired or was already used")
		if p := e.get(t, browser, "/auth/callback?code=abc"); p.status != http.StatusBadRequest {
			t.Fatalf("missing state: %d", p.status)
		}
	})

	t.Run("provider error", func(t *testing.T) {
		browser := e.newBrowser(t)
		form := parseLoginForm(t, e.get(t, browser, "/quotes?x=1"))
		_ = form
		state := attemptState(t, e, browser)
		p := e.get(t, browser, "/auth/callback?error=access_denied&error_description="+url.QueryEscape("User <b>cancelled</b>")+"&state="+url.QueryEscape(state))
		assertErrorPage(t, "provider error", p, "User <b>cancelled</b>")
		if strings.Contains(p.body, "<b>cancelled") {
			t.Fatal("the provider's description was not escaped")
		}
		if !strings.Contains(p.body, "return_to=%2Fquotes%3Fx%3D1") {
			t.Fatalf("Try again should keep the return target: %s", p.body)
		}
	})

	t.Run("reused state and replayed code", func(t *testing.T) {
		browser := e.newBrowser(t)
		form := parseLoginForm(t, e.get(t, browser, "/quotes"))
		before := e.copyCookies(t, browser) // holds the attempt cookie
		stopAtCallback := noRedirects(browser)
		resp := fetch(t, stopAtCallback, http.MethodPost, e.server.URL+form.action, nil, url.Values{
			"authRequestID": {form.authRequestID}, "username": {"sales"}, "password": {"sales-demo"},
		})
		// Follow the provider's redirects up to our callback URL, without calling it.
		callback := resp.header.Get("Location")
		for !strings.Contains(callback, CallbackPath) {
			next := fetch(t, stopAtCallback, http.MethodGet, absolute(e, callback), nil, nil)
			callback = next.header.Get("Location")
			if callback == "" {
				t.Fatalf("no redirect to the callback: %d %s", next.status, next.body)
			}
		}
		if p := e.get(t, browser, strings.TrimPrefix(absolute(e, callback), e.server.URL)); p.status != http.StatusOK {
			t.Fatalf("first callback: %d %s", p.status, p.body)
		}
		// The same callback again: the state was used up.
		p := e.get(t, browser, strings.TrimPrefix(absolute(e, callback), e.server.URL))
		assertErrorPage(t, "reused state", p, "already used")
		// With the attempt cookie restored, the code itself is refused by the provider (single use).
		p = e.get(t, before, strings.TrimPrefix(absolute(e, callback), e.server.URL))
		assertErrorPage(t, "replayed code", p, "rejected")
	})
}

// attemptState returns the state of the browser's pending login (from the provider's authorize URL it
// visited). It re-runs Login without following redirects.
func attemptState(t *testing.T, e *env, browser *http.Client) string {
	t.Helper()
	p := fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/auth/login?return_to=%2Fquotes%3Fx%3D1", nil, nil)
	loc, err := url.Parse(p.header.Get("Location"))
	if err != nil || loc.Query().Get("state") == "" {
		t.Fatalf("login redirect %q", p.header.Get("Location"))
	}
	q := loc.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("nonce") == "" {
		t.Fatalf("authorize request lacks PKCE or nonce: %v", q)
	}
	return q.Get("state")
}

func absolute(e *env, location string) string {
	if strings.HasPrefix(location, "/") {
		return e.server.URL + location
	}
	return location
}

func TestIdleTimeoutAndAbsoluteLifetime(t *testing.T) {
	t.Parallel()
	t.Run("idle", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOptions{idleTimeout: 30 * time.Minute, absoluteLifetime: 8 * time.Hour})
		browser := e.newBrowser(t)
		e.signIn(t, browser, "/quotes")
		e.clock.Advance(29 * time.Minute)
		if p := fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/quotes", nil, nil); p.status != http.StatusOK {
			t.Fatalf("active within the idle timeout: %d", p.status)
		}
		e.clock.Advance(31 * time.Minute)
		p := fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/quotes", nil, nil)
		if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), LoginPath) {
			t.Fatalf("after idling: %d %q", p.status, p.header.Get("Location"))
		}
	})
	t.Run("absolute", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOptions{idleTimeout: 30 * time.Minute, absoluteLifetime: time.Hour})
		browser := e.newBrowser(t)
		e.signIn(t, browser, "/quotes")
		for range 2 { // busy every 25 minutes: never idle
			e.clock.Advance(25 * time.Minute)
			if p := fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/quotes", nil, nil); p.status != http.StatusOK {
				t.Fatalf("within the lifetime: %d", p.status)
			}
		}
		e.clock.Advance(25 * time.Minute)
		p := fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/quotes", nil, nil)
		if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), LoginPath) {
			t.Fatalf("after the absolute lifetime: %d %q", p.status, p.header.Get("Location"))
		}
	})
}

func TestRefreshWhenTheTokenExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	browser := e.newBrowser(t)
	e.signIn(t, browser, "/quotes")
	first := e.who(t, browser)
	oldCookies := e.copyCookies(t, browser)

	e.clock.Advance(14*time.Minute + 30*time.Second) // within RefreshBefore of the 15-minute expiry
	second := e.who(t, browser)
	if second.AccessToken == first.AccessToken || e.refreshCalls.Load() != 1 {
		t.Fatalf("token not refreshed (refresh calls %d)", e.refreshCalls.Load())
	}
	if second.User != first.User {
		t.Fatalf("user changed on refresh: %+v", second.User)
	}
	if again := e.who(t, browser); again.AccessToken != second.AccessToken || e.refreshCalls.Load() != 1 {
		t.Fatal("the refreshed token was not kept")
	}

	// A request still carrying the old cookie (rotated refresh token) gets the new tokens, no new call.
	if stale := e.who(t, oldCookies); stale.AccessToken != second.AccessToken || e.refreshCalls.Load() != 1 {
		t.Fatalf("old cookie: same token %v, refresh calls %d", stale.AccessToken == second.AccessToken, e.refreshCalls.Load())
	}
}

func TestConcurrentRequestsRefreshOnce(t *testing.T) {
	t.Parallel()
	for _, postgres := range []bool{false, true} {
		e := newEnv(t, envOptions{postgres: postgres})
		browser := e.newBrowser(t)
		e.signIn(t, browser, "/quotes")
		before := e.who(t, browser)
		e.clock.Advance(20 * time.Minute)

		const parallel = 12
		tokens := make([]string, parallel)
		var wg sync.WaitGroup
		for i := range parallel {
			// Every request carries the same (old) cookies, as a browser's parallel requests do.
			tab := e.copyCookies(t, browser)
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := e.get(t, tab, "/whoami")
				if p.status == http.StatusOK {
					tokens[i] = p.body
				}
			}()
		}
		wg.Wait()
		if n := e.refreshCalls.Load(); n != 1 {
			t.Fatalf("postgres=%v: %d refresh calls upstream, want 1", postgres, n)
		}
		for i, body := range tokens {
			if body == "" || body != tokens[0] || strings.Contains(body, before.AccessToken) {
				t.Fatalf("postgres=%v: request %d got %q", postgres, i, body)
			}
		}
	}
}

func TestRefreshRefusedSignsOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	browser := e.newBrowser(t)
	e.signIn(t, browser, "/quotes")
	oldCookies := e.copyCookies(t, browser)
	e.clock.Advance(20 * time.Minute)
	e.who(t, browser) // rotates the refresh token
	e.clock.Advance(2 * time.Minute)

	// The old cookie's refresh token is retired and no longer remembered: the provider says invalid_grant.
	p := fetch(t, noRedirects(oldCookies), http.MethodGet, e.server.URL+"/quotes?tab=1", nil, nil)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/auth/login?reason=ended&return_to=%2Fquotes%3Ftab%3D1" {
		t.Fatalf("refused refresh: %d %q", p.status, p.header.Get("Location"))
	}
	// The sign-in page says why, and goes on to the provider from its link (issue 26).
	why := fetch(t, noRedirects(oldCookies), http.MethodGet, e.server.URL+p.header.Get("Location"), nil, nil)
	if why.status != http.StatusOK || !strings.Contains(why.body, "Your session was ended") ||
		!strings.Contains(why.body, `href="/auth/login?return_to=%2Fquotes%3Ftab%3D1"`) {
		t.Errorf("the sign-in page after a refused refresh: %d %.400s", why.status, why.body)
	}
	cleared := false
	for _, line := range p.header.Values("Set-Cookie") {
		cleared = cleared || strings.HasPrefix(line, "portal_s0=;") && strings.Contains(line, "Max-Age=0")
	}
	if !cleared {
		t.Fatalf("session cookie not cleared: %v", p.header.Values("Set-Cookie"))
	}
}

func TestRefreshWithTheProviderDown(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	browser := e.newBrowser(t)
	e.signIn(t, browser, "/quotes")
	first := e.who(t, browser)
	e.idpDown.Store(true)

	e.clock.Advance(14*time.Minute + 30*time.Second) // token still valid for 30 s
	if still := e.who(t, browser); still.AccessToken != first.AccessToken {
		t.Fatal("with the provider down the still-valid token must be used")
	}
	e.clock.Advance(time.Minute) // now expired
	p := fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/quotes", nil, nil)
	if p.status != http.StatusServiceUnavailable || !strings.Contains(p.body, "cannot be reached") {
		t.Fatalf("expired token, provider down: %d %s", p.status, p.body)
	}
	e.idpDown.Store(false)
	if after := e.who(t, browser); after.AccessToken == first.AccessToken {
		t.Fatal("no refresh once the provider is back")
	}
}

func TestForceRefresh(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	browser := e.newBrowser(t)
	e.signIn(t, browser, "/quotes")
	first := e.who(t, browser)
	p := fetch(t, browser, http.MethodPost, e.server.URL+"/force-refresh", nil, nil)
	if p.status != http.StatusOK || strings.Contains(p.body, first.AccessToken) || e.refreshCalls.Load() != 1 {
		t.Fatalf("force refresh: %d, refresh calls %d", p.status, e.refreshCalls.Load())
	}
	if now := e.who(t, browser); now.AccessToken == first.AccessToken || !strings.Contains(p.body, now.AccessToken) {
		t.Fatal("the forced refresh was not saved")
	}
}

func TestLogout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	browser := e.newBrowser(t)
	e.signIn(t, browser, "/quotes")
	idToken := e.who(t, browser).IDToken

	p := fetch(t, noRedirects(browser), http.MethodPost, e.server.URL+LogoutPath, nil, nil)
	if p.status != http.StatusSeeOther {
		t.Fatalf("logout: %d", p.status)
	}
	end, err := url.Parse(p.header.Get("Location"))
	if err != nil || end.Path != "/idp/end_session" {
		t.Fatalf("logout redirect %q", p.header.Get("Location"))
	}
	q := end.Query()
	if q.Get("id_token_hint") != idToken || q.Get("post_logout_redirect_uri") != e.server.URL+LoggedOutPath || q.Get("state") == "" || q.Get("client_id") != "" {
		t.Fatalf("end session query %v", q)
	}

	done := fetch(t, browser, http.MethodGet, end.String(), nil, nil)
	if done.status != http.StatusOK || done.url.Path != LoggedOutPath || done.url.Query().Get("state") != q.Get("state") {
		t.Fatalf("after end session: %d %s", done.status, done.url)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(done.body))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc.Text(), "You are signed out") || doc.Find(`a[href="/auth/login"]`).Length() != 1 {
		t.Fatalf("logged-out page: %s", done.body)
	}
	if p := fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/quotes", nil, nil); p.status != http.StatusSeeOther {
		t.Fatalf("still signed in after logout: %d", p.status)
	}
}

func TestLogoutWithTheDatabaseStoreMakesTheOldCookieUseless(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{postgres: true})
	browser := e.newBrowser(t)
	e.signIn(t, browser, "/quotes")
	stolen := e.copyCookies(t, browser)
	if p := e.get(t, stolen, "/quotes"); p.status != http.StatusOK {
		t.Fatalf("copied cookie before logout: %d", p.status)
	}
	fetch(t, browser, http.MethodPost, e.server.URL+LogoutPath, nil, nil)
	p := fetch(t, noRedirects(stolen), http.MethodGet, e.server.URL+"/quotes", nil, nil)
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), LoginPath) {
		t.Fatalf("old cookie after logout: %d %q", p.status, p.header.Get("Location"))
	}
}

func TestSessionStoreDownAnswers503(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{postgres: true})
	browser := e.newBrowser(t)
	e.signIn(t, browser, "/quotes")
	// The state database goes away (the store's Close leaves its database open). Within the outage
	// grace this replica still answers the session it read last (internal/session, sqlKV); after
	// it, the session cannot be read: a 503, not a sign-out.
	if err := e.stateDB.Close(); err != nil {
		t.Fatal(err)
	}
	if p := fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/quotes", nil, nil); p.status != http.StatusOK {
		t.Fatalf("store down, within the outage grace: %d, want 200", p.status)
	}
	e.clock.Advance(11 * time.Minute)
	p := fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/quotes", nil, nil)
	if p.status != http.StatusServiceUnavailable || !strings.Contains(p.body, "cannot be read") {
		t.Fatalf("store down: %d %s", p.status, p.body)
	}
}

func TestEnterpriseSizeTokens(t *testing.T) {
	t.Parallel()
	t.Run("4 KB access token", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOptions{padAccessTokenTo: 4096})
		browser := e.newBrowser(t)
		landed := e.signIn(t, browser, "/quotes")
		if landed.status != http.StatusOK {
			t.Fatalf("sign-in with a 4 KB token: %d %s", landed.status, landed.body)
		}
		w := e.who(t, browser)
		header := e.cookieHeader(browser, "/quotes")
		t.Logf("access token %d bytes, ID token %d bytes, Cookie header %d bytes", len(w.AccessToken), len(w.IDToken), len(header))
		if len(w.AccessToken) < 4000 || w.IDToken == "" {
			t.Fatalf("access token %d bytes, ID token kept %v", len(w.AccessToken), w.IDToken != "")
		}
		if len(header) >= 8<<10 {
			t.Fatalf("Cookie header %d bytes, want < 8192", len(header))
		}
		e.clock.Advance(20 * time.Minute)
		if refreshed := e.who(t, browser); refreshed.AccessToken == w.AccessToken || len(refreshed.AccessToken) < 4000 {
			t.Fatal("refresh with a large token failed")
		}
	})
	t.Run("ID token dropped, logout by client_id", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOptions{padAccessTokenTo: 8200})
		browser := e.newBrowser(t)
		if landed := e.signIn(t, browser, "/quotes"); landed.status != http.StatusOK {
			t.Fatalf("sign-in with an 8 KB token: %d %s", landed.status, landed.body)
		}
		w := e.who(t, browser)
		header := e.cookieHeader(browser, "/quotes")
		t.Logf("access token %d bytes, Cookie header %d bytes", len(w.AccessToken), len(header))
		if w.IDToken != "" {
			t.Fatal("want the ID token dropped to fit the cookies")
		}
		if len(header) >= 8<<10 {
			t.Fatalf("Cookie header %d bytes, want < 8192", len(header))
		}
		p := fetch(t, noRedirects(browser), http.MethodPost, e.server.URL+LogoutPath, nil, nil)
		end, _ := url.Parse(p.header.Get("Location"))
		if end.Query().Get("client_id") != testClientID || end.Query().Get("id_token_hint") != "" {
			t.Fatalf("logout without ID token: %q", p.header.Get("Location"))
		}
		if done := fetch(t, browser, http.MethodGet, end.String(), nil, nil); done.url.Path != LoggedOutPath {
			t.Fatalf("provider did not return to logged-out: %s", done.url)
		}
	})
}

func TestDiscoveryWaitsForTheProvider(t *testing.T) {
	t.Parallel()
	// The provider drops every connection when the authenticator starts, as one in the same process
	// that is not listening yet would: sign-in says so, and works once the provider is up.
	e := newEnv(t, envOptions{idpStartsDown: true})
	if e.auth.Ready() {
		t.Fatal("ready without a provider")
	}
	browser := e.newBrowser(t)
	p := fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/auth/login?return_to=%2Fquotes", nil, nil)
	if p.status != http.StatusServiceUnavailable || !strings.Contains(p.body, "cannot be reached") || !strings.Contains(p.body, "Try again") {
		t.Fatalf("sign-in before the provider is up: %d %s", p.status, p.body)
	}
	e.idpAbsent.Store(false)
	waitFor(t, "background discovery", e.auth.Ready)
	if landed := e.signIn(t, browser, "/quotes"); landed.status != http.StatusOK || !strings.Contains(landed.body, "Sam Sales") {
		t.Fatalf("sign-in once the provider is up: %d %s", landed.status, landed.body)
	}
}

func TestWithoutRefreshTokenTheTokenIsUsedToItsEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{scopes: []string{"openid", "profile", "email"}}) // no offline_access
	browser := e.newBrowser(t)
	e.signIn(t, browser, "/quotes")
	first := e.who(t, browser)
	e.clock.Advance(14*time.Minute + 30*time.Second)
	if still := e.who(t, browser); still.AccessToken != first.AccessToken {
		t.Fatal("token changed without a refresh token")
	}
	e.clock.Advance(time.Minute)
	p := fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/quotes", nil, nil)
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), LoginPath) || e.refreshCalls.Load() != 0 {
		t.Fatalf("expired token without refresh token: %d %q, refresh calls %d", p.status, p.header.Get("Location"), e.refreshCalls.Load())
	}
}

func TestLogoutFromHTMX(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	browser := e.newBrowser(t)
	e.signIn(t, browser, "/quotes")
	p := fetch(t, noRedirects(browser), http.MethodPost, e.server.URL+LogoutPath, http.Header{"Hx-Request": {"true"}}, nil)
	if p.status != http.StatusNoContent || !strings.HasPrefix(p.header.Get("HX-Redirect"), e.server.URL+"/idp/end_session?") {
		t.Fatalf("htmx logout: %d HX-Redirect %q", p.status, p.header.Get("HX-Redirect"))
	}
	if p := fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/quotes", nil, nil); p.status != http.StatusSeeOther {
		t.Fatalf("still signed in: %d", p.status)
	}
}

// TestDisplayNameFromClaims: the name claim, else given and family name, spaces tidied; a
// provider that gives neither gives no display name (the login is not one).
func TestDisplayNameFromClaims(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		claims profileClaims
		want   string
	}{
		{profileClaims{Name: "Sam Sales", GivenName: "Samuel", FamilyName: "S."}, "Sam Sales"},
		{profileClaims{GivenName: " Bea ", FamilyName: "Backoffice"}, "Bea Backoffice"},
		{profileClaims{GivenName: "Cher"}, "Cher"},
		{profileClaims{FamilyName: "Rossi"}, "Rossi"},
		{profileClaims{Name: "  ", PreferredUsername: "sales", Email: "s@x.example"}, ""},
	} {
		if got := c.claims.displayName(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.claims, got, c.want)
		}
	}
}

// TestVerifiedEmailOnly: an address the provider says is unverified is not passed on to name
// people by (a boolean or, as some providers send it, a string); absent or true passes.
func TestVerifiedEmailOnly(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		verified any
		want     string
	}{{nil, "a@x.example"}, {true, "a@x.example"}, {"true", "a@x.example"}, {false, ""}, {"FALSE", ""}} {
		if got := (profileClaims{Email: "a@x.example", EmailVerified: c.verified}).verifiedEmail(); got != c.want {
			t.Errorf("email_verified %v: %q, want %q", c.verified, got, c.want)
		}
	}
}
