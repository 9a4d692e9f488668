package handlers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/gin-gonic/gin"
)

// publicRoutes need no sign-in; every other route must send an anonymous visitor to sign in.
func isPublicRoute(path string) bool {
	for _, prefix := range []string{"/healthz", "/readyz", "/static/", "/auth/", "/idp/"} {
		if strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return path == "/language" // the language menu works before sign-in too
}

func TestEveryPageRequiresSignIn(t *testing.T) {
	t.Parallel()
	var routes gin.RoutesInfo
	// Listed before the server starts: gin builds its trees lazily on the first request.
	p := newPortal(t, portalOptions{extraRoute: func(_ *Handler, r *gin.Engine) { routes = r.Routes() }})
	client := p.client(t)
	checked := 0
	for _, route := range routes {
		if isPublicRoute(route.Path) {
			continue
		}
		path := strings.NewReplacer(":customerId", "1", ":quoteId", "1", ":contractId", "1", "*path", "x").Replace(route.Path)
		for strings.Contains(path, ":") { // any other parameter
			i := strings.Index(path, ":")
			j := strings.IndexByte(path[i:], '/')
			if j < 0 {
				path = path[:i] + "1"
			} else {
				path = path[:i] + "1" + path[i+j:]
			}
		}
		resp := p.do(t, client, route.Method, path, nil, nil)
		switch {
		case route.Method == http.MethodGet && resp.StatusCode == http.StatusSeeOther && strings.HasPrefix(resp.Header.Get("Location"), "/auth/login?return_to="):
		case route.Method != http.MethodGet && resp.StatusCode == http.StatusUnauthorized:
		default:
			t.Errorf("%s %s answered %d (Location %q) to an anonymous visitor", route.Method, route.Path, resp.StatusCode, resp.Header.Get("Location"))
		}
		checked++
	}
	if checked < 4 {
		t.Errorf("only %d signed-in routes found; the area routes are missing", checked)
	}
}

func TestPagesRenderInTheLayout(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	user := p.login(t, "sales", "sales-demo")

	// The start page is the home page by role (docs/home.md): a rep's pipeline.
	start := p.get(t, user, "/", nil)
	if start.StatusCode != http.StatusOK {
		t.Errorf("/: %d, want the home page", start.StatusCode)
	} else if got := parseHTML(t, start.body).Find("h1").First().Text(); got != "My pipeline" {
		t.Errorf("/: h1 %q, want My pipeline", got)
	}
	for _, area := range []struct{ path, title string }{
		{"/customers", "Customers"}, {"/quotes", "Quotes"}, {"/contracts", "Contracts"}, {"/audits", "Audits"},
	} {
		resp := p.get(t, user, area.path, nil)
		if resp.StatusCode != 200 {
			t.Errorf("%s: status %d", area.path, resp.StatusCode)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", area.path, ct)
		}
		doc := parseHTML(t, resp.body)
		if got := doc.Find("title").Text(); got != area.title+" – CPQ Portal" {
			t.Errorf("%s: title %q", area.path, got)
		}
		if got := doc.Find("h1").First().Text(); got != area.title {
			t.Errorf("%s: h1 %q", area.path, got)
		}
		current := doc.Find(`nav [aria-current="page"]`)
		if current.Length() != 1 || current.AttrOr("href", "") != area.path {
			t.Errorf("%s: aria-current on %q (%d entries)", area.path, current.AttrOr("href", ""), current.Length())
		}
		if got := doc.Find(`[data-testid="user-name"]`).Text(); got != "Sam Sales" {
			t.Errorf("%s: user name %q", area.path, got)
		}
		logout := doc.Find(`form[action="/auth/logout"]`)
		if logout.AttrOr("method", "") != "post" || logout.Find("button[type=submit]").Length() != 1 {
			t.Errorf("%s: no logout POST form", area.path)
		}
		// Every script and stylesheet is one of ours, under a hashed URL that answers.
		doc.Find("script, link[rel=stylesheet]").Each(func(_ int, s *goquery.Selection) {
			src := s.AttrOr("src", s.AttrOr("href", ""))
			if s.Is("script") && strings.TrimSpace(s.Text()) != "" {
				t.Errorf("%s: inline script", area.path)
			}
			if !strings.HasPrefix(src, "/static/") || strings.Contains(src, "/missing/") {
				t.Errorf("%s: asset URL %q", area.path, src)
				return
			}
			if asset := p.get(t, user, src, nil); asset.StatusCode != 200 || !strings.Contains(asset.Header.Get("Cache-Control"), "immutable") {
				t.Errorf("%s: asset %s answered %d %q", area.path, src, asset.StatusCode, asset.Header.Get("Cache-Control"))
			}
		})
		if doc.Find("[style]").Length() != 0 || doc.Find("style").Length() != 0 {
			t.Errorf("%s: inline style (CSP forbids it)", area.path)
		}
	}
}
