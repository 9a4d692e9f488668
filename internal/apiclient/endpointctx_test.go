package apiclient

import (
	"net/http"
	"sync"
	"testing"
)

// recordingTransport remembers the endpoint name each request carried.
type recordingTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []string
}

func (rt *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	name, ok := EndpointFromContext(req.Context())
	if !ok {
		name = "<none>"
	}
	rt.mu.Lock()
	rt.seen = append(rt.seen, req.Method+" "+req.URL.Path+" "+name)
	rt.mu.Unlock()
	return rt.next.RoundTrip(req)
}

// TestEndpointNameReachesTransport: a transport (metrics, tracing) learns which endpoint a request
// is for, also on the retried GET, without parsing paths that hold ids.
func TestEndpointNameReachesTransport(t *testing.T) {
	t.Parallel()
	rt := &recordingTransport{next: NewTransport()}
	client, f := setup(t, WithHTTPClient(&http.Client{Transport: rt}))
	h, _ := resetFirstConnection(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, customerJSON) })
	f.handle("GET /v2/customer/17", h)

	if _, err := client.Customers.Get(authCtx(t), 17); err != nil {
		t.Fatalf("Get: %v", err)
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	want := []string{"GET /v2/customer/17 " + EndpointCustomerGet, "GET /v2/customer/17 " + EndpointCustomerGet}
	if len(rt.seen) != len(want) {
		t.Fatalf("transport saw %q, want %q", rt.seen, want)
	}
	for i := range want {
		if rt.seen[i] != want[i] {
			t.Errorf("request %d: transport saw %q, want %q", i, rt.seen[i], want[i])
		}
	}
}

func TestEndpointFromContextWithoutCall(t *testing.T) {
	t.Parallel()
	if name, ok := EndpointFromContext(t.Context()); ok || name != "" {
		t.Errorf("EndpointFromContext(plain ctx) = %q, %v; want \"\", false", name, ok)
	}
}
