package v2sim

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"
)

const (
	requestLogSize = 10_000 // the log keeps the most recent requests
	bodyExcerptMax = 4 << 10
)

// RecordedRequest is one request the simulator received, for tests that check what a client sent.
type RecordedRequest struct {
	// Time is when the answer was written; Received when the request arrived (before any latency
	// fault), so a client's sequential round trips can be told from its parallel calls.
	Time     time.Time `json:"time"`
	Received time.Time `json:"received"`
	// Method and RequestURI exactly as received (RequestURI keeps the client's escaping and query).
	Method     string `json:"method"`
	RequestURI string `json:"requestUri"`
	// EscapedPath is the path as routed.
	EscapedPath string `json:"escapedPath"`
	// Endpoint is the matched endpoint name (e.g. "cpq.addcart"), "" when no endpoint matched.
	Endpoint string      `json:"endpoint"`
	Header   http.Header `json:"header"`
	// Body is the first 4 KiB of a non-multipart request body.
	Body string `json:"body"`
	// Status is the answered status (0 when the request was held until the client gave up).
	Status int `json:"status"`
}

// requestLog is a bounded ring of recorded requests.
type requestLog struct {
	mu    sync.Mutex
	buf   []RecordedRequest
	next  int
	full  bool
	limit int
}

func newRequestLog(limit int) *requestLog { return &requestLog{limit: limit} }

func (l *requestLog) add(rr RecordedRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) < l.limit {
		l.buf = append(l.buf, rr)
		return
	}
	l.buf[l.next] = rr
	l.next = (l.next + 1) % l.limit
	l.full = true
}

func (l *requestLog) snapshot() []RecordedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]RecordedRequest, 0, len(l.buf))
	if l.full {
		out = append(out, l.buf[l.next:]...)
		out = append(out, l.buf[:l.next]...)
	} else {
		out = append(out, l.buf...)
	}
	return out
}

func (l *requestLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf, l.next, l.full = nil, 0, false
}

// Requests answers the recorded requests, oldest first (at most the last 10,000).
func (s *Server) Requests() []RecordedRequest { return s.log.snapshot() }

// ResetRequests empties the request log.
func (s *Server) ResetRequests() { s.log.reset() }

// captureBody reads the first bodyExcerptMax bytes of a non-multipart body for the request log and puts them
// back in front of the rest, so handlers read the body unchanged. Uploads are not captured (binary, large).
func captureBody(r *http.Request) string {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return ""
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		return ""
	}
	prefix, _ := io.ReadAll(io.LimitReader(r.Body, bodyExcerptMax))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(prefix), r.Body), r.Body}
	return string(prefix)
}
