package handlers

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/klauspost/compress/gzip"

	"github.com/cpqportal/portal/internal/config"
	"github.com/cpqportal/portal/web"
)

// Middleware order (routes.go), outermost first, and why:
//
//  1. requestID: everything after it, including the access log and recovery, knows the id.
//  2. accessLog: sees the final status, also of a recovered panic (it logs in a defer).
//  3. recovery: turns a panic into the error page/toast; inside the access log so the 500 is logged.
//  4. securityHeaders: set before any handler writes, so they are on every response, errors included.
//  5. crossOrigin: refuses cross-site state-changing requests before any handler runs.
//  6. compress: wraps the writer last, so only handler output is compressed.

// gin context keys.
const (
	ctxKeyRequestID = "portal.request_id"
	ctxKeyLogger    = "portal.logger"
	ctxKeyCSP       = "portal.csp"
)

// requestIDKey is the context.Context key of the request id (see RequestIDFrom).
type requestIDKey struct{}

// validRequestID: an incoming X-Request-Id is kept only when it is short and harmless in logs and
// headers; anything else is replaced.
var validRequestID = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

// RequestIDFrom returns the request id stored in ctx by the request-id middleware, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// requestID takes a well-formed incoming X-Request-Id (from a proxy) or makes one, echoes it in
// the response, and puts it into the gin context, the request's context and a request logger.
func (h *Handler) requestID(c *gin.Context) {
	id := c.GetHeader("X-Request-Id")
	if !validRequestID.MatchString(id) {
		id = rand.Text() // 26 characters of base32: unguessable and log-friendly
	}
	c.Header("X-Request-Id", id)
	c.Set(ctxKeyRequestID, id)
	c.Set(ctxKeyLogger, h.logger.With(slog.String("request_id", id)))
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), requestIDKey{}, id))
	c.Next()
}

// requestIDOf returns the request id of c.
func requestIDOf(c *gin.Context) string {
	return c.GetString(ctxKeyRequestID)
}

// log returns the request's logger: every line carries request_id.
func (h *Handler) log(c *gin.Context) *slog.Logger {
	if l, ok := c.Get(ctxKeyLogger); ok {
		if logger, ok := l.(*slog.Logger); ok {
			return logger
		}
	}
	return h.logger
}

// accessLog writes one structured line per request. Health checks log at debug level so that
// probes do not drown the log. The query string is left out: it may hold search text.
//
// A response of known length (a page, a download) is flushed to the client before the line is
// formatted and written: net/http would send its last bytes only after the handlers returned,
// so the log's own work sat on every page's latency (docs/performance.md). A panic skips the
// flush (recovery or net/http decide what the client gets).
func (h *Handler) accessLog(c *gin.Context) {
	start := time.Now()
	defer func() {
		status := c.Writer.Status()
		level := slog.LevelInfo
		switch {
		case c.Request.URL.Path == "/healthz" || c.Request.URL.Path == "/readyz":
			level = slog.LevelDebug
		case status >= 500:
			level = slog.LevelWarn // the error itself was logged at error level by fail/recovery
		}
		h.log(c).LogAttrs(c.Request.Context(), level, "http request",
			slog.String("method", c.Request.Method),
			slog.String("path", c.Request.URL.Path),
			slog.String("route", c.FullPath()),
			slog.Int("status", status),
			slog.Int("bytes", max(c.Writer.Size(), 0)),
			slog.Duration("duration", time.Since(start)),
			slog.String("client_ip", c.ClientIP()),
			slog.Bool("htmx", c.GetHeader("HX-Request") == "true"),
		)
	}()
	c.Next()
	if c.Writer.Written() && c.Writer.Header().Get("Content-Length") != "" {
		c.Writer.Flush()
	}
}

// recovery turns a panic into a 500 error page or toast with the request id; the stack trace goes
// to the log only. If the response was already partly sent, the connection is aborted instead, so
// the browser never takes half a page for a whole one.
func (h *Handler) recovery(c *gin.Context) {
	defer func() {
		rec := recover()
		if rec == nil {
			return
		}
		if rec == http.ErrAbortHandler { // a deliberate abort: let net/http handle it
			panic(rec)
		}
		h.log(c).Error("panic while handling request",
			slog.Any("panic", rec), slog.String("stack", string(debug.Stack())),
			slog.String("method", c.Request.Method), slog.String("path", c.Request.URL.Path))
		if c.Writer.Written() {
			panic(http.ErrAbortHandler)
		}
		c.Abort()
		h.renderError(c, http.StatusInternalServerError, t(c, "error.internal.title"), t(c, "error.internal.message"))
	}()
	c.Next()
}

// contentSecurityPolicy is the one CSP of the portal: no inline script or style, no eval, no
// plugins, no framing (see AllowFramingBySelf). form-action also allows the OpenID provider's
// origin, because sign-out is a form POST answered by a redirect to the provider's end-session
// endpoint, and browsers apply form-action to that redirect.
func contentSecurityPolicy(cfg config.Config) (string, error) {
	formAction := "'self'"
	if cfg.OIDCIssuer != "" {
		issuer, err := url.Parse(cfg.OIDCIssuer)
		if err != nil {
			return "", fmt.Errorf("handlers: issuer URL: %w", err)
		}
		if origin := issuer.Scheme + "://" + issuer.Host; issuer.Host != cfg.PublicURL.Host || issuer.Scheme != cfg.PublicURL.Scheme {
			formAction += " " + origin
		}
	}
	return "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; " +
		"base-uri 'none'; form-action " + formAction + "; frame-ancestors 'none'; frame-src 'self'", nil
}

// securityHeaders sets the security headers on every response before anything is written.
// Responses are not cacheable by default (pages carry customer data); static assets and downloads
// override Cache-Control.
func (h *Handler) securityHeaders(c *gin.Context) {
	hdr := c.Writer.Header()
	hdr.Set("Content-Security-Policy", h.csp)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "same-origin")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=()")
	hdr.Set("Cross-Origin-Opener-Policy", "same-origin")
	hdr.Set("Cross-Origin-Resource-Policy", "same-origin")
	hdr.Set("Cache-Control", "no-store")
	if h.hsts {
		hdr.Set("Strict-Transport-Security", "max-age=31536000")
	}
	c.Set(ctxKeyCSP, h.csp)
	c.Next()
}

// AllowFramingBySelf lets the portal's own pages frame this one response (inline PDF preview in an
// <iframe>): frame-ancestors 'self' and X-Frame-Options SAMEORIGIN. Call it before writing the body.
func AllowFramingBySelf(c *gin.Context) {
	csp := c.GetString(ctxKeyCSP)
	if csp == "" {
		return
	}
	c.Header("Content-Security-Policy", strings.Replace(csp, "frame-ancestors 'none'", "frame-ancestors 'self'", 1))
	c.Header("X-Frame-Options", "SAMEORIGIN")
}

// crossOrigin refuses state-changing requests (POST, PUT, PATCH, DELETE) that a browser marks as
// coming from another site (Sec-Fetch-Site, or an Origin that is not ours). Unlike CSRF tokens this
// never expires while a tab is open. Requests without those headers are not from a browser form
// and pass (net/http.CrossOriginProtection).
func (h *Handler) crossOrigin(c *gin.Context) {
	if err := h.cop.Check(c.Request); err != nil {
		h.log(c).Warn("cross-origin request refused",
			slog.String("method", c.Request.Method), slog.String("path", c.Request.URL.Path),
			slog.String("origin", c.GetHeader("Origin")), slog.String("sec_fetch_site", c.GetHeader("Sec-Fetch-Site")))
		c.Abort()
		h.renderError(c, http.StatusForbidden, t(c, "error.cross_origin.title"), t(c, "error.cross_origin.message"))
		return
	}
	c.Next()
}

// limitBody bounds the request body; reading past it fails with *http.MaxBytesError, which the
// error edge answers with 413.
func limitBody(n int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.Body != nil {
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, n)
		}
		c.Next()
	}
}

// minCompressBytes: a response that declares a smaller Content-Length is sent as is (below
// about 1 KB gzip gains a few hundred bytes at most and costs a writer reset per response).
const minCompressBytes = 1024

// compress gzips text responses (HTML, CSS, JS, JSON, SVG, plain text) when the client accepts it.
// The decision is made at the first body write, when the handler has set its headers. Left alone:
// responses that already have a Content-Encoding (precompressed static files), a Content-Disposition
// (downloads), other types (PDFs, images), a declared length under 1 KB, HEAD requests and
// bodiless statuses.
func (h *Handler) compress(c *gin.Context) {
	if c.Request.Method == http.MethodHead || !web.AcceptsGzip(c.Request) {
		c.Next()
		return
	}
	original := c.Writer
	gw := &gzipResponseWriter{ResponseWriter: original, pool: h.gzipWriters}
	c.Writer = gw
	defer func() {
		gw.close()
		c.Writer = original
	}()
	c.Next()
}

// gzipPool holds reusable gzip writers and the buffers whole bodies are compressed into (one per
// Handler; reusing them saves their sizeable internal state on every response).
//
// github.com/klauspost/compress/gzip, not the standard library: pages are compressed on every
// request, and profiling the customer detail page (docs/performance.md) showed the standard
// library's deflate, even at level 1, at about a third of the portal's CPU per request.
//   - Whole bodies (render) use klauspost's stateless mode: each one is compressed on its own, with
//     no window kept in the writer; for a 14 kB page that is 42 µs against 104 µs for the standard
//     library's level 1, for the same size (4.4 kB).
//   - Streamed bodies (several writes) use BestSpeed, which keeps its window across writes.
//
// Pages are 10-25% larger than at level 6; static assets stay precompressed at the best level by
// web.Assets.
type gzipPool struct {
	whole   sync.Pool   // *gzip.Writer, StatelessCompression
	stream  sync.Pool   // *gzip.Writer, BestSpeed
	buffers *bufferPool // what whole bodies are compressed into
}

func newGzipPool(buffers *bufferPool) *gzipPool {
	newWriter := func(level int) func() any {
		return func() any {
			zw, _ := gzip.NewWriterLevel(io.Discard, level) // a valid level: no error
			return zw
		}
	}
	return &gzipPool{
		whole:   sync.Pool{New: newWriter(gzip.StatelessCompression)},
		stream:  sync.Pool{New: newWriter(gzip.BestSpeed)},
		buffers: buffers,
	}
}

func getWriter(pool *sync.Pool, dst io.Writer) *gzip.Writer {
	zw := pool.Get().(*gzip.Writer)
	zw.Reset(dst)
	return zw
}

func putWriter(pool *sync.Pool, zw *gzip.Writer) {
	zw.Reset(io.Discard) // drop the reference to the response
	pool.Put(zw)
}

// gzipResponseWriter compresses the body if, at the first write, the response qualifies.
type gzipResponseWriter struct {
	gin.ResponseWriter
	pool     *gzipPool
	zw       *gzip.Writer
	decided  bool
	compress bool
	// bodySize, when above 0, is the length of the whole body, about to be written at once.
	bodySize int
}

// announceBodySize tells the compress middleware that the body of n bytes follows in one write
// (render): a small one (a partial, a toast region) is sent as is, and a larger one is compressed
// whole and sent with its Content-Length in one write (no chunked encoding, fewer system calls).
func announceBodySize(w gin.ResponseWriter, n int) {
	if gw, ok := w.(*gzipResponseWriter); ok && !gw.decided {
		gw.bodySize = n
	}
}

func compressibleType(contentType string) bool {
	ct := strings.ToLower(contentType)
	for _, prefix := range []string{"text/html", "text/css", "text/plain", "text/javascript", "application/javascript", "application/json", "image/svg+xml"} {
		if strings.HasPrefix(ct, prefix) {
			return true
		}
	}
	return false
}

func (w *gzipResponseWriter) decide() {
	if w.decided {
		return
	}
	w.decided = true
	hdr := w.Header()
	status := w.Status()
	if w.ResponseWriter.Written() || status < 200 || status == http.StatusNoContent || status == http.StatusNotModified ||
		hdr.Get("Content-Encoding") != "" || hdr.Get("Content-Disposition") != "" ||
		!compressibleType(hdr.Get("Content-Type")) {
		return
	}
	if n, err := strconv.Atoi(hdr.Get("Content-Length")); err == nil && n < minCompressBytes {
		return // too small to gain anything
	}
	if w.bodySize > 0 && w.bodySize < minCompressBytes {
		return // the same, told by render (announceBodySize)
	}
	w.compress = true
	hdr.Del("Content-Length") // the compressed length is not known yet
	hdr.Set("Content-Encoding", "gzip")
	hdr.Add("Vary", "Accept-Encoding")
}

// Write compresses when the response qualifies.
func (w *gzipResponseWriter) Write(b []byte) (int, error) {
	first := !w.decided
	w.decide()
	if !w.compress {
		return w.ResponseWriter.Write(b)
	}
	if first && w.bodySize == len(b) {
		return w.writeWhole(b)
	}
	if w.bodySize < 0 {
		return 0, errBodyComplete
	}
	if w.zw == nil {
		if !w.ResponseWriter.Written() {
			w.ResponseWriter.WriteHeaderNow()
		}
		w.zw = getWriter(&w.pool.stream, w.ResponseWriter)
	}
	return w.zw.Write(b)
}

// errBodyComplete refuses a write after the announced whole body went out with its length.
var errBodyComplete = errors.New("handlers: the compressed body was already sent whole")

// writeWhole compresses the whole body (announced by render) into a buffer and sends it with its
// Content-Length. A later Write (none is expected) goes out uncompressed and would corrupt the
// response, so the writer refuses it.
func (w *gzipResponseWriter) writeWhole(b []byte) (int, error) {
	buf := w.pool.buffers.get()
	defer w.pool.buffers.put(buf)
	zw := getWriter(&w.pool.whole, buf)
	_, _ = zw.Write(b) // writing into a bytes.Buffer does not fail
	_ = zw.Close()
	putWriter(&w.pool.whole, zw)
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.bodySize = -1 // the body has been written
	if _, err := w.ResponseWriter.Write(buf.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}

// WriteString compresses when the response qualifies.
func (w *gzipResponseWriter) WriteString(s string) (int, error) {
	return w.Write([]byte(s))
}

// WriteHeaderNow sends the headers; a response without body writes is never compressed.
func (w *gzipResponseWriter) WriteHeaderNow() {
	w.decided = true
	w.ResponseWriter.WriteHeaderNow()
}

// Flush pushes compressed bytes out (streamed responses).
func (w *gzipResponseWriter) Flush() {
	if w.zw != nil {
		_ = w.zw.Flush()
	}
	w.ResponseWriter.Flush()
}

// Hijack is passed through (never used with a compressed body).
func (w *gzipResponseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return w.ResponseWriter.Hijack()
}

// close finishes the gzip stream and returns the writer to the pool.
func (w *gzipResponseWriter) close() {
	if w.zw == nil {
		return
	}
	_ = w.zw.Close() // an error means the client went away; nothing left to tell it
	putWriter(&w.pool.stream, w.zw)
	w.zw = nil
}

// requireValidUTF8 refuses, with one 400, a query string or a form whose keys or values are not
// valid UTF-8, or hold a character internal/textrules refuses (a bidirectional control or
// another invisible format character, NUL or another control; issue 38): no handler, template,
// database query or v2 call ever sees such text, so none of them has to guard against it on its
// own. The message names the field and the character. Multipart uploads are left to their
// handler, which streams the file and checks its small fields itself.
func (h *Handler) requireValidUTF8(c *gin.Context) {
	query := c.Request.URL.Query()
	if !utf8.ValidString(c.Request.URL.Path) || !validUTF8Values(query) {
		h.fail(c, badRequest("error.url_not_utf8"))
		c.Abort()
		return
	}
	if msg, bad := hiddenCharacterProblem(query); bad {
		h.fail(c, badRequestMessage(msg))
		c.Abort()
		return
	}
	if c.Request.Method == http.MethodPost || c.Request.Method == http.MethodPut || c.Request.Method == http.MethodDelete {
		if mediaType, _, _ := mime.ParseMediaType(c.GetHeader("Content-Type")); mediaType == "application/x-www-form-urlencoded" {
			if err := c.Request.ParseForm(); err != nil {
				h.fail(c, fmt.Errorf("handlers: read form: %w", err))
				c.Abort()
				return
			}
			if !validUTF8Values(c.Request.PostForm) {
				h.fail(c, badRequest("error.form_not_utf8"))
				c.Abort()
				return
			}
			if msg, bad := hiddenCharacterProblem(c.Request.PostForm); bad {
				h.fail(c, badRequestMessage(msg))
				c.Abort()
				return
			}
		}
	}
	c.Next()
}

func validUTF8Values(values url.Values) bool {
	for key, list := range values {
		if !utf8.ValidString(key) {
			return false
		}
		for _, v := range list {
			if !utf8.ValidString(v) {
				return false
			}
		}
	}
	return true
}
