package conformance

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/v2sim"
)

// Environment of `make conformance` (see the Makefile).
const (
	envURL   = "V2_API_URL"
	envToken = "V2_API_TOKEN"
	// simToken is the bearer token sent to the in-process simulator, which
	// accepts any non-empty token (docs/v2-assumptions.md A1).
	simToken = "conformance-dummy-token"
	// userAgent tells the suite's traffic apart in a deployment's logs.
	userAgent = "cpq-portal-conformance"
	// simWait bounds the wait for the in-process simulator to finish
	// recording a request whose answer the client already has. It is a
	// guard against a hang, not a measured time.
	simWait = 10 * time.Second
)

// target is the v2 API the suite talks to.
type target struct {
	baseURL string
	token   string
	// sim and served are set for the in-process simulator only.
	sim    *v2sim.Server
	served *servedCounter
}

func (tg *target) describe() string {
	if tg.sim != nil {
		return tg.baseURL + " (in-process simulator)"
	}
	return tg.baseURL + " (from " + envURL + ")"
}

// selectTarget starts the in-process simulator when V2_API_URL is empty,
// else uses V2_API_URL with V2_API_TOKEN.
func selectTarget(t *testing.T) *target {
	t.Helper()
	rawURL := strings.TrimSpace(os.Getenv(envURL))
	if rawURL != "" {
		token := strings.TrimSpace(os.Getenv(envToken))
		if token == "" {
			t.Fatalf("%s is set (%s) but %s is empty: the suite needs a bearer access token for that deployment, "+
				"e.g. make conformance %s=%s %s=<token>", envURL, rawURL, envToken, envURL, rawURL, envToken)
		}
		if _, err := apiclient.New(rawURL); err != nil {
			t.Fatalf("%s=%q is not a usable base URL: %v", envURL, rawURL, err)
		}
		return &target{baseURL: strings.TrimSuffix(rawURL, "/"), token: token}
	}

	sim := v2sim.New(v2sim.Options{AcceptAnyToken: true, Seed: 1})
	served := &servedCounter{changed: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Counted after ServeHTTP returns, i.e. after the simulator
		// recorded the request: the suite waits for it before comparing.
		defer served.inc()
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.Close()
		if err := sim.Close(); err != nil {
			t.Errorf("closing the simulator: %v", err)
		}
	})
	return &target{baseURL: srv.URL, token: simToken, sim: sim, served: served}
}

// pathPrefix answers the escaped path of the base URL ("" for a bare host):
// every endpoint path is appended to it.
func (tg *target) pathPrefix(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(tg.baseURL)
	if err != nil {
		t.Fatalf("base URL %q: %v", tg.baseURL, err)
	}
	return strings.TrimSuffix(u.EscapedPath(), "/")
}

// servedCounter counts the requests the in-process simulator has finished.
type servedCounter struct {
	mu      sync.Mutex
	n       int
	changed chan struct{}
}

func (c *servedCounter) inc() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	close(c.changed)
	c.changed = make(chan struct{})
}

// waitFor waits until at least n requests were served, or simWait passed;
// it answers the count reached.
func (c *servedCounter) waitFor(n int) int {
	deadline := time.NewTimer(simWait)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		got, changed := c.n, c.changed
		c.mu.Unlock()
		if got >= n {
			return got
		}
		select {
		case <-changed:
		case <-deadline.C:
			return got
		}
	}
}
