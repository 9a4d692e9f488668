package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestLanguageFollowsAcceptLanguageThenTheMenu: the first visit speaks the browser's language; the
// menu's choice is kept in a long-lived preference cookie that wins over the browser and survives
// a sign-out; the switch goes back to the same page; a hostile return address stays on the site.
func TestLanguageFollowsAcceptLanguageThenTheMenu(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	client := p.login(t, "sales", "sales-demo")

	page := p.get(t, client, "/customers", map[string]string{"Accept-Language": "de-CH,de;q=0.9,en;q=0.5"})
	doc := parseHTML(t, page.body)
	if lang := doc.Find("html").AttrOr("lang", ""); lang != "de" || page.Header.Get("Content-Language") != "de" {
		t.Fatalf("Accept-Language de-CH: <html lang=%q>, Content-Language %q; want de", lang, page.Header.Get("Content-Language"))
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid="logout"]`).Text()); got != "Abmelden" {
		t.Errorf("German sign-out button reads %q", got)
	}
	if n := doc.Find(`[data-testid="language-menu"] button[name=lang]`).Length(); n != 5 {
		t.Errorf("the language menu offers %d languages, want 5", n)
	}
	if got := doc.Find(`[data-testid="language-menu"] input[name=next]`).AttrOr("value", ""); got != "/customers" {
		t.Errorf("the menu comes back to %q, want /customers", got)
	}

	form := url.Values{"lang": {"it"}, "next": {"/customers?q=Rossi&sort=name"}}
	resp := p.do(t, client, http.MethodPost, "/language", strings.NewReader(form.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": p.URL})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/customers?q=Rossi&sort=name" {
		t.Fatalf("switch to Italian: %d to %q, want 303 back to the same page", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "portal_lang" {
			cookie = c
		}
	}
	if cookie == nil || cookie.Value != "it" || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.MaxAge < 300*24*3600 {
		t.Fatalf("preference cookie %+v, want portal_lang=it, HttpOnly, SameSite=Lax, a year", cookie)
	}
	page = p.get(t, client, "/customers", map[string]string{"Accept-Language": "de"})
	if lang := parseHTML(t, page.body).Find("html").AttrOr("lang", ""); lang != "it" {
		t.Errorf("after choosing Italian, a German browser gets <html lang=%q>", lang)
	}

	// The choice outlives the session: signed out, the portal's own pages still speak Italian.
	out := p.do(t, client, http.MethodPost, "/auth/logout", nil, map[string]string{"Origin": p.URL})
	if out.StatusCode >= 400 {
		t.Fatalf("sign-out answered %d", out.StatusCode)
	}
	missing := p.get(t, client, "/no-such-page", nil)
	if !strings.Contains(missing.body, "Pagina non trovata") {
		t.Errorf("signed out, the not-found page is not in Italian: %.300s", missing.body)
	}

	for _, next := range []string{"//evil.example/x", "https://evil.example", "/\\evil.example", "javascript:alert(1)", ""} {
		form := url.Values{"lang": {"fr"}, "next": {next}}
		resp := p.do(t, client, http.MethodPost, "/language", strings.NewReader(form.Encode()),
			map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": p.URL})
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
			t.Errorf("next=%q: %d to %q, want 303 to /", next, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	bad := p.do(t, client, http.MethodPost, "/language", strings.NewReader("lang=xx&next=/"),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": p.URL, "Accept-Language": "es"})
	if bad.StatusCode != http.StatusBadRequest || !strings.Contains(bad.body, "Le portail ne parle pas cette langue") {
		t.Errorf("unknown language: %d, want 400 in the chosen language (French, over the browser's Spanish): %.400s", bad.StatusCode, bad.body)
	}
	cross := p.do(t, client, http.MethodPost, "/language", strings.NewReader("lang=de&next=/"),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
	if cross.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site switch answered %d, want 403", cross.StatusCode)
	}
}
