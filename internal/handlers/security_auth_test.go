package handlers

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/session"
)

// Suite 1 of docs/security.md: nobody gets in without a valid session, nobody rides a session from
// another site, and the sign-in flow sends users only to the portal's own pages. Every suite
// enumerates the router (engine.Routes()), so a route added later is covered automatically.

// secAnonymousWorld holds sample ids for requests that must never reach the v2 API (nothing is seeded).
func secAnonymousWorld() *secWorld {
	return &secWorld{customerID: 1, quoteID: 900001, basketID: 700001, rootNodeID: 800001, addonNodeID: 800002,
		contractID: 1, contractNo: "C-2026-000001", attachmentID: 1, profileID: 1, ownerID: 1001}
}

// secWantSignInAnswer checks the answer to a request without a usable session: a page GET is sent to
// sign in and back (303 to /auth/login?return_to=<the path>), an htmx request gets 401 with
// HX-Redirect, any other request 401. No page is rendered, nothing else is in the body.
func secWantSignInAnswer(t *testing.T, what, method, path string, htmxReq bool, resp response) {
	t.Helper()
	switch {
	case htmxReq:
		if _, ok := secSignInLink(resp.Header.Get("HX-Redirect")); resp.StatusCode != http.StatusUnauthorized || !ok {
			t.Errorf("%s: htmx %s %s answered %d HX-Redirect %q, want 401 with HX-Redirect to the sign-in",
				what, method, path, resp.StatusCode, resp.Header.Get("HX-Redirect"))
		}
	case method == http.MethodGet:
		want := "/auth/login?" + url.Values{"return_to": {path}}.Encode()
		if returnTo, ok := secSignInLink(resp.Header.Get("Location")); resp.StatusCode != http.StatusSeeOther || !ok || returnTo != path {
			t.Errorf("%s: GET %s answered %d Location %q, want 303 to %q", what, path, resp.StatusCode, resp.Header.Get("Location"), want)
		}
	default:
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %s %s answered %d, want 401", what, method, path, resp.StatusCode)
		}
	}
	if len(resp.body) > 256 || strings.Contains(resp.body, "data-testid") {
		t.Errorf("%s: %s %s answered with content (%d bytes): %.300s", what, method, path, len(resp.body), resp.body)
	}
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("%s: %s %s: Cache-Control %q, want no-store", what, method, path, resp.Header.Get("Cache-Control"))
	}
}

// secRequestAllProtected sends every protected route once (and once more as htmx) with the given Cookie
// header and checks each is answered as signed out.
func secRequestAllProtected(t *testing.T, sp *secPortal, what, cookie string) int {
	t.Helper()
	client := secRawClient()
	samples := secAnonymousWorld().sampleValues()
	checked := 0
	for _, route := range sp.protectedRoutes() {
		path, err := secBuildPath(route.Path, samples, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, htmxReq := range []bool{false, true} {
			hdr := map[string]string{}
			if cookie != "" {
				hdr["Cookie"] = cookie
			}
			if htmxReq {
				hdr["HX-Request"] = "true"
			}
			var body io.Reader
			if route.Method != http.MethodGet {
				body = strings.NewReader("name=x&quantity=2")
				hdr["Content-Type"] = "application/x-www-form-urlencoded"
			}
			resp := sp.do(t, client, route.Method, path, body, hdr)
			secWantSignInAnswer(t, what, route.Method, path, htmxReq, resp)
			checked++
		}
	}
	return checked
}

func TestSecurityEveryRouteRequiresSignIn(t *testing.T) {
	t.Parallel()
	sp := newSecPortal(t, secOptions{})
	checked := secRequestAllProtected(t, sp, "no cookie", "")
	if checked < 8 {
		t.Errorf("only %d protected route requests: the router enumeration found too few routes", checked)
	}
	// The start page (the home page's figures) needs a sign-in too.
	start := sp.get(t, secRawClient(), "/", nil)
	if start.StatusCode != http.StatusSeeOther || !strings.HasPrefix(start.Header.Get("Location"), "/auth/login?return_to=") {
		t.Errorf("/: %d Location %q", start.StatusCode, start.Header.Get("Location"))
	}
	if n := len(sp.sim.Requests()); n != 0 {
		t.Errorf("anonymous requests reached the v2 API %d times: %v", n, sp.sim.Requests()[0].RequestURI)
	}
}

// secCookiesFromSave runs store.Save on a recorder and returns the Cookie header a browser would send.
func secCookiesFromSave(t *testing.T, store session.Store, s *session.Session) string {
	t.Helper()
	rec := httptest.NewRecorder()
	if err := session.Save(store, rec, httptest.NewRequest(http.MethodGet, "/", nil), s); err != nil {
		t.Fatal(err)
	}
	parts := []string{}
	for _, c := range rec.Result().Cookies() {
		parts = append(parts, c.Name+"="+c.Value)
	}
	if len(parts) == 0 {
		t.Fatal("store.Save set no cookie")
	}
	return strings.Join(parts, "; ")
}

// secMutateCookieValues applies fn to the value of every cookie in a Cookie header.
func secMutateCookieValues(header string, fn func(string) string) string {
	parts := strings.Split(header, "; ")
	for i, p := range parts {
		name, value, _ := strings.Cut(p, "=")
		parts[i] = name + "=" + fn(value)
	}
	return strings.Join(parts, "; ")
}

func secFlipMiddle(v string) string {
	if v == "" {
		return "x"
	}
	b := []byte(v)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func TestSecurityTamperedCookies(t *testing.T) {
	t.Parallel()
	for _, store := range []struct {
		name     string
		database bool
	}{{"cookie store", false}, {"database store", true}} {
		t.Run(store.name, func(t *testing.T) {
			t.Parallel()
			sp := newSecPortal(t, secOptions{database: store.database})
			user := sp.login(t, "sales", "sales-demo")
			valid := sp.cookieHeader(user, "/customers")
			if control := sp.get(t, secRawClient(), "/customers", map[string]string{"Cookie": valid}); control.StatusCode != http.StatusOK {
				t.Fatalf("control: the unmodified cookie answered %d, want 200", control.StatusCode)
			}
			now := time.Now()
			good := &session.Session{Subject: "admin", Name: "Forged Admin", AccessToken: "forged-token",
				TokenExpiry: now.Add(time.Hour), CreatedAt: now, LastSeen: now}

			// A store with another key: a well-formed cookie the portal must not accept.
			otherKeyStore, err := session.NewCookieStore(session.Options{Keys: []string{"ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA="}})
			if err != nil {
				t.Fatal(err)
			}
			// The portal's own key (cookie store), but sessions past their lifetime or idle timeout.
			ownKeyStore, err := session.NewCookieStore(session.Options{Keys: []string{testSessionKey}, AbsoluteLifetime: 12 * time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			old := *good
			old.CreatedAt, old.LastSeen = now.Add(-13*time.Hour), now.Add(-time.Minute)
			idle := *good
			idle.CreatedAt, idle.LastSeen = now.Add(-2*time.Hour), now.Add(-31*time.Minute)

			variants := map[string]string{
				"modified":           secMutateCookieValues(valid, secFlipMiddle),
				"truncated half":     secMutateCookieValues(valid, func(v string) string { return v[:len(v)/2] }),
				"truncated last":     secMutateCookieValues(valid, func(v string) string { return v[:len(v)-1] }),
				"appended":           secMutateCookieValues(valid, func(v string) string { return v + "AAAA" }),
				"empty":              secMutateCookieValues(valid, func(string) string { return "" }),
				"not base64":         secMutateCookieValues(valid, func(string) string { return "!!!%%%***" }),
				"huge":               secMutateCookieValues(valid, func(string) string { return strings.Repeat("A", 3500) }),
				"forged with 2 keys": secCookiesFromSave(t, otherKeyStore, good),
			}
			if !store.database {
				variants["expired (absolute lifetime)"] = secCookiesFromSave(t, ownKeyStore, &old)
				variants["expired (idle)"] = secCookiesFromSave(t, ownKeyStore, &idle)
			}
			sp.resetSim() // the sign-in and the control request called the v2 API legitimately
			for name, cookie := range variants {
				secRequestAllProtected(t, sp, name, cookie)
			}
			if n := len(sp.sim.Requests()); n != 0 {
				t.Errorf("requests with bad cookies reached the v2 API %d times (first %s)", n, sp.sim.Requests()[0].RequestURI)
			}
		})
	}
}

// secCrossSiteAttacks are the ways a browser marks a request from another site.
var secCrossSiteAttacks = []map[string]string{
	{"Sec-Fetch-Site": "cross-site"},
	{"Sec-Fetch-Site": "same-site"}, // a sibling subdomain is another origin too
	{"Origin": "https://evil.example"},
	{"Origin": "null"}, // sandboxed iframes and some redirects
}

func TestSecurityCrossOriginRefusedOnEveryStateChangingRoute(t *testing.T) {
	t.Parallel()
	sp := newSecPortal(t, secOptions{})
	user := sp.login(t, "sales", "sales-demo")
	sp.resetSim() // the sign-in landed on a page that called the v2 API legitimately
	samples := secAnonymousWorld().sampleValues()
	checked := 0
	for _, route := range sp.routes {
		if !secIsStateChanging(route.Method) || route.Path == auth.BackChannelLogoutPath {
			continue // back-channel logout is server to server: the token decides (TestSecurityBackChannelLogout)
		}
		path, err := secBuildPath(route.Path, samples, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, attack := range secCrossSiteAttacks {
			for _, htmxReq := range []bool{false, true} {
				hdr := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
				for k, v := range attack {
					hdr[k] = v
				}
				if htmxReq {
					hdr["HX-Request"] = "true"
				}
				resp := sp.do(t, user, route.Method, path, strings.NewReader("name=x&quantity=2"), hdr)
				if resp.StatusCode != http.StatusForbidden {
					t.Errorf("%s %s with %v (htmx %v): %d, want 403", route.Method, path, attack, htmxReq, resp.StatusCode)
					continue
				}
				doc := parseHTML(t, resp.body)
				msg := doc.Find(`[data-testid="error-message"]`).Text()
				if htmxReq {
					msg = doc.Find(`[data-testid="toast"]`).Text()
				}
				if !strings.Contains(msg, "another site") {
					t.Errorf("%s %s with %v (htmx %v): refusal does not explain itself: %q", route.Method, path, attack, htmxReq, msg)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no state-changing route found (at least POST /auth/logout exists)")
	}
	if n := len(sp.sim.Requests()); n != 0 {
		t.Errorf("cross-site requests reached the v2 API %d times (first %s %s)", n, sp.sim.Requests()[0].Method, sp.sim.Requests()[0].RequestURI)
	}
	// The refused POST /auth/logout did not sign the user out.
	if resp := sp.get(t, user, "/customers", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("after refused cross-site requests the user is no longer signed in: %d", resp.StatusCode)
	}
	// Control: the same-origin logout works (so the refusals above were the middleware's doing).
	out := sp.do(t, user, http.MethodPost, "/auth/logout", nil, map[string]string{"Origin": sp.URL, "Sec-Fetch-Site": "same-origin"})
	if out.StatusCode != http.StatusSeeOther {
		t.Errorf("same-origin logout: %d, want 303", out.StatusCode)
	}
}

// signInFrom starts a sign-in at start (a portal URL), fills the provider's form as the sales user and
// follows the redirects until the portal's callback has answered; it returns that answer (the
// callback's redirect) and the callback URL. It never follows the callback's own redirect.
func (sp *secPortal) signInFrom(t *testing.T, client *http.Client, start string) (response, string) {
	t.Helper()
	next := start
	var form *goquery.Selection
	for range 10 {
		resp := sp.do(t, client, http.MethodGet, next, nil, nil)
		if resp.StatusCode == http.StatusOK {
			form = parseHTML(t, resp.body).Find("form")
			break
		}
		if resp.StatusCode < 300 || resp.StatusCode > 399 {
			t.Fatalf("sign-in from %s: GET %s answered %d: %.300s", start, next, resp.StatusCode, resp.body)
		}
		next = resolve(t, next, resp.Header.Get("Location"))
	}
	if form == nil || form.Find(`input[name="username"]`).Length() != 1 {
		t.Fatalf("sign-in from %s: the provider's form was not reached (at %s)", start, next)
	}
	values := url.Values{"username": {"sales"}, "password": {"sales-demo"}}
	form.Find("input[type=hidden]").Each(func(_ int, s *goquery.Selection) { values.Set(s.AttrOr("name", ""), s.AttrOr("value", "")) })
	action := resolve(t, next, form.AttrOr("action", ""))
	resp := sp.do(t, client, http.MethodPost, action, strings.NewReader(values.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": sp.URL})
	next = action
	for range 10 {
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
			t.Fatalf("sign-in from %s: the provider did not redirect to the callback (%d at %s): %.300s", start, resp.StatusCode, next, resp.body)
		}
		next = resolve(t, next, loc)
		resp = sp.do(t, client, http.MethodGet, next, nil, nil)
		if strings.HasPrefix(next, sp.URL+"/auth/callback") {
			return resp, next
		}
	}
	t.Fatalf("sign-in from %s: never reached the callback", start)
	return response{}, ""
}

// secIsLocalTarget reports whether a redirect target stays on the portal: a path that starts with one
// "/" (not "//" or "/\", which browsers read as another host) and has no scheme or host.
func secIsLocalTarget(target string) bool {
	if !strings.HasPrefix(target, "/") || strings.HasPrefix(target, "//") || strings.HasPrefix(target, "/\\") {
		return false
	}
	if strings.ContainsAny(target, "\\\t\r\n") {
		return false
	}
	u, err := url.Parse(target)
	return err == nil && u.Scheme == "" && u.Host == "" && u.User == nil
}

func TestSecurityOpenRedirectOnReturnTo(t *testing.T) {
	t.Parallel()
	sp := newSecPortal(t, secOptions{})
	hostile := []string{
		"https://evil.example/", "http:evil.example", "//evil.example", "///evil.example", "////evil.example/x",
		"/\\evil.example", "\\\\evil.example", "/\t/evil.example", " //evil.example", "%2F%2Fevil.example",
		"/%2F%2Fevil.example", "/%5Cevil.example", "/%2f%5cevil.example", "javascript:alert(1)", "JaVaScRiPt:alert(1)",
		"data:text/html,<script>alert(1)</script>", "evil.example", "@evil.example", "/@evil.example/..//evil.example",
		"https:/evil.example", "/auth/login?return_to=//evil.example", "/auth/callback", "/\r\nLocation: //evil.example",
		"/\x00//evil.example", strings.Repeat("/a", 2000),
	}
	for _, target := range hostile {
		resp, _ := sp.signInFrom(t, sp.client(t), sp.URL+"/auth/login?"+url.Values{"return_to": {target}}.Encode())
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusSeeOther || !secIsLocalTarget(loc) {
			t.Errorf("return_to %q: callback answered %d Location %q, want 303 to a local path", target, resp.StatusCode, loc)
		}
		if u, err := url.Parse(loc); err == nil && u.Host != "" {
			t.Errorf("return_to %q: sent the user to host %q", target, u.Host)
		}
	}
	// A benign target survives the round trip exactly.
	for _, target := range []string{"/customers?q=M%C3%BCller&page=2", "/quotes"} {
		resp, _ := sp.signInFrom(t, sp.client(t), sp.URL+"/auth/login?"+url.Values{"return_to": {target}}.Encode())
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != target {
			t.Errorf("return_to %q: callback answered %d Location %q, want exactly the target", target, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	// The return target an anonymous request produces stays local, whatever the request path, query
	// or htmx's HX-Current-URL say.
	client := secRawClient()
	for _, route := range sp.protectedRoutes() {
		path, err := secBuildPath(route.Path, secAnonymousWorld().sampleValues(), false)
		if err != nil {
			t.Fatal(err)
		}
		for _, query := range []string{"?next=//evil.example", "?x=%5C%5Cevil.example"} {
			hdrs := []map[string]string{
				nil,
				{"HX-Request": "true", "HX-Current-URL": "https://evil.example/phish"},
				{"HX-Request": "true", "HX-Current-URL": "//evil.example/" + path},
				{"HX-Request": "true", "HX-Current-URL": sp.URL + "//evil.example"},
			}
			for _, hdr := range hdrs {
				resp := sp.do(t, client, route.Method, path+query, nil, hdr)
				loc := resp.Header.Get("Location")
				if hdr != nil {
					loc = resp.Header.Get("HX-Redirect")
				}
				if loc == "" {
					continue // non-GET without htmx: 401 without a target (checked elsewhere)
				}
				u, err := url.Parse(loc)
				if err != nil || u.Path != "/auth/login" || !secIsLocalTarget(u.Query().Get("return_to")) {
					t.Errorf("%s %s%s %v: sign-in target %q does not return to a local path", route.Method, path, query, hdr, loc)
				}
			}
		}
	}
}

func TestSecurityCallbackReplay(t *testing.T) {
	t.Parallel()
	var swapNonce atomic.Bool
	sp := newSecPortal(t, secOptions{wrapIdP: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// An attacker who makes the provider mint an ID token for another nonce (an ID token
			// replayed from another sign-in): rewrite the nonce of the authorization request.
			if swapNonce.Load() && r.URL.Path == "/idp/authorize" {
				q := r.URL.Query()
				q.Set("nonce", "attacker-chosen-nonce")
				r.URL.RawQuery = q.Encode()
			}
			next.ServeHTTP(w, r)
		})
	}})
	signedOut := func(t *testing.T, what string, client *http.Client) {
		t.Helper()
		if resp := sp.get(t, client, "/customers", nil); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("%s: the browser got a session (GET /customers answered %d)", what, resp.StatusCode)
		}
	}
	wantRefused := func(t *testing.T, what string, resp response, text string) {
		t.Helper()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: callback answered %d, want 400: %.300s", what, resp.StatusCode, resp.body)
			return
		}
		if msg := parseHTML(t, resp.body).Find(`[data-testid="error-message"]`).Text(); !strings.Contains(msg, text) {
			t.Errorf("%s: message %q lacks %q", what, msg, text)
		}
		for _, c := range resp.Cookies() {
			if strings.HasPrefix(c.Name, "portal_s") && c.MaxAge >= 0 && c.Value != "" {
				t.Errorf("%s: the refused callback set session cookie %s", what, c.Name)
			}
		}
	}

	t.Run("state replay", func(t *testing.T) {
		victim := sp.client(t)
		first, callback := sp.signInFrom(t, victim, sp.URL+"/auth/login?return_to=%2Fcustomers")
		if first.StatusCode != http.StatusSeeOther {
			t.Fatalf("first callback: %d", first.StatusCode)
		}
		// The same callback URL again in the victim's browser: the state was used up.
		wantRefused(t, "replay in the same browser", sp.get(t, victim, callback, nil), "already used")
		// An attacker who captured the callback URL, in their own browser: no attempt cookie.
		attacker := sp.client(t)
		wantRefused(t, "replay in another browser", sp.get(t, attacker, callback, nil), "unknown, expired or was already used")
		signedOut(t, "replay in another browser", attacker)
	})

	t.Run("code replay", func(t *testing.T) {
		// A complete sign-in uses up its state and its code.
		_, callback := sp.signInFrom(t, sp.client(t), sp.URL+"/auth/login?return_to=%2Fcustomers")
		used, err := url.Parse(callback)
		if err != nil || used.Query().Get("code") == "" {
			t.Fatalf("callback URL %q carries no code", callback)
		}
		// The captured code replayed into a fresh, valid attempt: the provider refuses it (codes are
		// single use, and PKCE binds it to the attempt that asked for it).
		replayer := sp.client(t)
		start := sp.do(t, replayer, http.MethodGet, "/auth/login?return_to=%2Fcustomers", nil, nil)
		authorize, err := url.Parse(start.Header.Get("Location"))
		if err != nil || authorize.Query().Get("state") == "" {
			t.Fatalf("login did not redirect to the provider: %q", start.Header.Get("Location"))
		}
		replay := sp.URL + "/auth/callback?" + url.Values{"code": {used.Query().Get("code")}, "state": {authorize.Query().Get("state")}}.Encode()
		wantRefused(t, "used code with a fresh state", sp.get(t, replayer, replay, nil), "rejected")
		signedOut(t, "used code with a fresh state", replayer)
	})

	t.Run("code injected into another attempt", func(t *testing.T) {
		// The attacker signs in as themselves, stops before the callback and plants their code in
		// the victim's pending sign-in. PKCE binds the code to the attempt that asked for it.
		attacker := sp.client(t)
		codeURL := sp.stopBeforeCallback(t, attacker)
		victim := sp.client(t)
		start := sp.do(t, victim, http.MethodGet, "/auth/login?return_to=%2Fcustomers", nil, nil)
		authorize, err := url.Parse(start.Header.Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		cb, _ := url.Parse(codeURL)
		injected := sp.URL + "/auth/callback?" + url.Values{"code": {cb.Query().Get("code")}, "state": {authorize.Query().Get("state")}}.Encode()
		wantRefused(t, "injected code", sp.get(t, victim, injected, nil), "rejected")
		signedOut(t, "injected code", victim)
	})

	t.Run("nonce mismatch", func(t *testing.T) {
		swapNonce.Store(true)
		defer swapNonce.Store(false)
		browser := sp.client(t)
		resp, _ := sp.signInFrom(t, browser, sp.URL+"/auth/login?return_to=%2Fcustomers")
		wantRefused(t, "ID token for another nonce", resp, "does not belong to this sign-in attempt")
		signedOut(t, "ID token for another nonce", browser)
	})
}

// stopBeforeCallback signs in at the provider and returns the callback URL (with the code) without
// calling it.
func (sp *secPortal) stopBeforeCallback(t *testing.T, client *http.Client) string {
	t.Helper()
	next := sp.URL + "/auth/login?return_to=%2Fcustomers"
	var form *goquery.Selection
	for range 10 {
		resp := sp.do(t, client, http.MethodGet, next, nil, nil)
		if resp.StatusCode == http.StatusOK {
			form = parseHTML(t, resp.body).Find("form")
			break
		}
		next = resolve(t, next, resp.Header.Get("Location"))
	}
	if form == nil {
		t.Fatal("the provider's form was not reached")
	}
	values := url.Values{"username": {"sales"}, "password": {"sales-demo"}}
	form.Find("input[type=hidden]").Each(func(_ int, s *goquery.Selection) { values.Set(s.AttrOr("name", ""), s.AttrOr("value", "")) })
	action := resolve(t, next, form.AttrOr("action", ""))
	resp := sp.do(t, client, http.MethodPost, action, strings.NewReader(values.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": sp.URL})
	next = action
	for range 10 {
		next = resolve(t, next, resp.Header.Get("Location"))
		if strings.HasPrefix(next, sp.URL+"/auth/callback") {
			return next
		}
		resp = sp.do(t, client, http.MethodGet, next, nil, nil)
	}
	t.Fatal("never redirected to the callback")
	return ""
}

// With every session store, a copy of the cookie taken before logout opens nothing afterwards: no
// route answers anything but sign-in, and nothing reaches the v2 API (the file and database stores delete
// the session; the cookie store revokes its id).
func TestSecurityLogoutMakesACopiedCookieUseless(t *testing.T) {
	t.Parallel()
	for _, store := range []struct {
		name string
		opts secOptions
	}{
		{"cookie", secOptions{}},
		{"sqlite", secOptions{sqlite: true}},
		{"database", secOptions{database: true}},
	} {
		t.Run(store.name, func(t *testing.T) {
			t.Parallel()
			sp := newSecPortal(t, store.opts)
			user := sp.login(t, "sales", "sales-demo")
			stolen := sp.cookieHeader(user, "/customers")
			if resp := sp.get(t, secRawClient(), "/customers", map[string]string{"Cookie": stolen}); resp.StatusCode != http.StatusOK {
				t.Fatalf("control: the copied cookie answered %d before logout", resp.StatusCode)
			}
			out := sp.do(t, user, http.MethodPost, "/auth/logout", nil, map[string]string{"Origin": sp.URL})
			if out.StatusCode != http.StatusSeeOther {
				t.Fatalf("logout: %d", out.StatusCode)
			}
			if left := sp.cookieHeader(user, "/customers"); strings.Contains(left, "portal_s") {
				t.Errorf("logout left session cookies in the browser: %q", left)
			}
			sp.resetSim()
			secRequestAllProtected(t, sp, "cookie copied before logout", stolen)
			if n := len(sp.sim.Requests()); n != 0 {
				t.Errorf("the old cookie reached the v2 API %d times after logout", n)
			}
		})
	}
}

// The back-channel logout endpoint is the one state-changing route without cross-origin protection
// (the provider posts server to server): a cross-site request reaches it and is judged by its
// token alone, so a browser with the user's cookie and no valid token ends nothing.
func TestSecurityBackChannelLogoutIsJudgedByItsTokenOnly(t *testing.T) {
	t.Parallel()
	sp := newSecPortal(t, secOptions{sqlite: true})
	user := sp.login(t, "sales", "sales-demo")
	for _, attack := range secCrossSiteAttacks {
		hdr := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
		for k, v := range attack {
			hdr[k] = v
		}
		resp := sp.do(t, user, http.MethodPost, auth.BackChannelLogoutPath, strings.NewReader("logout_token=forged.by.a-page"), hdr)
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("cross-site POST with %v: %d (Cache-Control %q), want 400 from the token check, not 403",
				attack, resp.StatusCode, resp.Header.Get("Cache-Control"))
		}
	}
	if resp := sp.get(t, user, "/customers", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("a refused logout token ended the session: %d", resp.StatusCode)
	}
	// The bypass is for that one route: its neighbours keep the protection.
	resp := sp.do(t, user, http.MethodPost, auth.BackChannelLogoutPath+"/x", nil, map[string]string{"Origin": "https://evil.example"})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST below the back-channel path: %d", resp.StatusCode)
	}
}

// secSignInLink reads a link to the sign-in: its return_to, and whether it is one (/auth/login with
// return_to and at most a known reason, issue 26).
func secSignInLink(link string) (returnTo string, ok bool) {
	u, err := url.Parse(link)
	if err != nil || u.Path != "/auth/login" || u.Host != "" || !u.Query().Has("return_to") {
		return "", false
	}
	q := u.Query()
	switch q.Get("reason") {
	case "", "ended", "expired":
	default:
		return "", false
	}
	q.Del("reason")
	q.Del("return_to")
	return u.Query().Get("return_to"), len(q) == 0
}
