package handlers

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
)

// readyCacheTTL is how long a v2 reachability result is reused: probes may come every second
// from several load balancers; the v2 API should not feel them.
const readyCacheTTL = 3 * time.Second

// readiness is the state behind /readyz.
type readiness struct {
	draining atomic.Bool
	client   *http.Client
	url      string // v2 base + /v2/cpq/list

	mu        sync.Mutex // held during a probe: concurrent /readyz calls wait for one result
	checkedAt time.Time
	reachable bool
}

// SetNotReady makes /readyz answer 503 from now on: called first on SIGTERM, so load balancers stop
// sending new requests while in-flight ones finish.
func (h *Handler) SetNotReady() { h.readiness.draining.Store(true) }

// healthz answers 200 "ok" while the process serves HTTP. No session, no cookie, no v2 call.
func (h *Handler) healthz(c *gin.Context) {
	c.Header("Content-Type", "text/plain; charset=utf-8")
	c.String(http.StatusOK, "ok\n")
}

// readyz answers 200 when the portal can serve users: not shutting down, OpenID discovery done,
// and the v2 API answering. 503 otherwise, with the reason. No session, no cookie.
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

// v2Reachable sends GET /v2/cpq/list without a token: any HTTP answer (401 is expected) proves
// the v2 API is up; only a transport failure counts as unreachable. The result is cached briefly.
func (h *Handler) v2Reachable(ctx context.Context) bool {
	r := &h.readiness
	r.mu.Lock()
	defer r.mu.Unlock()
	now := h.now()
	if !r.checkedAt.IsZero() && now.Sub(r.checkedAt) < readyCacheTTL && now.After(r.checkedAt) {
		return r.reachable
	}
	r.reachable = h.probeV2(context.WithoutCancel(ctx))
	r.checkedAt = now
	return r.reachable
}

func (h *Handler) probeV2(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.readiness.url, nil)
	if err != nil {
		return false
	}
	req.Header.Set("User-Agent", "cpq-portal-readyz/"+h.version)
	resp, err := h.readiness.client.Do(req)
	if err != nil {
		h.logger.Warn("readiness: v2 API not reachable", "url", h.readiness.url, "err", err)
		return false
	}
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	_ = resp.Body.Close()
	return true
}
