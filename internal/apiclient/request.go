package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
)

// call describes one request: which endpoint, its parameters and body.
type call struct {
	endpoint  string
	params    []param // path parameters, in template order
	query     []param
	sessionID string // sent only when the endpoint requires it (R4)
	accept    string // default application/json

	json      any  // a JSON body; nil for none
	emptyBody bool // a POST/PUT with an empty body (Content-Length: 0)

	// A non-JSON body (the multipart upload).
	body          io.Reader
	contentType   string
	contentLength int64 // -1: unknown (chunked)

	header http.Header // extra headers (If-None-Match)
}

// newRequest is the one place that builds v2 requests: it validates the
// parameters, builds the URL from the endpoint table and sets the headers of
// spec section 5. Nothing is sent when it fails.
func (c *Client) newRequest(ctx context.Context, cl *call) (*http.Request, error) {
	ep, ok := c.endpoints[cl.endpoint]
	if !ok {
		return nil, fmt.Errorf("apiclient: unknown endpoint %q", cl.endpoint)
	}
	fail := func(err error) (*http.Request, error) {
		return nil, fmt.Errorf("apiclient: %s: %w", ep.Name, err)
	}

	token := stringFrom(ctx, tokenKey)
	if token == "" {
		return fail(ErrNoToken)
	}
	if !validHeaderValue(token) {
		return fail(fmt.Errorf("%w: access token has characters a header cannot carry", ErrInvalidParameter))
	}
	if ep.Session == SessionRequired {
		if cl.sessionID == "" {
			return fail(ErrNoSessionID)
		}
		if !validHeaderValue(cl.sessionID) || len(cl.sessionID) > MaxSegmentBytes {
			return fail(fmt.Errorf("%w: session id is not a valid header value", ErrInvalidParameter))
		}
	}

	for _, p := range cl.params {
		if p.err != nil {
			return fail(p.err)
		}
	}
	path, rawPath, err := expandPath(ep.Path, cl.params)
	if err != nil {
		return fail(err)
	}
	query := url.Values{}
	for _, p := range cl.query {
		if p.err != nil {
			return fail(p.err)
		}
		query.Set(p.name, p.value)
	}

	// Set Path and RawPath both, so an escaped "/" (%2F) inside a segment is
	// sent as is instead of being decoded into a path separator.
	u := *c.baseURL
	u.Path = c.baseURL.Path + path
	u.RawPath = c.baseURL.EscapedPath() + rawPath
	u.RawQuery = query.Encode()

	var body io.Reader
	contentType := ""
	contentLength := int64(0)
	switch {
	case cl.json != nil:
		b, err := json.Marshal(cl.json)
		if err != nil {
			return fail(fmt.Errorf("%w: encode body: %w", ErrInvalidParameter, err))
		}
		body, contentType, contentLength = bytes.NewReader(b), "application/json", int64(len(b))
	case cl.body != nil:
		body, contentType, contentLength = cl.body, cl.contentType, cl.contentLength
	case cl.emptyBody:
		body = http.NoBody
	}

	// The endpoint name rides in the request's context for transports (metrics, tracing).
	req, err := http.NewRequestWithContext(context.WithValue(ctx, endpointKey, ep.Name), ep.Method, u.String(), body)
	if err != nil {
		return fail(err)
	}
	req.URL = &u
	if body != nil {
		req.ContentLength = contentLength
	}

	h := req.Header
	h.Set("Authorization", "Bearer "+token)
	h.Set("User-Agent", c.userAgent)
	accept := cl.accept
	if accept == "" {
		accept = "application/json"
	}
	h.Set("Accept", accept)
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	if ep.Session == SessionRequired {
		// The spec's spelling; header names are case-insensitive, so servers
		// that canonicalize (X-Sessionid) read it the same.
		h["X-SessionId"] = []string{cl.sessionID}
	}
	// Diagnostics are optional: a value a header cannot carry is dropped.
	if id := stringFrom(ctx, requestIDKey); id != "" && len(id) <= 256 && validHeaderValue(id) {
		h.Set("X-Request-Id", id)
	}
	for k, v := range cl.header {
		h[k] = v
	}
	return req, nil
}

// send is the one place requests go out. A GET is sent once more when the
// first attempt failed to connect or the connection broke before any answer:
// it has no body and no effect to repeat. POST, PUT and DELETE are never
// retried (a cart or a customer could be created twice).
func (c *Client) send(req *http.Request, endpoint string) (*http.Response, error) {
	resp, err := c.httpClient.Do(req)
	if err != nil && req.Method == http.MethodGet && req.Context().Err() == nil && isConnectionError(err) {
		resp, err = c.httpClient.Do(req.Clone(req.Context()))
	}
	if err != nil {
		return nil, fmt.Errorf("apiclient: %s %s (%s): %w", req.Method, req.URL.EscapedPath(), endpoint, err)
	}
	return resp, nil
}

// isConnectionError reports a failure to reach the service or a connection
// dropped before any answer: dial errors, resets, refused connections and an
// early EOF. Time-outs are not: the service may still be working on it.
func isConnectionError(err error) bool {
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return true
	}
	return errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}

// doJSON runs a JSON call under the per-call deadline and decodes a 2xx
// answer into out (skipped when out is nil). want is the JSON kind the answer
// must be: '{' or '['. It returns the answer's status.
func (c *Client) doJSON(ctx context.Context, cl *call, out any, want byte) (int, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	req, err := c.newRequest(ctx, cl)
	if err != nil {
		return 0, err
	}
	resp, err := c.send(req, cl.endpoint)
	if err != nil {
		return 0, err
	}
	defer closeBody(resp.Body)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, newAPIError(cl.endpoint, req, resp)
	}
	if out == nil {
		return resp.StatusCode, nil
	}
	if err := c.decodeJSON(resp.Body, resp.ContentLength, out, want); err != nil {
		return resp.StatusCode, fmt.Errorf("apiclient: %s %s (%s): %w", req.Method, req.URL.EscapedPath(), cl.endpoint, err)
	}
	return resp.StatusCode, nil
}

// doStream sends a call without an overall deadline (uploads and downloads
// may be large; the transport bounds the wait for headers). On a 2xx answer
// the caller owns resp.Body; otherwise the body is closed and an APIError
// returned.
func (c *Client) doStream(ctx context.Context, cl *call) (*http.Request, *http.Response, error) {
	req, err := c.newRequest(ctx, cl)
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.send(req, cl.endpoint)
	if err != nil {
		return req, nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer closeBody(resp.Body)
		return req, nil, newAPIError(cl.endpoint, req, resp)
	}
	return req, resp, nil
}

// closeBody reads a bounded rest of a body, so the connection can be reused,
// and closes it.
func closeBody(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 64<<10)
	_ = body.Close()
}

// decodeJSON reads one JSON value of the wanted kind ('{' or '[') from r,
// bounded by the client's limit, and decodes it into out. Trailing data is an
// error: half a document must never look like a whole one.
//
// The body is read once and decoded once (json.Unmarshal rejects trailing
// data itself); a document that keeps its raw JSON (ownedDecoder) gets the
// body's bytes without a further copy or a second pass (docs/performance.md).
//
// size is the body's announced length (-1 when unknown): only a hint for the
// first allocation, see readAll.
func (c *Client) decodeJSON(r io.Reader, size int64, out any, want byte) error {
	lr := &limitedReader{r: r, remaining: c.maxResponseBytes}
	data, err := readAll(lr, size, c.maxResponseBytes)
	if err != nil {
		return lr.wrap(err)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return fmt.Errorf("%w: empty body", ErrMalformedResponse)
	}
	if data[0] != want {
		return fmt.Errorf("%w: want a JSON %s, got %s", ErrMalformedResponse, kindName(want), excerpt(data, 32))
	}
	if d, ok := out.(ownedDecoder); ok {
		err = d.decodeOwned(data)
	} else {
		err = json.Unmarshal(data, out)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformedResponse, err)
	}
	return nil
}

// ownedDecoder is a document that decodes a JSON value it may keep as its Raw
// without copying: the caller hands over data and never touches it again.
type ownedDecoder interface {
	decodeOwned(data []byte) error
}

func kindName(k byte) string {
	if k == '[' {
		return "array"
	}
	return "object"
}

// readAll is io.ReadAll with the announced length as the first capacity: a
// customer document (about 5 KB) is read into one allocation instead of
// io.ReadAll's growth from 512 bytes (seven allocations and copies, 4 % of the
// bytes the customer page allocated; docs/performance.md). The length is only
// a hint: r (a limitedReader) still bounds what is read, an unknown or
// over-limit length falls back to io.ReadAll, and a body longer or shorter
// than announced is read as it is.
func readAll(r io.Reader, size, limit int64) ([]byte, error) {
	if size <= 0 || size > limit {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, size+1) // +1: the read that meets EOF has room, so no growth
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) { // longer than announced: grow as io.ReadAll does
			b = append(b, 0)[:len(b)]
		}
	}
}

// limitedReader fails with ErrResponseTooLarge once more than remaining
// bytes are read (io.LimitReader would end silently, making a cut document
// look like a syntax error at best). It remembers the transport's read error
// so that a lost connection is not reported as a malformed answer.
type limitedReader struct {
	r         io.Reader
	remaining int64
	exceeded  bool
	readErr   error
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.remaining <= 0 {
		var probe [1]byte
		n, err := l.r.Read(probe[:])
		if n > 0 {
			l.exceeded = true
			return 0, ErrResponseTooLarge
		}
		l.note(err)
		return 0, err
	}
	if int64(len(p)) > l.remaining {
		p = p[:l.remaining]
	}
	n, err := l.r.Read(p)
	l.remaining -= int64(n)
	l.note(err)
	return n, err
}

func (l *limitedReader) note(err error) {
	if err != nil && err != io.EOF && l.readErr == nil {
		l.readErr = err
	}
}

// wrap classifies a decoding error: too large, a transport error (context
// ended, connection lost) returned as is, or else a malformed answer (bad
// syntax, wrong types, empty or cut short).
func (l *limitedReader) wrap(err error) error {
	switch {
	case l.exceeded || errors.Is(err, ErrResponseTooLarge):
		return ErrResponseTooLarge
	case l.readErr != nil && errors.Is(err, l.readErr):
		return err
	case err == io.EOF:
		return fmt.Errorf("%w: empty body", ErrMalformedResponse)
	}
	return fmt.Errorf("%w: %w", ErrMalformedResponse, err)
}
