package apiclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// resetFirstConnection answers every request after the first; the first
// connection is reset before any answer.
func resetFirstConnection(t *testing.T, answer http.HandlerFunc) (http.HandlerFunc, *atomic.Int64) {
	var n atomic.Int64
	return func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			if tcp, ok := conn.(*net.TCPConn); ok {
				_ = tcp.SetLinger(0) // close with RST
			}
			_ = conn.Close()
			return
		}
		answer(w, r)
	}, &n
}

func TestGETRetriedOnceAfterConnectionReset(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	h, n := resetFirstConnection(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, customerJSON) })
	f.handle("GET /v2/customer/17", h)
	got, err := client.Customers.Get(authCtx(t), 17)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	checkCustomer(t, got)
	if n.Load() != 2 {
		t.Errorf("%d requests, want 2 (one retry)", n.Load())
	}
}

func TestGETRetriedOnlyOnce(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	var n atomic.Int64
	f.handle("GET /v2/customer/17", func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		conn, _, _ := w.(http.Hijacker).Hijack()
		_ = conn.(*net.TCPConn).SetLinger(0)
		_ = conn.Close()
	})
	_, err := client.Customers.Get(authCtx(t), 17)
	if err == nil || !strings.Contains(err.Error(), "customers.get") {
		t.Errorf("err = %v, want a connection error naming the endpoint", err)
	}
	if n.Load() != 2 {
		t.Errorf("%d requests, want 2", n.Load())
	}
}

func TestPOSTPUTDELETENotRetried(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	post, postN := resetFirstConnection(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 201, customerJSON) })
	put, putN := resetFirstConnection(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, quoteJSON) })
	del, delN := resetFirstConnection(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	f.handle("POST /v2/customer", post)
	f.handle("PUT /v2/cpq/1/quote/900001/basket/700001/quantity", put)
	f.handle("DELETE /v2/cpq/1/quote/900001/basket/700001", del)
	ctx := authCtx(t)
	if _, err := client.Customers.Create(ctx, CustomerInput{Name: "x"}); err == nil {
		t.Error("POST succeeded after a reset: it was retried")
	}
	if _, err := client.CPQ.SetQuantity(ctx, testSessionID, 1, 900001, 700001, 2); err == nil {
		t.Error("PUT succeeded after a reset: it was retried")
	}
	if err := client.CPQ.RemoveCart(ctx, testSessionID, 1, 900001, 700001); err == nil {
		t.Error("DELETE succeeded after a reset: it was retried")
	}
	if postN.Load() != 1 || putN.Load() != 1 || delN.Load() != 1 {
		t.Errorf("requests: POST %d, PUT %d, DELETE %d; want 1 each", postN.Load(), putN.Load(), delN.Load())
	}
}

// A dial error (nothing listening) is retried once for a GET, never for a POST.
func TestDialErrorRetry(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	var dials atomic.Int64
	tr := NewTransport()
	dialer := &net.Dialer{}
	tr.DialContext = func(ctx context.Context, network, a string) (net.Conn, error) {
		dials.Add(1)
		return dialer.DialContext(ctx, network, a)
	}
	client, err := New("http://"+addr, WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := authCtx(t)
	if _, err := client.Customers.Get(ctx, 17); err == nil {
		t.Fatal("Get succeeded with nothing listening")
	}
	if dials.Load() != 2 {
		t.Errorf("GET dialled %d times, want 2", dials.Load())
	}
	dials.Store(0)
	if _, err := client.Customers.Create(ctx, CustomerInput{Name: "x"}); err == nil {
		t.Fatal("Create succeeded with nothing listening")
	}
	if dials.Load() != 1 {
		t.Errorf("POST dialled %d times, want 1", dials.Load())
	}
}

// JSON calls run under the client's per-call deadline.
func TestTimeoutForJSONCalls(t *testing.T) {
	t.Parallel()
	client, f := setup(t, WithTimeout(50*time.Millisecond))
	f.handle("GET /v2/customer/17", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers; the client gives up
	})
	_, err := client.Customers.Get(authCtx(t), 17)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
	if f.hits.Load() != 1 {
		t.Errorf("%d requests, want 1 (a time-out is not a connection error)", f.hits.Load())
	}
}

// deadlineRecorder records whether each request's context had a deadline.
type deadlineRecorder struct {
	mu        sync.Mutex
	deadlines map[string]bool
}

func (d *deadlineRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	_, has := r.Context().Deadline()
	d.mu.Lock()
	d.deadlines[r.Method+" "+r.URL.EscapedPath()] = has
	d.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// Streams carry no overall deadline (a 1 GiB upload must not be cut); JSON
// calls do.
func TestStreamsHaveNoOverallDeadline(t *testing.T) {
	t.Parallel()
	rec := &deadlineRecorder{deadlines: map[string]bool{}}
	client, f := setup(t, WithHTTPClient(&http.Client{Transport: rec}), WithTimeout(time.Hour))
	f.handle("GET /v2/customer/17", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, customerJSON) })
	f.handle("GET /v2/attachment/5/quote/900001", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("data")) })
	f.handle("POST /v2/attachment/file/quote/900001/attachmentType/OTHER", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 201, attachmentAnswer("a", 1, ""))
	})
	f.handle("GET /v2/contract/42", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write([]byte(fakePDF))
	})
	ctx := authCtx(t)
	if _, err := client.Customers.Get(ctx, 17); err != nil {
		t.Fatal(err)
	}
	d, err := client.Attachments.Download(ctx, 5, 900001)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := client.Attachments.Upload(ctx, 900001, "OTHER", "a", "", 1, strings.NewReader("a")); err != nil {
		t.Fatal(err)
	}
	if d, err = client.Contracts.DownloadPDF(ctx, 42); err != nil {
		t.Fatal(err)
	}
	d.Close()
	want := map[string]bool{
		"GET /v2/customer/17":                                        true,
		"GET /v2/attachment/5/quote/900001":                          false,
		"POST /v2/attachment/file/quote/900001/attachmentType/OTHER": false,
		"GET /v2/contract/42":                                        false,
	}
	for k, v := range want {
		if got, ok := rec.deadlines[k]; !ok || got != v {
			t.Errorf("%s: deadline %v (seen %v), want %v", k, got, ok, v)
		}
	}
}

func TestDiagnosticHeadersForwarded(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	calls := 0
	f.handle("GET /v2/cpq/1/tof/11/validproducts", func(w http.ResponseWriter, r *http.Request) {
		calls++
		testCommon(t, r, http.MethodGet, true)
		if calls == 1 {
			if r.Header.Get("X-Request-Id") != "req-42" {
				t.Errorf("X-Request-Id %q", r.Header.Get("X-Request-Id"))
			}
		} else if _, ok := r.Header["X-Request-Id"]; ok {
			t.Errorf("X-Request-Id with a newline was forwarded: %q", r.Header["X-Request-Id"])
		}
		writeJSON(w, 200, `[]`)
	})
	ctx := WithRequestID(authCtx(t), "req-42")
	if _, err := client.CPQ.ValidProducts(ctx, testSessionID, 1, 11); err != nil {
		t.Fatal(err)
	}
	// A request id a header cannot carry is dropped, the call still made.
	ctx = WithRequestID(authCtx(t), "req\r\nX-Evil: 1")
	if _, err := client.CPQ.ValidProducts(ctx, testSessionID, 1, 11); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("%d calls, want 2", calls)
	}
}

func TestNewValidatesItsInput(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"", "localhost:8081", "ftp://host", "http://", "http://u:p@host", "http://host/?q=1", "http://host/#f", "://bad"} {
		if _, err := New(base); err == nil {
			t.Errorf("New(%q) accepted", base)
		}
	}
	for name, opt := range map[string]Option{
		"http.Client with Timeout": WithHTTPClient(&http.Client{Timeout: time.Second}),
		"nil http.Client":          WithHTTPClient(nil),
		"negative timeout":         WithTimeout(-time.Second),
		"user agent with newline":  WithUserAgent("cpq-portal/1\r\nX: y"),
		"zero response limit":      WithMaxResponseBytes(0),
	} {
		if _, err := New("http://localhost:8081", opt); err == nil {
			t.Errorf("New with %s accepted", name)
		}
	}
}

// The default transport is sized for a proxy's concurrency and bounds the
// wait for response headers.
func TestDefaultTransport(t *testing.T) {
	t.Parallel()
	c, err := New("https://v2.example.com")
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := c.httpClient.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("transport is %T", c.httpClient.Transport)
	}
	if tr.MaxIdleConnsPerHost < 64 || tr.ResponseHeaderTimeout <= 0 || c.httpClient.Timeout != 0 {
		t.Errorf("MaxIdleConnsPerHost %d, ResponseHeaderTimeout %s, Client.Timeout %s",
			tr.MaxIdleConnsPerHost, tr.ResponseHeaderTimeout, c.httpClient.Timeout)
	}
}

// A base URL with a path prefix keeps it.
func TestBaseURLPathPrefix(t *testing.T) {
	t.Parallel()
	var got string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.RequestURI
		writeJSON(w, 200, contractJSON)
	}))
	t.Cleanup(server.Close)
	client, err := New(server.URL + "/api%20gw/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Contracts.GetByNumber(authCtx(t), "C/1"); err != nil {
		t.Fatal(err)
	}
	if got != "/api%20gw/v2/contract/bycontractnumber/C%2F1" {
		t.Errorf("request URI = %q", got)
	}
}

// The default client does not follow redirects: the user's token must not be
// carried to another place.
func TestRedirectsNotFollowed(t *testing.T) {
	t.Parallel()
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("redirect followed to %s with Authorization %q", r.URL, r.Header.Get("Authorization"))
	}))
	t.Cleanup(elsewhere.Close)
	client, f := setup(t)
	f.handle("GET /v2/customer/17", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/steal", http.StatusFound)
	})
	_, err := client.Customers.Get(authCtx(t), 17)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusFound {
		t.Errorf("err = %v, want an APIError with status 302", err)
	}
}
