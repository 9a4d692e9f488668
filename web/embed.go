// Package web holds the portal's browser-facing files: the static assets (web/static, embedded
// here) and the templ templates (web/templates/...).
//
// Static files are served under content-hashed URLs, /static/<hash>/<path>, so they can be cached
// for a year ("immutable") and a new version is a new URL. Templates never spell these URLs: they
// call URL("app.css") on the Assets value that the handlers put into the layout view model.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
)

//go:embed static
var embedded embed.FS

// StaticPrefix is the URL path under which assets are served.
const StaticPrefix = "/static/"

// hashLen is how many hex digits of the SHA-256 go into a URL: 64 bits, plenty to tell versions apart.
const hashLen = 16

// Assets is the manifest of the static files: their hashed URLs and their bytes (plain and gzip),
// computed once at start-up. It is safe for concurrent use and never changes after NewAssets.
type Assets struct {
	files map[string]*asset // by path relative to web/static, e.g. "app.css", "vendor/htmx-2.0.11.min.js"
}

type asset struct {
	name        string
	hash        string
	contentType string
	plain       []byte
	gzipped     []byte // nil when compression does not pay off (already compressed types, tiny files)
	// brotliBytes returns the brotli form, made on the first request that accepts it (sync.OnceValue;
	// only when gzipped is set, else nil): at the best quality it is 10-15% smaller than gzip for the
	// CSS and scripts every page loads, but takes about 200 ms for all of them, which start-up (and
	// every test portal) should not pay.
	brotliBytes func() []byte
}

// brotliOf compresses data at brotli's best quality; nil when that is not smaller than limit bytes.
func brotliOf(data []byte, limit int) []byte {
	var buf bytes.Buffer
	w := brotli.NewWriterLevel(&buf, brotli.BestCompression)
	if _, err := w.Write(data); err != nil {
		return nil
	}
	if err := w.Close(); err != nil || buf.Len() >= limit {
		return nil
	}
	return buf.Bytes()
}

// NewAssets builds the manifest from the embedded web/static directory.
func NewAssets() (*Assets, error) {
	sub, err := fs.Sub(embedded, "static")
	if err != nil {
		return nil, fmt.Errorf("web: static assets: %w", err)
	}
	return NewAssetsFS(sub)
}

// NewAssetsFS builds the manifest from any file system (tests use fstest.MapFS).
func NewAssetsFS(fsys fs.FS) (*Assets, error) {
	a := &Assets{files: make(map[string]*asset)}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		data = withoutComments(name, data)
		sum := sha256.Sum256(data)
		f := &asset{
			name:        name,
			hash:        hex.EncodeToString(sum[:])[:hashLen],
			contentType: contentType(name),
			plain:       data,
			brotliBytes: func() []byte { return nil },
		}
		if compressible(f.contentType) && len(data) > 256 {
			gz, err := gzipBytes(data)
			if err != nil {
				return fmt.Errorf("gzip %s: %w", name, err)
			}
			if len(gz) < len(data) {
				f.gzipped = gz
				f.brotliBytes = sync.OnceValue(func() []byte { return brotliOf(data, len(gz)) })
			}
		}
		a.files[name] = f
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web: static assets: %w", err)
	}
	return a, nil
}

// URL returns the hashed URL of a static file, e.g. URL("app.css") = "/static/3f2a.../app.css".
// An unknown name yields a URL under /static/missing/ that answers 404, so a typo shows up as a
// broken asset in the browser and in the layout tests instead of a panic while rendering.
func (a *Assets) URL(name string) string {
	if f, ok := a.files[name]; ok {
		return StaticPrefix + f.hash + "/" + f.name
	}
	return StaticPrefix + "missing/" + name
}

// Names lists the files of the manifest, sorted (for tests and diagnostics).
func (a *Assets) Names() []string {
	names := make([]string, 0, len(a.files))
	for name := range a.files {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// ServeHTTP serves GET and HEAD of /static/<hash>/<path>.
//
// A matching hash is cached for a year as immutable. A stale hash (a page rendered by the previous
// version during a rolling deploy) still gets the current file, but uncacheable, so the page works
// and no cache keeps the wrong bytes under the old URL. Brotli is served when the client accepts it,
// else gzip when it accepts that.
func (a *Assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, StaticPrefix)
	hash, name, found := strings.Cut(rest, "/")
	if !ok || !found {
		http.NotFound(w, r)
		return
	}
	f, ok := a.files[path.Clean(name)]
	if !ok || path.Clean(name) != name {
		http.NotFound(w, r)
		return
	}

	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	etag := `"` + f.hash + `"`
	h.Set("ETag", etag)
	if hash == f.hash {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	body := f.plain
	if f.gzipped != nil {
		h.Add("Vary", "Accept-Encoding")
		accept := r.Header.Get("Accept-Encoding")
		var br []byte
		if acceptsCoding(accept, "br") {
			br = f.brotliBytes()
		}
		switch {
		case br != nil:
			body = br
			h.Set("Content-Encoding", "br")
		case acceptsGzip(accept):
			body = f.gzipped
			h.Set("Content-Encoding", "gzip")
		}
	}
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatches(match, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body) // nothing useful to do when the client went away
	}
}

// contentType is the type an asset is served with, by its extension, from the kinds web/static
// holds. Not mime.TypeByExtension: its first call reads the machine's whole MIME database
// (/etc/mime.types, /usr/share/mime/globs2: over a thousand types kept in memory, 1.5 MiB of
// the portal's live heap, for the favicon's one lookup), and the types would then be the
// machine's rather than the portal's (docs/performance.md).
func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case "", ".LICENSE", ".txt", ".md":
		return "text/plain; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".ico":
		return "image/x-icon"
	case ".woff2":
		return "font/woff2"
	default:
		return "application/octet-stream"
	}
}

func compressible(contentType string) bool {
	for _, prefix := range []string{"text/", "application/json", "image/svg+xml", "application/javascript"} {
		if strings.HasPrefix(contentType, prefix) {
			return true
		}
	}
	return false
}

func gzipBytes(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip (or its alias x-gzip).
func acceptsGzip(header string) bool {
	return acceptsCoding(header, "gzip", "x-gzip")
}

// acceptsCoding reports whether an Accept-Encoding header allows a content coding, named by any of
// its names. An explicit entry wins over "*"; a q-value of zero refuses.
func acceptsCoding(header string, names ...string) bool {
	seen, ok, starSeen, starOK := false, false, false, false
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		allowed := !qIsZero(params)
		switch {
		case coding == "*":
			starSeen, starOK = true, allowed
		case slices.Contains(names, coding):
			seen, ok = true, allowed
		}
	}
	if seen {
		return ok
	}
	return starSeen && starOK
}

// qIsZero reports whether parameters like "q=0" or " q=0.000" give a zero quality.
func qIsZero(params string) bool {
	for _, p := range strings.Split(params, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(strings.TrimSpace(name), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			return err == nil && q == 0
		}
	}
	return false
}

// AcceptsGzip reports whether a request's Accept-Encoding allows a gzip response.
// The handlers' compression middleware shares this reading of the header.
func AcceptsGzip(r *http.Request) bool { return acceptsGzip(r.Header.Get("Accept-Encoding")) }

func etagMatches(header, etag string) bool {
	for _, candidate := range strings.Split(header, ",") {
		candidate = strings.TrimPrefix(strings.TrimSpace(candidate), "W/")
		if candidate == etag || candidate == "*" {
			return true
		}
	}
	return false
}

// cssComment is a CSS comment; app.css has no "/*" inside a string.
var cssComment = regexp.MustCompile(`(?s)/\*.*?\*/`)

// withoutComments drops the comments of our own stylesheet and script (not the vendored files,
// which come minified) before they are hashed and compressed: they explain the code to its readers
// and cost every first page load about 2 KB (issue 26 kept the assets under their budget). In the
// script only whole-line "//" comments go, which can never be inside a string or a regular
// expression; blank lines go too.
func withoutComments(name string, data []byte) []byte {
	if strings.HasPrefix(name, "vendor/") {
		return data
	}
	switch path.Ext(name) {
	case ".css":
		data = cssComment.ReplaceAll(data, nil)
	case ".js":
	default:
		return data
	}
	var out bytes.Buffer
	for line := range bytes.Lines(data) {
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 || (path.Ext(name) == ".js" && bytes.HasPrefix(trimmed, []byte("//"))) {
			continue
		}
		out.Write(line)
	}
	return out.Bytes()
}
