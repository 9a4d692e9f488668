package conformance

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/cpqportal/portal/internal/apiclient"
)

// maxCapturedBody bounds the part of a request body the recorder keeps; the
// suite's own uploads are far smaller.
const maxCapturedBody = 1 << 20

// exchange is one request as it went over the wire, with the answer's status.
type exchange struct {
	// raw marks a request sent by the suite's raw helper, not by the client:
	// such requests break the header rules on purpose.
	raw bool
	// endpoint is the name of the spec endpoint the request matches (by
	// method, escaped path and query; see specEndpoints), "" when it matches
	// none.
	endpoint string
	method   string
	url      url.URL
	header   http.Header

	mu            sync.Mutex
	body          []byte
	bodyTruncated bool
	hasBody       bool // a body other than http.NoBody was sent

	status     int
	respHeader http.Header
	err        error
}

// sentBody answers the captured request body.
func (e *exchange) sentBody() []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.body)
}

// recorder is an http.RoundTripper that records every request before passing
// it on. It works against any target: it observes what the client SENT.
type recorder struct {
	next     http.RoundTripper
	prefix   string // escaped path prefix of the base URL ("" or "/api")
	matchers []endpointMatcher

	mu        sync.Mutex
	exchanges []*exchange
}

type rawKey struct{}

// withRaw marks a context's requests as sent by the raw helper.
func withRaw(ctx context.Context) context.Context { return context.WithValue(ctx, rawKey{}, true) }

func newRecorder(next http.RoundTripper, prefix string) *recorder {
	return &recorder{next: next, prefix: prefix, matchers: newEndpointMatchers()}
}

// RoundTrip records req (cloning it so the caller's request is not changed)
// and sends it with the wrapped transport.
func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	ex := &exchange{
		method: req.Method,
		url:    *req.URL,
		header: req.Header.Clone(),
	}
	ex.raw, _ = req.Context().Value(rawKey{}).(bool)
	escaped := req.URL.EscapedPath()
	if strings.HasPrefix(escaped, r.prefix) {
		ex.endpoint = matchEndpoint(r.matchers, req.Method, strings.TrimPrefix(escaped, r.prefix), req.URL.Query())
	}
	out := req
	if req.Body != nil && req.Body != http.NoBody {
		ex.hasBody = true
		out = req.Clone(req.Context())
		out.Body = &capturingBody{rc: req.Body, ex: ex}
	}
	r.mu.Lock()
	r.exchanges = append(r.exchanges, ex)
	r.mu.Unlock()

	resp, err := r.next.RoundTrip(out)
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if err != nil {
		ex.err = err
		return nil, err
	}
	ex.status = resp.StatusCode
	ex.respHeader = resp.Header.Clone()
	return resp, nil
}

// mark answers the number of exchanges so far; since(mark) answers the later ones.
func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.exchanges)
}

func (r *recorder) since(mark int) []*exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.exchanges[mark:])
}

// calledEndpoints answers the endpoint names the client (not the raw helper)
// sent requests to.
func (r *recorder) calledEndpoints() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	called := map[string]int{}
	for _, ex := range r.exchanges {
		if !ex.raw && ex.endpoint != "" {
			called[ex.endpoint]++
		}
	}
	return called
}

// capturingBody keeps a bounded copy of what the transport reads.
type capturingBody struct {
	rc io.ReadCloser
	ex *exchange
}

func (c *capturingBody) Read(p []byte) (int, error) {
	n, err := c.rc.Read(p)
	if n > 0 {
		c.ex.mu.Lock()
		room := maxCapturedBody - len(c.ex.body)
		if room >= n {
			c.ex.body = append(c.ex.body, p[:n]...)
		} else {
			c.ex.body = append(c.ex.body, p[:max(room, 0)]...)
			c.ex.bodyTruncated = true
		}
		c.ex.mu.Unlock()
	}
	return n, err
}

func (c *capturingBody) Close() error { return c.rc.Close() }

// endpointMatcher is one endpoint of specEndpoints() split into path
// segments; a {placeholder} matches any one non-empty segment.
type endpointMatcher struct {
	ep       apiclient.Endpoint
	segments []string
	literals int
}

func newEndpointMatchers() []endpointMatcher {
	var ms []endpointMatcher
	for _, ep := range specEndpoints() {
		m := endpointMatcher{ep: ep, segments: strings.Split(ep.Path, "/")}
		for _, s := range m.segments {
			if !strings.HasPrefix(s, "{") {
				m.literals++
			}
		}
		ms = append(ms, m)
	}
	return ms
}

// matchEndpoint names the endpoint of a request from what is on the wire: the
// method, the escaped path (so an escaped "/" stays inside its segment) and the
// query. Literal segments beat placeholders; calls 3 and 4 share a path and
// differ by the quoteId query parameter.
func matchEndpoint(ms []endpointMatcher, method, escapedPath string, query url.Values) string {
	segments := strings.Split(escapedPath, "/")
	best, bestScore := "", -1
	for _, m := range ms {
		if m.ep.Method != method || len(m.segments) != len(segments) {
			continue
		}
		ok := true
		for i, s := range m.segments {
			if strings.HasPrefix(s, "{") {
				if segments[i] == "" {
					ok = false
				}
			} else if s != segments[i] {
				ok = false
			}
			if !ok {
				break
			}
		}
		if !ok {
			continue
		}
		score := m.literals * 100
		for _, q := range m.ep.Query {
			if query.Has(q) {
				score++
			} else if m.ep.Name == apiclient.EndpointCPQAddCartToQuote {
				score = -1 // call 4 is call 3's path with a required quoteId
				break
			}
		}
		if score > bestScore {
			best, bestScore = m.ep.Name, score
		}
	}
	return best
}

// headerValues answers a header's values, matching the name case-insensitively:
// the client sends the spec's spelling "X-SessionId", which is not the
// canonical form Header.Get looks up.
func headerValues(h http.Header, name string) []string {
	var out []string
	for k, v := range h {
		if strings.EqualFold(k, name) {
			out = append(out, v...)
		}
	}
	return out
}

// headerValue answers the first value of a header, matched case-insensitively.
func headerValue(h http.Header, name string) (string, bool) {
	v := headerValues(h, name)
	if len(v) == 0 {
		return "", false
	}
	return v[0], true
}
