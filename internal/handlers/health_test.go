package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/config"
)

// waitReady waits until OpenID discovery is done (it runs in the background).
func waitReady(t *testing.T, p *testPortal) {
	t.Helper()
	for i := 0; !p.h.auth.Ready(); i++ {
		if i == 1000 {
			t.Fatal("OpenID discovery never completed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The default readiness check connects to the v2 API's host and sends it nothing: a probe has no
// user, and every v2 call must carry a user's bearer token (spec section 5).
func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	v2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		t.Errorf("readiness sent %s %s to the v2 API (Authorization %q); the connect check sends no request",
			r.Method, r.URL.Path, r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer v2.Close()
	p := newPortal(t, portalOptions{v2URL: v2.URL})
	client := p.client(t)

	health := p.get(t, client, "/healthz", nil)
	if health.StatusCode != 200 || health.body != "ok\n" {
		t.Errorf("healthz: %d %q", health.StatusCode, health.body)
	}
	waitReady(t, p) // discovery runs in the background against the provider on the same server
	ready := p.get(t, client, "/readyz", nil)
	if ready.StatusCode != 200 || ready.body != "ready\n" {
		t.Errorf("readyz: %d %q", ready.StatusCode, ready.body)
	}
	for range 5 {
		p.get(t, client, "/readyz", nil)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the v2 API got %d HTTP requests from 6 readiness checks, want 0", n)
	}
	for _, resp := range []response{health, ready} {
		if len(resp.Header.Values("Set-Cookie")) != 0 {
			t.Errorf("health endpoint set a cookie: %v", resp.Header.Values("Set-Cookie"))
		}
	}

	p.h.SetNotReady()
	draining := p.get(t, client, "/readyz", nil)
	if draining.StatusCode != http.StatusServiceUnavailable || draining.body != "not ready: shutting down\n" {
		t.Errorf("draining readyz: %d %q", draining.StatusCode, draining.body)
	}
	if h := p.get(t, client, "/healthz", nil); h.StatusCode != 200 {
		t.Errorf("healthz while draining: %d, want 200 (the process still serves)", h.StatusCode)
	}
}

// PORTAL_V2_READY_CHECK=<health URL>: the service's own health endpoint, outside /v2/, asked at
// most once per cache period; a non-2xx answer is "not ready".
func TestReadinessWithHealthURL(t *testing.T) {
	t.Parallel()
	var probes atomic.Int32
	var healthy atomic.Bool
	healthy.Store(true)
	v2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			t.Errorf("readiness sent %s %s; want only GET /health", r.Method, r.URL.Path)
		}
		probes.Add(1)
		if !healthy.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer v2.Close()
	healthURL, _ := url.Parse(v2.URL + "/health")
	now := time.Now()
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	p := newPortal(t, portalOptions{v2URL: v2.URL, readyCheck: config.ReadyCheckHTTP, healthURL: healthURL,
		now: func() time.Time { return time.Unix(0, clock.Load()) }})
	client := p.client(t)
	waitReady(t, p)
	for range 6 {
		if ready := p.get(t, client, "/readyz", nil); ready.StatusCode != 200 {
			t.Fatalf("readyz with a healthy health URL: %d %q", ready.StatusCode, ready.body)
		}
	}
	if n := probes.Load(); n != 1 {
		t.Errorf("the health URL was asked %d times for 6 readiness checks in a row, want 1 (cached)", n)
	}
	healthy.Store(false)
	clock.Add(int64(readyCacheTTL + time.Second))
	if ready := p.get(t, client, "/readyz", nil); ready.StatusCode != http.StatusServiceUnavailable || ready.body != "not ready: v2 API not reachable\n" {
		t.Errorf("readyz with the health URL answering 503: %d %q", ready.StatusCode, ready.body)
	}
}

// PORTAL_V2_READY_CHECK=off: readiness does not depend on the v2 API at all.
func TestReadinessCheckOff(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{v2URL: closedURL(t), readyCheck: config.ReadyCheckOff})
	waitReady(t, p)
	if resp := p.get(t, p.client(t), "/readyz", nil); resp.StatusCode != 200 {
		t.Errorf("readyz with the check off and the v2 API down: %d %q, want 200", resp.StatusCode, resp.body)
	}
}

func TestReadinessWithoutV2(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{v2URL: closedURL(t)})
	waitReady(t, p)
	resp := p.get(t, p.client(t), "/readyz", nil)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.body != "not ready: v2 API not reachable\n" {
		t.Errorf("readyz without v2: %d %q", resp.StatusCode, resp.body)
	}
	if len(resp.Header.Values("Set-Cookie")) != 0 {
		t.Error("readyz set a cookie")
	}
}

func TestReadinessWaitsForTheProvider(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{authIssuer: closedURL(t) + "/idp"})
	resp := p.get(t, p.client(t), "/readyz", nil)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.body != "not ready: OpenID provider discovery pending\n" {
		t.Errorf("readyz before discovery: %d %q", resp.StatusCode, resp.body)
	}
	if health := p.get(t, p.client(t), "/healthz", nil); health.StatusCode != http.StatusOK {
		t.Errorf("healthz must not depend on the provider: %d", health.StatusCode)
	}
}
