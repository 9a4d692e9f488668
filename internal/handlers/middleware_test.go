package handlers

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gin-gonic/gin"
)

// wantSecurityHeaders checks the headers every response must carry.
func wantSecurityHeaders(t *testing.T, what string, resp response) {
	t.Helper()
	h := resp.Header
	csp := h.Get("Content-Security-Policy")
	for _, directive := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
		"object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'", "frame-src 'self'"} {
		if !strings.Contains(csp, directive) {
			t.Errorf("%s: CSP %q lacks %q", what, csp, directive)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("%s: CSP allows unsafe-inline or unsafe-eval: %q", what, csp)
	}
	want := map[string]string{
		"X-Content-Type-Options":     "nosniff",
		"Referrer-Policy":            "same-origin",
		"X-Frame-Options":            "DENY",
		"Cross-Origin-Opener-Policy": "same-origin",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got, v)
		}
	}
	if !strings.Contains(h.Get("Permissions-Policy"), "camera=()") {
		t.Errorf("%s: Permissions-Policy = %q", what, h.Get("Permissions-Policy"))
	}
	if h.Get("X-Request-Id") == "" {
		t.Errorf("%s: no X-Request-Id", what)
	}
}

func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{extraRoute: func(h *Handler, r *gin.Engine) {
		r.GET("/test/panic", func(*gin.Context) { panic("boom") })
	}})
	anon := p.client(t)
	user := p.login(t, "sales", "sales-demo")
	cases := []struct {
		what   string
		client *http.Client
		method string
		path   string
		header map[string]string
		status int
	}{
		{"healthz", anon, http.MethodGet, "/healthz", nil, 200},
		{"readyz", anon, http.MethodGet, "/readyz", nil, 0},
		{"static", anon, http.MethodGet, p.h.assets.URL("app.css"), nil, 200},
		{"unknown static", anon, http.MethodGet, "/static/x/nope.css", nil, 404},
		{"not found", anon, http.MethodGet, "/no/such/page", nil, 404},
		{"login redirect", anon, http.MethodGet, "/customers", nil, 303},
		{"start redirect", anon, http.MethodGet, "/", nil, 303},
		{"page", user, http.MethodGet, "/customers", nil, 200},
		{"htmx error", user, http.MethodGet, "/nope", htmx, 404},
		{"cross-origin refusal", user, http.MethodPost, "/auth/logout", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"panic", anon, http.MethodGet, "/test/panic", nil, 500},
		{"provider", anon, http.MethodGet, "/idp/.well-known/openid-configuration", nil, 200},
	}
	for _, tc := range cases {
		resp := p.do(t, tc.client, tc.method, tc.path, nil, tc.header)
		if tc.status != 0 && resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d", tc.what, resp.StatusCode, tc.status)
		}
		wantSecurityHeaders(t, tc.what, resp)
	}
}

func TestAllowFramingBySelf(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{extraRoute: func(h *Handler, r *gin.Engine) {
		r.GET("/test/pdf", func(c *gin.Context) {
			AllowFramingBySelf(c)
			c.Data(http.StatusOK, "application/pdf", []byte("%PDF-1.4"))
		})
	}})
	resp := p.get(t, p.client(t), "/test/pdf", nil)
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "frame-ancestors 'self'") || strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP = %q, want frame-ancestors 'self'", csp)
	}
	if resp.Header.Get("X-Frame-Options") != "SAMEORIGIN" {
		t.Errorf("X-Frame-Options = %q", resp.Header.Get("X-Frame-Options"))
	}
	if !strings.Contains(csp, "script-src 'self'") {
		t.Error("relaxing framing dropped the rest of the policy")
	}
	// Other responses stay strict.
	if other := p.get(t, p.client(t), "/healthz", nil); other.Header.Get("X-Frame-Options") != "DENY" {
		t.Error("framing relaxed for another response")
	}
}

func TestCrossOriginProtection(t *testing.T) {
	t.Parallel()
	var posts atomic.Int32
	p := newPortal(t, portalOptions{extraRoute: func(h *Handler, r *gin.Engine) {
		r.POST("/test/echo", func(c *gin.Context) { posts.Add(1); c.String(http.StatusOK, "done") })
	}})
	client := p.client(t)
	refused := []map[string]string{
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
		{"Origin": "https://evil.example"},
	}
	for _, hdr := range refused {
		resp := p.do(t, client, http.MethodPost, "/test/echo", strings.NewReader("a=1"), hdr)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%v: status %d, want 403", hdr, resp.StatusCode)
		}
		doc := parseHTML(t, resp.body)
		if msg := doc.Find(`[data-testid="error-message"]`).Text(); !strings.Contains(msg, "another site") {
			t.Errorf("%v: message %q does not explain the refusal", hdr, msg)
		}
	}
	htmxRefused := p.do(t, client, http.MethodPost, "/test/echo", nil, map[string]string{"Sec-Fetch-Site": "cross-site", "HX-Request": "true"})
	if htmxRefused.StatusCode != http.StatusForbidden || htmxRefused.Header.Get("HX-Retarget") != "#toasts" {
		t.Errorf("htmx cross-site: status %d, HX-Retarget %q", htmxRefused.StatusCode, htmxRefused.Header.Get("HX-Retarget"))
	}
	if n := posts.Load(); n != 0 {
		t.Fatalf("a refused request reached the handler %d times", n)
	}
	allowed := []map[string]string{
		{"Sec-Fetch-Site": "same-origin"},
		{"Origin": p.URL},
		nil, // not a browser: no Origin, no Sec-Fetch-Site
	}
	for _, hdr := range allowed {
		resp := p.do(t, client, http.MethodPost, "/test/echo", strings.NewReader("a=1"), hdr)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%v: status %d, want 200", hdr, resp.StatusCode)
		}
	}
	// Safe methods always pass, whatever the site: a link from another site may open a page.
	if resp := p.get(t, client, "/healthz", map[string]string{"Sec-Fetch-Site": "cross-site"}); resp.StatusCode != http.StatusOK {
		t.Errorf("cross-site GET: status %d, want 200", resp.StatusCode)
	}
	if n := posts.Load(); n != 3 {
		t.Errorf("same-origin posts reached the handler %d times, want 3", n)
	}
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	var seen atomic.Value
	p := newPortal(t, portalOptions{extraRoute: func(h *Handler, r *gin.Engine) {
		r.GET("/test/id", func(c *gin.Context) {
			seen.Store(RequestIDFrom(c.Request.Context()))
			h.log(c).Info("inside handler")
			c.String(http.StatusOK, requestIDOf(c))
		})
	}})
	client := p.client(t)

	generated := p.get(t, client, "/test/id", nil)
	id := generated.Header.Get("X-Request-Id")
	if !regexp.MustCompile(`^[A-Za-z0-9-]{16,64}$`).MatchString(id) {
		t.Fatalf("generated id %q is not well-formed", id)
	}
	if generated.body != id || seen.Load() != id {
		t.Errorf("id in context %q / gin %q, header %q: want the same", seen.Load(), generated.body, id)
	}
	if again := p.get(t, client, "/test/id", nil).Header.Get("X-Request-Id"); again == id {
		t.Error("two requests got the same generated id")
	}

	echoed := p.get(t, client, "/test/id", map[string]string{"X-Request-Id": "proxy-abc-123"})
	if echoed.Header.Get("X-Request-Id") != "proxy-abc-123" || echoed.body != "proxy-abc-123" {
		t.Errorf("well-formed incoming id not kept: %q", echoed.Header.Get("X-Request-Id"))
	}
	for _, bad := range []string{"<script>", "a b", strings.Repeat("a", 65), "id\"inject", "ünïcode"} {
		resp := p.get(t, client, "/test/id", map[string]string{"X-Request-Id": bad})
		got := resp.Header.Get("X-Request-Id")
		if got == bad || !regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`).MatchString(got) {
			t.Errorf("malicious id %q answered as %q; want a fresh id", bad, got)
		}
	}
	// Every log line of the request carries its id: the handler's line and the access log.
	logs := p.logs.String()
	for _, msg := range []string{`"msg":"inside handler","request_id":"proxy-abc-123"`, `"msg":"http request","request_id":"proxy-abc-123"`} {
		if !strings.Contains(logs, msg) {
			t.Errorf("log lacks %s", msg)
		}
	}
}

func TestRecoveryHidesPanics(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{extraRoute: func(h *Handler, r *gin.Engine) {
		r.GET("/test/panic", func(*gin.Context) { panic("secret internal detail 42") })
	}})
	for _, hdr := range []map[string]string{nil, htmx} {
		resp := p.get(t, p.client(t), "/test/panic", hdr)
		if resp.StatusCode != http.StatusInternalServerError {
			t.Errorf("status %d, want 500", resp.StatusCode)
		}
		if strings.Contains(resp.body, "secret internal detail") || strings.Contains(resp.body, "goroutine") || strings.Contains(resp.body, ".go:") {
			t.Errorf("panic details leaked to the client:\n%s", resp.body)
		}
		id := resp.Header.Get("X-Request-Id")
		if !strings.Contains(resp.body, id) {
			t.Errorf("error answer does not show the request id %s", id)
		}
		doc := parseHTML(t, resp.body)
		if hdr == nil && doc.Find(`[data-testid="error-page"]`).AttrOr("data-status", "") != "500" {
			t.Errorf("full request: no error page:\n%s", resp.body)
		}
		if hdr != nil && doc.Find(`[data-testid="toast"]`).Length() != 1 {
			t.Errorf("htmx request: no toast:\n%s", resp.body)
		}
	}
	logs := p.logs.String()
	if !strings.Contains(logs, "secret internal detail 42") || !strings.Contains(logs, "goroutine") {
		t.Error("the panic and its stack were not logged")
	}
	if !strings.Contains(logs, `"status":500`) {
		t.Error("the access log did not record the 500")
	}
}

func TestCompression(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("<p>compress me</p>", 200)
	p := newPortal(t, portalOptions{extraRoute: func(h *Handler, r *gin.Engine) {
		r.GET("/test/html", func(c *gin.Context) { c.Data(http.StatusOK, "text/html; charset=utf-8", []byte(big)) })
		r.GET("/test/json", func(c *gin.Context) { c.Data(http.StatusOK, "application/json", []byte(`{"a":"`+big+`"}`)) })
		r.GET("/test/pdf", func(c *gin.Context) { c.Data(http.StatusOK, "application/pdf", []byte(big)) })
		r.GET("/test/download", func(c *gin.Context) {
			c.Header("Content-Disposition", `attachment; filename="x.txt"`)
			c.Data(http.StatusOK, "text/plain", []byte(big))
		})
	}})
	// Transport with compression off, so the test sees the wire format.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	gz := map[string]string{"Accept-Encoding": "gzip"}

	for _, path := range []string{"/test/html", "/test/json"} {
		resp := p.get(t, client, path, gz)
		if resp.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s: Content-Encoding %q, Vary %q", path, resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
			continue
		}
		zr, err := gzip.NewReader(strings.NewReader(resp.body))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		plain, _ := io.ReadAll(zr)
		if !bytes.Contains(plain, []byte(big)) || len(resp.body) >= len(plain) {
			t.Errorf("%s: body does not decompress to the page, or is not smaller", path)
		}
	}
	for _, path := range []string{"/test/pdf", "/test/download"} {
		resp := p.get(t, client, path, gz)
		if resp.Header.Get("Content-Encoding") != "" || resp.body != big {
			t.Errorf("%s: compressed (%q); PDFs and downloads must pass as is", path, resp.Header.Get("Content-Encoding"))
		}
	}
	if plain := p.get(t, client, "/test/html", nil); plain.Header.Get("Content-Encoding") != "" || plain.body != big {
		t.Error("compressed although the client did not accept gzip")
	}
	// Precompressed static files are not compressed twice.
	static := p.get(t, client, p.h.assets.URL("app.css"), gz)
	zr, err := gzip.NewReader(strings.NewReader(static.body))
	if err != nil {
		t.Fatal(err)
	}
	css, _ := io.ReadAll(zr)
	if !bytes.Contains(css, []byte(":root")) {
		t.Error("static CSS is not a single gzip layer over the stylesheet")
	}
	if static.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Errorf("static Cache-Control = %q", static.Header.Get("Cache-Control"))
	}
	// Pages themselves are not cacheable.
	if page := p.get(t, client, "/healthz", nil); page.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("dynamic Cache-Control = %q, want no-store", page.Header.Get("Cache-Control"))
	}
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{extraRoute: func(h *Handler, r *gin.Engine) {
		r.POST("/test/form", limitBody(1024), func(c *gin.Context) {
			if err := c.Request.ParseForm(); err != nil {
				h.fail(c, err)
				return
			}
			c.String(http.StatusOK, "len=%d", len(c.PostForm("v")))
		})
	}})
	client := p.client(t)
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	ok := p.do(t, client, http.MethodPost, "/test/form", strings.NewReader("v="+strings.Repeat("a", 500)), form)
	if ok.StatusCode != http.StatusOK || ok.body != "len=500" {
		t.Errorf("small body: %d %q", ok.StatusCode, ok.body)
	}
	tooBig := p.do(t, client, http.MethodPost, "/test/form", strings.NewReader("v="+strings.Repeat("a", 5000)), form)
	if tooBig.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("large body: status %d, want 413", tooBig.StatusCode)
	}
	if msg := parseHTML(t, tooBig.body).Find(`[data-testid="error-message"]`).Text(); !strings.Contains(msg, "1 KiB") {
		t.Errorf("413 message %q does not name the limit", msg)
	}
}
