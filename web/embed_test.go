package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/andybalholm/brotli"
)

func TestEmbeddedAssets(t *testing.T) {
	t.Parallel()
	a, err := NewAssets()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"app.css", "app.js", "vendor/htmx-2.0.11.min.js", "vendor/htmx.LICENSE"} {
		if strings.HasPrefix(a.URL(name), StaticPrefix+"missing/") {
			t.Errorf("%s is not embedded (have %v)", name, a.Names())
		}
	}
	// Page weight budget (issue: first load <= 40 KB compressed, HTML included): the assets every
	// page loads must leave room for the document itself. make bench measures the whole page.
	// Browsers accept brotli; a client that only takes gzip gets somewhat more.
	var brotlied, gzipped int
	for _, name := range []string{"app.css", "app.js", "vendor/htmx-2.0.11.min.js"} {
		f := a.files[name]
		if f.gzipped == nil || f.brotliBytes() == nil {
			t.Fatalf("%s is not precompressed", name)
		}
		brotlied += len(f.brotliBytes())
		gzipped += len(f.gzipped)
	}
	if brotlied > 31<<10 {
		t.Errorf("css+js are %d bytes with brotli; keep them under 31 KB so a first page load stays under 40 KB", brotlied)
	}
	if gzipped > 36<<10 {
		t.Errorf("css+js are %d bytes gzipped; keep them under 36 KB", gzipped)
	}
	if js := a.files["app.js"]; bytes.Contains(js.plain, []byte("eval(")) || bytes.Contains(js.plain, []byte("innerHTML")) {
		t.Error("app.js must not use eval or innerHTML (CSP, escaping)")
	}
}

func TestURLIsContentHash(t *testing.T) {
	t.Parallel()
	a, err := NewAssetsFS(fstest.MapFS{"app.css": {Data: []byte("body{}")}})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("body{}"))
	want := "/static/" + hex.EncodeToString(sum[:])[:16] + "/app.css"
	if got := a.URL("app.css"); got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
	if got := a.URL("nope.css"); got != "/static/missing/nope.css" {
		t.Errorf("unknown URL = %q", got)
	}
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/static/missing/nope.css", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("unknown asset: status %d, want 404", rec.Code)
	}
}

func TestServeHTTP(t *testing.T) {
	t.Parallel()
	css := strings.Repeat(".a{color:red}\n", 100)
	a, err := NewAssetsFS(fstest.MapFS{"app.css": {Data: []byte(css)}, "vendor/x.js": {Data: []byte("1")}})
	if err != nil {
		t.Fatal(err)
	}
	url := a.URL("app.css")

	t.Run("immutable with gzip", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept-Encoding", "gzip, br;q=0")
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("status %d", rec.Code)
		}
		h := rec.Header()
		if h.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("Cache-Control = %q", h.Get("Cache-Control"))
		}
		if h.Get("Content-Encoding") != "gzip" || h.Get("Vary") != "Accept-Encoding" {
			t.Errorf("Content-Encoding %q, Vary %q", h.Get("Content-Encoding"), h.Get("Vary"))
		}
		if h.Get("Content-Type") != "text/css; charset=utf-8" {
			t.Errorf("Content-Type = %q", h.Get("Content-Type"))
		}
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(zr)
		if string(body) != css {
			t.Error("gzip body does not decompress to the file")
		}
	})
	t.Run("brotli when accepted", func(t *testing.T) {
		for _, ae := range []string{"br, gzip;q=0.8", "gzip, deflate, br, zstd", "*"} {
			req := httptest.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("Accept-Encoding", ae)
			rec := httptest.NewRecorder()
			a.ServeHTTP(rec, req)
			h := rec.Header()
			if h.Get("Content-Encoding") != "br" || h.Get("Vary") != "Accept-Encoding" {
				t.Errorf("Accept-Encoding %q: Content-Encoding %q, Vary %q", ae, h.Get("Content-Encoding"), h.Get("Vary"))
				continue
			}
			if h.Get("Content-Length") != strconv.Itoa(rec.Body.Len()) || rec.Body.Len() >= len(a.files["app.css"].gzipped) {
				t.Errorf("Accept-Encoding %q: %d bytes (Content-Length %s); want fewer than gzip's %d",
					ae, rec.Body.Len(), h.Get("Content-Length"), len(a.files["app.css"].gzipped))
			}
			body, err := io.ReadAll(brotli.NewReader(rec.Body))
			if err != nil || string(body) != css {
				t.Errorf("Accept-Encoding %q: brotli body does not decompress to the file (%v)", ae, err)
			}
		}
	})
	t.Run("plain when compression refused", func(t *testing.T) {
		for _, ae := range []string{"", "identity", "gzip;q=0", "*;q=0", "br;q=0", "zstd"} {
			req := httptest.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("Accept-Encoding", ae)
			rec := httptest.NewRecorder()
			a.ServeHTTP(rec, req)
			if rec.Header().Get("Content-Encoding") != "" || rec.Body.String() != css {
				t.Errorf("Accept-Encoding %q: got Content-Encoding %q", ae, rec.Header().Get("Content-Encoding"))
			}
		}
	})
	t.Run("conditional", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodGet, url, nil)
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, req)
		req2 := httptest.NewRequest(http.MethodGet, url, nil)
		req2.Header.Set("If-None-Match", rec.Header().Get("ETag"))
		rec2 := httptest.NewRecorder()
		a.ServeHTTP(rec2, req2)
		if rec2.Code != http.StatusNotModified || rec2.Body.Len() != 0 {
			t.Errorf("If-None-Match: status %d, %d bytes", rec2.Code, rec2.Body.Len())
		}
	})
	t.Run("stale hash served uncacheable", func(t *testing.T) {
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/static/0123456789abcdef/app.css", nil))
		if rec.Code != 200 || rec.Header().Get("Cache-Control") != "no-cache" {
			t.Errorf("stale hash: status %d, Cache-Control %q", rec.Code, rec.Header().Get("Cache-Control"))
		}
	})
	t.Run("small files not compressed", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodGet, a.URL("vendor/x.js"), nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, req)
		if rec.Header().Get("Content-Encoding") != "" || rec.Body.String() != "1" || rec.Header().Get("Content-Type") != "text/javascript; charset=utf-8" {
			t.Errorf("small js: encoding %q type %q body %q", rec.Header().Get("Content-Encoding"), rec.Header().Get("Content-Type"), rec.Body.String())
		}
	})
	t.Run("bad paths and methods", func(t *testing.T) {
		for _, p := range []string{"/static/app.css", "/static/x/../app.css", "/static/x//app.css", "/static/x/vendor/../app.css", "/other"} {
			rec := httptest.NewRecorder()
			a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://h"+p, nil))
			if rec.Code != http.StatusNotFound {
				t.Errorf("%s: status %d, want 404", p, rec.Code)
			}
		}
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, url, nil))
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("POST: status %d", rec.Code)
		}
		head := httptest.NewRecorder()
		a.ServeHTTP(head, httptest.NewRequest(http.MethodHead, url, nil))
		if head.Code != 200 || head.Body.Len() != 0 || head.Header().Get("Content-Length") == "" {
			t.Errorf("HEAD: status %d, body %d bytes, length %q", head.Code, head.Body.Len(), head.Header().Get("Content-Length"))
		}
	})
}

// Our stylesheet and script are served without their comments; vendored files as they are.
func TestAssetsDropComments(t *testing.T) {
	css := withoutComments("app.css", []byte("/* about\n   the rule */\na { color: red; }\n\n/* x */ b { top: 0; }\n"))
	if string(css) != "a { color: red; }\n b { top: 0; }\n" {
		t.Errorf("css: %q", css)
	}
	js := withoutComments("app.js", []byte("// why\nvar a = \"http://x\"; // kept: not a whole line\n  // indented\n\nf();\n"))
	if string(js) != "var a = \"http://x\"; // kept: not a whole line\nf();\n" {
		t.Errorf("js: %q", js)
	}
	vendored := []byte("// licence\nx()\n")
	if got := withoutComments("vendor/htmx.min.js", vendored); string(got) != string(vendored) {
		t.Errorf("vendored file changed: %q", got)
	}
}

// TestAssetTypesAreThePortals checks that every embedded asset is served with a type from the
// portal's own table: the favicon as SVG, and a kind the machine's MIME database knows but the
// portal does not (OpenDocument) as bytes, so the machine's /etc/mime.types is never read (its
// thousand types held 1.5 MiB of the live heap) and cannot change what an asset is served as.
func TestAssetTypesAreThePortals(t *testing.T) {
	t.Parallel()
	a, err := NewAssetsFS(fstest.MapFS{
		"favicon.svg": {Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)},
		"sheet.odt":   {Data: []byte("PK")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"favicon.svg": "image/svg+xml", "sheet.odt": "application/octet-stream"} {
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, a.URL(name), nil))
		if got := rec.Header().Get("Content-Type"); rec.Code != http.StatusOK || got != want {
			t.Errorf("%s: %d %q, want 200 %q", name, rec.Code, got, want)
		}
	}
	embedded, err := NewAssets()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range embedded.Names() {
		if got := contentType(name); got == "application/octet-stream" {
			t.Errorf("embedded asset %s has no type of its own", name)
		}
	}
}
