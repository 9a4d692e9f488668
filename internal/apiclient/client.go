package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const (
	// DefaultUserAgent is sent when no [WithUserAgent] option is given.
	DefaultUserAgent = "cpq-portal"
	// DefaultTimeout bounds a JSON call (request, answer and decoding).
	DefaultTimeout = 30 * time.Second
	// DefaultMaxResponseBytes bounds a JSON answer: the whole customer list
	// fits (docs/v2-assumptions.md A9).
	DefaultMaxResponseBytes int64 = 64 << 20
	// DefaultResponseHeaderTimeout is the transport's wait for response
	// headers after the request (and its upload) was written.
	DefaultResponseHeaderTimeout = 60 * time.Second
)

// Client talks to the v2 API. It is safe for concurrent use and holds no
// credentials: the access token arrives with each call's context.
type Client struct {
	baseURL          *url.URL
	httpClient       *http.Client
	userAgent        string
	timeout          time.Duration
	maxResponseBytes int64
	endpoints        map[string]Endpoint

	common service // reused by every service, as in go-github

	// CPQ holds the configuration-flow calls (section 4.1).
	CPQ *CPQService
	// Customers holds the customer calls (section 4.5).
	Customers *CustomersService
	// Attachments holds the attachment calls (section 4.2).
	Attachments *AttachmentsService
	// Contracts holds contract generation, retrieval, archive and audits (4.2, 4.4).
	Contracts *ContractsService
	// Signatures holds the signature-request calls (section 4.3).
	Signatures *SignaturesService
}

type service struct {
	client *Client
}

// Option configures a [Client] built by [New].
type Option func(*Client) error

// WithHTTPClient makes the client send through hc. hc.Timeout must be zero: an
// overall deadline would cut long uploads and downloads; use [WithTimeout] for
// JSON calls and a transport like [NewTransport] for the response-header wait.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("WithHTTPClient: nil *http.Client")
		}
		if hc.Timeout != 0 {
			return errors.New("WithHTTPClient: http.Client.Timeout must be 0 (it would cut streamed uploads and downloads); use WithTimeout")
		}
		c.httpClient = hc
		return nil
	}
}

// WithUserAgent sets the User-Agent header, e.g. "cpq-portal/1.4.0".
func WithUserAgent(userAgent string) Option {
	return func(c *Client) error {
		if userAgent == "" || !validHeaderValue(userAgent) {
			return fmt.Errorf("WithUserAgent: invalid value %q", userAgent)
		}
		c.userAgent = userAgent
		return nil
	}
}

// WithTimeout sets the per-call deadline of JSON calls (default
// [DefaultTimeout]); 0 leaves only the caller's context. Streams (uploads and
// downloads) are not bounded by it.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) error {
		if d < 0 {
			return fmt.Errorf("WithTimeout: negative duration %s", d)
		}
		c.timeout = d
		return nil
	}
}

// New returns a client for the v2 API at baseURL (scheme and host, optionally
// a path prefix; the endpoints' /v2/... paths are appended to it).
func New(baseURL string, opts ...Option) (*Client, error) {
	base, err := parseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	c := &Client{
		baseURL:          base,
		userAgent:        DefaultUserAgent,
		timeout:          DefaultTimeout,
		maxResponseBytes: DefaultMaxResponseBytes,
		endpoints:        indexEndpoints(),
	}
	for _, opt := range opts {
		if err := opt(c); err != nil {
			return nil, fmt.Errorf("apiclient: %w", err)
		}
	}
	if c.httpClient == nil {
		c.httpClient = &http.Client{
			Transport: NewTransport(),
			// The v2 API does not redirect; following a redirect could carry
			// the user's token elsewhere, so a 3xx is returned as an APIError.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	c.common.client = c
	c.CPQ = (*CPQService)(&c.common)
	c.Customers = (*CustomersService)(&c.common)
	c.Attachments = (*AttachmentsService)(&c.common)
	c.Contracts = (*ContractsService)(&c.common)
	c.Signatures = (*SignaturesService)(&c.common)
	return c, nil
}

func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("apiclient: base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("apiclient: base URL %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("apiclient: base URL %q: no host", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("apiclient: base URL %q: must not carry user info, query or fragment", raw)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	return u, nil
}

// NewTransport returns the transport the client uses by default, sized for a
// portal that proxies many concurrent users to one v2 host: the default
// transport keeps only 2 idle connections per host, which made a loaded proxy
// open a new TCP connection for most requests (shared/RECIPES.md, performance
// facts). ResponseHeaderTimeout bounds the wait for an answer after the
// request, including any upload, was written, without bounding the body.
//
// WriteBufferSize: request bodies of unknown length (attachment uploads streamed
// from the browser) go out chunked, and net/http flushes after every chunk; with
// the default 4 KiB buffer each 32 KiB chunk took about nine write system calls,
// which made the system calls most of the portal's CPU during a 1 GiB upload
// (docs/performance.md). 64 KiB holds a whole chunk with its framing: one call.
func NewTransport() *http.Transport {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 1 * time.Second,
		ResponseHeaderTimeout: DefaultResponseHeaderTimeout,
		WriteBufferSize:       64 << 10,
	}
}

type ctxKey int

const (
	tokenKey ctxKey = iota
	requestIDKey
	endpointKey
)

// WithToken returns a context carrying the bearer access token for the v2
// calls made with it. The token is never stored in the Client.
func WithToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenKey, token)
}

// WithRequestID returns a context whose v2 calls forward id as X-Request-Id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey, id)
}

// EndpointFromContext returns the name of the endpoint (e.g. [EndpointCustomerGet]) of the v2 call
// whose request carries ctx. Every request the client sends carries it, so an [http.RoundTripper]
// given with [WithHTTPClient] can label metrics and trace spans by endpoint instead of by raw path
// (which holds ids): EndpointFromContext(req.Context()).
func EndpointFromContext(ctx context.Context) (string, bool) {
	name, ok := ctx.Value(endpointKey).(string)
	return name, ok && name != ""
}

func stringFrom(ctx context.Context, key ctxKey) string {
	s, _ := ctx.Value(key).(string)
	return s
}

// validHeaderValue reports whether s can be sent as a header value as is:
// visible ASCII, spaces and tabs only (no CR/LF that could split headers).
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if (b < 0x20 && b != '\t') || b == 0x7f || b >= 0x80 {
			return false
		}
	}
	return true
}
