package handlers

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
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

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	var probes atomic.Int32
	v2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probes.Add(1)
		if r.URL.Path != "/v2/cpq/list" || r.Header.Get("Authorization") != "" {
			t.Errorf("probe %s with Authorization %q; want GET /v2/cpq/list without a token", r.URL.Path, r.Header.Get("Authorization"))
		}
		w.WriteHeader(http.StatusUnauthorized) // what the real v2 API answers without a token
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
	// Cached: a burst of probes costs one v2 call.
	for range 5 {
		p.get(t, client, "/readyz", nil)
	}
	if n := probes.Load(); n != 1 {
		t.Errorf("v2 was probed %d times for 6 readiness checks in a row, want 1 (cached)", n)
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
