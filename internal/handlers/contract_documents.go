package handlers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/textrules"
)

// Shared pieces of the contracts & documents area (attachments, contracts, evidence, audits):
// the area's error type, safe file names and Content-Disposition, and streaming a file from the
// v2 API to the browser (with the %PDF- check for PDFs).

// documentError is a failure of this area with its own status and a message for the user (a file
// over the limit, a "PDF" that is not one), translated when failDocument answers it; anything
// else goes to h.fail.
type documentError struct {
	status  int
	title   i18n.Message
	message i18n.Message
	cause   error
}

func (e *documentError) Error() string {
	text := fmt.Sprintf("%s %v", e.message.Key, e.message.Args)
	if e.cause != nil {
		return text + ": " + e.cause.Error()
	}
	return text
}

func (e *documentError) Unwrap() error { return e.cause }

// failDocument is the error edge of this area: a documentError is logged and answered with its
// status and message (error page, or toast for htmx); anything else goes to h.fail.
func (h *Handler) failDocument(c *gin.Context, err error) {
	var de *documentError
	if !errors.As(err, &de) {
		h.fail(c, err)
		return
	}
	level := slog.LevelInfo
	if de.status >= 500 {
		level = slog.LevelError
	}
	h.log(c).Log(c.Request.Context(), level, "request failed",
		slog.Int("status", de.status), slog.String("method", c.Request.Method), slog.String("path", c.Request.URL.Path), slog.Any("err", err))
	h.renderError(c, de.status, de.title.In(tr(c)), de.message.In(tr(c)))
}

// errNotPDF: the v2 API said PDF (or was asked for one) but sent something else.
func errNotPDF(what string, cause error) error {
	return &documentError{status: http.StatusBadGateway, title: i18n.M("documents.error.not_pdf.title"),
		message: i18n.M("documents.error.not_pdf.message"), cause: fmt.Errorf("%s: %w", what, cause)}
}

// pdfMagic starts every PDF file.
var pdfMagic = []byte("%PDF-")

// checkPDF wraps a PDF download's body in a buffered reader and checks that it starts with %PDF-
// (peeking, so nothing is lost). An answer that says application/pdf but carries JSON or HTML is
// refused here, before any byte reaches the browser.
func checkPDF(body io.Reader, what string) (*bufio.Reader, error) {
	br := bufio.NewReaderSize(body, 4096)
	head, err := br.Peek(len(pdfMagic))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	if !bytes.Equal(head, pdfMagic) {
		return nil, errNotPDF(what, fmt.Errorf("starts with %q", head))
	}
	return br, nil
}

// asPDFError turns the client's "not a PDF" answer (a JSON or HTML body where a PDF was asked for:
// apiclient.ErrMalformedResponse) into the area's clear message; other errors pass unchanged.
func asPDFError(err error, what string) error {
	if errors.Is(err, apiclient.ErrMalformedResponse) {
		return errNotPDF(what, err)
	}
	return err
}

// maxFileNameBytes bounds file names the portal sends to browsers and the v2 API.
const maxFileNameBytes = 200

// safeFileName reduces a file name (from an upload or the v2 API) to a harmless base name: no
// directory part, no control or bidirectional-override characters, no quotes, none of the
// characters Windows refuses, at most 200 bytes. fallback is used when nothing is left.
func safeFileName(name, fallback string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if !utf8.ValidString(name) {
		name = strings.ToValidUTF8(name, "_")
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case textrules.Refused(r, false), r == utf8.RuneError: // controls, bidi and other format characters
			return -1
		case r == '"' || r == '\'' || r == '`':
			return -1
		case strings.ContainsRune(`<>:|?*;`, r):
			return '_'
		}
		return r
	}, name)
	name = strings.Trim(strings.TrimSpace(name), ". ")
	if len(name) > maxFileNameBytes {
		// Keep the extension when cutting.
		ext := ""
		if dot := strings.LastIndexByte(name, '.'); dot >= 0 && len(name)-dot <= 16 {
			ext = name[dot:]
		}
		cut := maxFileNameBytes - len(ext)
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = strings.TrimRight(name[:cut], ". ") + ext
	}
	if name == "" {
		return fallback
	}
	return name
}

// contentDisposition builds a Content-Disposition value ("attachment" or "inline") for a file name
// already passed through safeFileName: an ASCII filename= for every browser and, when the name is
// not plain ASCII, the exact name as filename*=utf-8”... (RFC 6266, via mime.FormatMediaType).
func contentDisposition(disposition, name string) string {
	ascii := strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '_'
		}
		return r
	}, name)
	v := mime.FormatMediaType(disposition, map[string]string{"filename": ascii})
	if v == "" {
		return disposition
	}
	if ascii != name {
		if full := mime.FormatMediaType(disposition, map[string]string{"filename": name}); full != "" {
			v += strings.TrimPrefix(full, disposition)
		}
	}
	return v
}

// activeContentTypes are types a browser would run or render as a page; attachments of these
// types are sent as application/octet-stream, so a stored file can never act as part of the
// portal (they are downloads either way: Content-Disposition: attachment).
var activeContentTypes = map[string]bool{
	"text/html": true, "application/xhtml+xml": true, "image/svg+xml": true, "text/xml": true, "application/xml": true,
	"text/javascript": true, "application/javascript": true, "application/ecmascript": true, "text/ecmascript": true,
	"application/x-javascript": true, "text/css": true, "multipart/x-mixed-replace": true,
}

// downloadContentType is the Content-Type the portal sends for a stored file.
func downloadContentType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || activeContentTypes[strings.ToLower(mt)] {
		return "application/octet-stream"
	}
	return contentType
}

// fileResponse describes a file streamed to the browser.
type fileResponse struct {
	contentType string
	length      int64 // -1 when unknown
	disposition string
	fileName    string // already safe
	inline      bool   // shown in the portal's own <iframe>: framing by self allowed
}

// streamPeekBytes is how much of a file is read before the answer starts: a body that ends before
// its declared length within this much (a cut answer) is refused with an error page, not sent.
const streamPeekBytes = 32 << 10

// errShortBody: the v2 API's answer ended before its declared length.
var errShortBody = errors.New("the answer ended before its declared length")

// streamFile sends f with body, streamed as it arrives from the v2 API; nothing is buffered beyond
// the first 32 KiB, which are read before the headers go out, so a cut or broken answer is still
// refused cleanly (the error is returned and nothing was written). If the copy breaks later, the
// connection is aborted (http.ErrAbortHandler) so the browser sees a failed download, never a
// short file that looks whole.
func (h *Handler) streamFile(c *gin.Context, f fileResponse, body io.Reader) error {
	br := bufio.NewReaderSize(body, streamPeekBytes)
	want := streamPeekBytes
	if f.length >= 0 && f.length < int64(want) {
		want = int(f.length)
	}
	if _, err := br.Peek(want); err != nil && !(errors.Is(err, io.EOF) && f.length < 0) {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = errShortBody
		}
		return fmt.Errorf("reading the file from the CPQ service: %w", err)
	}
	hdr := c.Writer.Header()
	hdr.Set("Content-Type", f.contentType)
	if f.length >= 0 {
		hdr.Set("Content-Length", strconv.FormatInt(f.length, 10))
	}
	hdr.Set("Content-Disposition", contentDisposition(f.disposition, f.fileName))
	hdr.Set("Cache-Control", "private, no-store")
	if f.inline {
		AllowFramingBySelf(c)
	}
	c.Status(http.StatusOK)
	if c.Request.Method == http.MethodHead {
		return nil
	}
	buf, release := h.copyBuffers.get(f.length)
	n, err := copyFileBody(c.Writer, br, body, buf)
	release()
	h.countStreamed(streamDownload, n)
	if err == nil && f.length >= 0 && n != f.length {
		err = errShortBody
	}
	if err != nil {
		h.log(c).Warn("download broken off", slog.String("path", c.Request.URL.Path), slog.Int64("bytes", n), slog.Any("err", err))
		panic(http.ErrAbortHandler)
	}
	return nil
}

// Download copy buffers. At 32 KiB (io.Copy through bufio) a 1 GiB file took 64k reads and
// writes; on the bench the portal reached 0.6-0.9 of a direct download from the simulator
// (sendfile) at 256 KiB, 0.8-1.0 at 1 MiB and 0.84-1.06 at 4 MiB: fewer, larger reads let the
// kernel hand over whole socket buffers (docs/performance.md). A large buffer is only worth it
// for a large file, and a slow client holds its buffer for the whole download, so at most
// maxLargeCopyBuffers downloads use one at a time (32 MiB); the others, and every file under
// largeCopyBytes, copy through a standard one. Both kinds are pooled.
const (
	largeCopyBytes      = 4 << 20
	standardCopyBytes   = 256 << 10
	maxLargeCopyBuffers = 8
)

// copyBufferPool lends the download copy buffers.
type copyBufferPool struct {
	large    sync.Pool     // *[]byte of largeCopyBytes
	standard sync.Pool     // *[]byte of standardCopyBytes
	inUse    chan struct{} // one token per large buffer lent out
}

func newCopyBufferPool() *copyBufferPool {
	newBuffer := func(n int) func() any {
		return func() any {
			buf := make([]byte, n)
			return &buf
		}
	}
	return &copyBufferPool{
		large:    sync.Pool{New: newBuffer(largeCopyBytes)},
		standard: sync.Pool{New: newBuffer(standardCopyBytes)},
		inUse:    make(chan struct{}, maxLargeCopyBuffers),
	}
}

// get returns a buffer for a download of length bytes (-1: unknown) and the function that gives
// it back.
func (p *copyBufferPool) get(length int64) ([]byte, func()) {
	if length < 0 || length >= largeCopyBytes {
		select {
		case p.inUse <- struct{}{}:
			buf := p.large.Get().(*[]byte)
			return *buf, func() { p.large.Put(buf); <-p.inUse }
		default: // as many large downloads as allowed are running: this one takes a standard buffer
		}
	}
	buf := p.standard.Get().(*[]byte)
	return *buf, func() { p.standard.Put(buf) }
}

// copyFileBody writes what br holds already, then copies the rest of body (br's source) to w
// through buf. The wrappers keep io.CopyBuffer from choosing bufio's 32 KiB WriteTo or a
// ReaderFrom that the gzip middleware's writer hides anyway.
func copyFileBody(w io.Writer, br *bufio.Reader, body io.Reader, buf []byte) (int64, error) {
	head, _ := br.Peek(br.Buffered()) // at most what was buffered: cannot fail
	n0, err := w.Write(head)
	n := int64(n0)
	if err != nil {
		return n, err
	}
	m, err := io.CopyBuffer(struct{ io.Writer }{w}, struct{ io.Reader }{body}, buf)
	return n + m, err
}

// errBrokenFile is the user's message for a file the v2 API did not send whole.
func errBrokenFile(cause error) error {
	return &documentError{status: http.StatusBadGateway, title: i18n.M("error.upstream.title"),
		message: i18n.M("documents.error.broken_file"), cause: cause}
}

// startLimit bounds how long a streamed v2 call (a download, an upload, the contract generation)
// may take to START answering: PORTAL_V2_TIMEOUT, like every other v2 call. Once the answer's
// headers are in, the body may take as long as it needs (a large file); for an upload the clock
// starts only when the whole file has been handed over (arm). The API client itself only bounds
// the wait after the request was written, by a minute: too long for someone looking at a page.
type startLimit struct {
	ctx      context.Context
	cancel   context.CancelFunc
	limit    time.Duration
	timedOut atomic.Bool

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

// newStartLimit starts the clock for a streamed call made with the returned limit's ctx.
func (h *Handler) newStartLimit(parent context.Context) *startLimit {
	s := h.pendingStartLimit(parent)
	s.arm()
	return s
}

// pendingStartLimit is a startLimit whose clock starts with arm (an upload: when the file is sent).
func (h *Handler) pendingStartLimit(parent context.Context) *startLimit {
	ctx, cancel := context.WithCancel(parent)
	return &startLimit{ctx: ctx, cancel: cancel, limit: h.cfg.V2Timeout}
}

// arm starts the clock (once; not after the call returned). Safe from any goroutine.
func (s *startLimit) arm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil || s.stopped || s.limit <= 0 {
		return
	}
	s.timer = time.AfterFunc(s.limit, func() {
		s.timedOut.Store(true)
		s.cancel()
	})
}

func (s *startLimit) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	if s.timer != nil {
		s.timer.Stop()
	}
}

// started stops the clock once the call returned, and turns an error caused by the limit into a
// time-out (504 at the error edge).
func (s *startLimit) started(err error) error {
	s.stop()
	if err != nil && s.timedOut.Load() {
		return fmt.Errorf("the CPQ service did not start answering within %s: %w", s.limit, context.DeadlineExceeded)
	}
	return err
}

// release ends the call's context; call it when the answer's body has been read (or on error).
func (s *startLimit) release() {
	s.stop()
	s.cancel()
}

// wantsInline reports whether a PDF is asked for the portal's inline preview (?inline=1).
func wantsInline(c *gin.Context) bool {
	return c.Query("inline") == "1"
}
