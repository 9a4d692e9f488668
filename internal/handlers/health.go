package handlers

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/config"
)

const (
	// readyCacheTTL is how long a v2 reachability result is reused: probes may come every second
	// from several load balancers; the v2 API should not feel them.
	readyCacheTTL = 3 * time.Second
	// readyProbeTimeout bounds one probe of the v2 API.
	readyProbeTimeout = 3 * time.Second
)

// readiness is the state behind /readyz.
type readiness struct {
	draining atomic.Bool
	// probe checks the v2 API the way PORTAL_V2_READY_CHECK says; nil means no check.
	probe func(ctx context.Context) error
	// target names what probe checks, for the log.
	target string

	mu        sync.Mutex // held during a probe: concurrent /readyz calls wait for one result
	checkedAt time.Time
	reachable bool
}

// SetNotReady makes /readyz answer 503 from now on: called first on SIGTERM, so load balancers stop
// sending new requests while in-flight ones finish.
// Reads of uploaded files in flight end at once (upload_parse.go): each is a few seconds of CPU
// the grace period should not wait for, and the person is told to upload again.
func (h *Handler) SetNotReady() {
	h.readiness.draining.Store(true)
	if h.stopParses != nil {
		h.stopParses()
	}
}

// healthz answers 200 "ok" while the process serves HTTP. No session, no cookie, no v2 call.
func (h *Handler) healthz(c *gin.Context) {
	c.Header("Content-Type", "text/plain; charset=utf-8")
	c.String(http.StatusOK, "ok\n")
}

// readyz answers 200 when the portal can serve users: not shutting down, OpenID discovery done,
// and the v2 API passing its check (PORTAL_V2_READY_CHECK). 503 otherwise, with the reason. No session, no cookie.
func (h *Handler) readyz(c *gin.Context) {
	c.Header("Content-Type", "text/plain; charset=utf-8")
	switch {
	case h.readiness.draining.Load():
		c.String(http.StatusServiceUnavailable, "not ready: shutting down\n")
	case !h.auth.Ready():
		c.String(http.StatusServiceUnavailable, "not ready: OpenID provider discovery pending\n")
	case !h.v2Reachable(c.Request.Context()):
		c.String(http.StatusServiceUnavailable, "not ready: v2 API not reachable\n")
	default:
		c.String(http.StatusOK, "ready\n")
	}
}

// v2Reachable runs the configured probe of the v2 API, caching its result briefly. No probe
// (PORTAL_V2_READY_CHECK=off) counts as reachable.
func (h *Handler) v2Reachable(ctx context.Context) bool {
	r := &h.readiness
	if r.probe == nil {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := h.now()
	if !r.checkedAt.IsZero() && now.Sub(r.checkedAt) < readyCacheTTL && !now.Before(r.checkedAt) {
		return r.reachable
	}
	probeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readyProbeTimeout)
	defer cancel()
	err := r.probe(probeCtx)
	if err != nil {
		h.logger.Warn("readiness: v2 API not reachable", "check", r.target, "err", err)
	}
	r.reachable = err == nil
	r.checkedAt = now
	return r.reachable
}

// newV2Probe builds the readiness probe of the v2 API that cfg asks for. None of them sends a
// /v2/ request: the spec (section 5) wants the user's bearer token on every v2 call, and a probe
// has no user; an unauthenticated call would be logged (or alerted on) as a failed sign-in by the
// service's gateway. The trade-offs are in docs/operations.md, "Health and readiness".
func newV2Probe(cfg config.Config, client *http.Client, userAgent string) (probe func(context.Context) error, target string) {
	switch cfg.V2ReadyCheck {
	case config.ReadyCheckOff:
		return nil, "off"
	case config.ReadyCheckHTTP:
		healthURL := cfg.V2HealthURL.String()
		return func(ctx context.Context) error { return probeHealthURL(ctx, client, healthURL, userAgent) }, healthURL
	default: // config.ReadyCheckConnect, and the zero value
		address, useTLS := hostPort(cfg.V2APIURL)
		return func(ctx context.Context) error { return probeConnect(ctx, address, useTLS, cfg.V2APIURL.Hostname()) }, "connect " + address
	}
}

// hostPort is the v2 API's host:port (the scheme's default port when none is given) and whether
// it speaks TLS.
func hostPort(u *url.URL) (address string, useTLS bool) {
	useTLS = u.Scheme == "https"
	port := u.Port()
	if port == "" {
		port = "80"
		if useTLS {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port), useTLS
}

// probeConnect opens a TCP connection to address, and completes a TLS handshake (certificate
// verified against serverName) when useTLS, then closes it. No HTTP request is sent.
func probeConnect(ctx context.Context, address string, useTLS bool, serverName string) error {
	var dialer interface {
		DialContext(ctx context.Context, network, address string) (net.Conn, error)
	} = &net.Dialer{}
	if useTLS {
		dialer = &tls.Dialer{Config: &tls.Config{ServerName: serverName, MinVersion: tls.VersionTLS12}}
	}
	conn, err := dialer.DialContext(ctx, "tcp", address)
	if err != nil {
		return fmt.Errorf("connect %s: %w", address, err)
	}
	return conn.Close()
}

// probeHealthURL sends GET healthURL (the v2 service's own health endpoint, outside /v2/): a 2xx
// answer is healthy, anything else is not.
func probeHealthURL(ctx context.Context, client *http.Client, healthURL, userAgent string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, healthURL, nil)
	if err != nil {
		return fmt.Errorf("health check %s: %w", healthURL, err)
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("health check %s answered %s", healthURL, resp.Status)
	}
	return nil
}
