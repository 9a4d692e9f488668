package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/config"
	"github.com/cpqportal/portal/internal/demoidp"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/telemetry"
	"github.com/cpqportal/portal/internal/v2sim"
)

const testSessionKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runningPortal is the whole program started by run, as `make run` or a container starts it.
type runningPortal struct {
	base, metricsURL string
	logs             *syncBuffer
	stop             func() error // what SIGTERM does; returns run's result
}

// startPortal runs the portal with args (which must include -demo and -addr 127.0.0.1:0) and waits
// until it is ready.
func startPortal(t *testing.T, args []string, getenv func(string) string) *runningPortal {
	t.Helper()
	args = append([]string{"-data-dir", t.TempDir()}, args...) // a fresh data directory per portal
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stdoutW := io.Pipe()
	logs := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, getenv, stdoutW, logs)
		_ = stdoutW.Close()
	}()
	p := &runningPortal{logs: logs}
	var once sync.Once
	var runErr error
	p.stop = func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
	t.Cleanup(func() { _ = p.stop() })

	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		line := lines.Text()
		if m := regexp.MustCompile(`^portal listening on (http://\S+)$`).FindStringSubmatch(line); m != nil {
			p.base = m[1]
		}
		if m := regexp.MustCompile(`^metrics listening on (http://\S+)$`).FindStringSubmatch(line); m != nil {
			p.metricsURL = m[1]
		}
		if strings.HasPrefix(line, "  v2 ") { // the banner's last line
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if p.base == "" {
		t.Fatalf("no listening line; run returned %v; logs:\n%s", p.stop(), logs)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for i := 0; ; i++ {
		resp, err := client.Get(p.base + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if i == 400 {
			t.Fatalf("never ready; logs:\n%s", logs)
		}
		time.Sleep(25 * time.Millisecond)
	}
	return p
}

// browser returns a client with a cookie jar that follows redirects.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 10 * time.Second}
}

// get fetches base+path with client and returns the response (body read) and the body.
func get(t *testing.T, client *http.Client, rawURL string) (*http.Response, string) {
	t.Helper()
	resp, err := client.Get(rawURL)
	if err != nil {
		t.Fatalf("GET %s: %v", rawURL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// signIn signs client in as username through the embedded provider's form, starting at /customers.
func signIn(t *testing.T, client *http.Client, base, username, password string) {
	t.Helper()
	resp, body := get(t, client, base+"/customers")
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	form := doc.Find("form")
	if resp.Request.URL.Path != "/idp/login" || form.Length() != 1 {
		t.Fatalf("GET /customers ended at %s, want the provider's login form", resp.Request.URL)
	}
	values := url.Values{"username": {username}, "password": {password}}
	form.Find("input[type=hidden]").Each(func(_ int, s *goquery.Selection) { values.Set(s.AttrOr("name", ""), s.AttrOr("value", "")) })
	req, _ := http.NewRequest(http.MethodPost, base+form.AttrOr("action", ""), strings.NewReader(values.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	signedIn, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, signedIn.Body)
	_ = signedIn.Body.Close()
	if signedIn.Request.URL.Path != "/customers" || signedIn.StatusCode != http.StatusOK {
		t.Fatalf("after sign-in: %s %d", signedIn.Request.URL, signedIn.StatusCode)
	}
}

// TestMetricsScrape runs the portal with PORTAL_METRICS_ADDR, signs in, browses, and scrapes
// /metrics: series are labelled by route template (never raw paths), sign-ins and token refreshes are
// counted, and /metrics is not served to users on the portal's own address.
func TestMetricsScrape(t *testing.T) {
	t.Parallel()
	// Access tokens of 30 s are inside the 60 s refresh window: every page refreshes them.
	p := startPortal(t, []string{"-demo", "-addr", "127.0.0.1:0", "-demo-customers", "3",
		"-metrics-addr", "127.0.0.1:0", "-demo-token-ttl", "30s"}, noEnv)
	if p.metricsURL == "" {
		t.Fatal("no 'metrics listening on' line in the banner")
	}
	client := browser(t)
	signIn(t, client, p.base, "sales", "sales-demo")

	_, page := get(t, client, p.base+"/customers")
	css := regexp.MustCompile(`/static/[^"]+\.css`).FindString(page)
	if css == "" {
		t.Fatalf("no stylesheet link on /customers:\n%s", page)
	}
	if resp, _ := get(t, client, p.base+css); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", css, resp.StatusCode)
	}
	if resp, _ := get(t, client, p.base+"/no/such/page/12345"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown page: %d", resp.StatusCode)
	}
	if resp, _ := get(t, client, p.base+"/metrics"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the portal's own address serves /metrics (%d); it belongs on PORTAL_METRICS_ADDR only", resp.StatusCode)
	}

	resp, body := get(t, &http.Client{Timeout: 5 * time.Second}, p.metricsURL)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d", resp.StatusCode)
	}
	for _, pattern := range []string{
		`portal_http_requests_total\{method="GET",route="/customers",status="200"\} [1-9]`,
		`portal_http_requests_total\{method="GET",route="/static/\*path",status="200"\} 1`,
		`portal_http_requests_total\{method="GET",route="unmatched",status="404"\} 2`, // the page and /metrics
		`portal_http_requests_total\{method="GET",route="/idp/\*path",status="200"\} [1-9]`,
		`portal_http_request_duration_seconds_bucket\{method="GET",route="/customers",le="\+Inf"\} [1-9]`,
		`portal_logins_total\{result="success"\} 1`,
		`portal_logins_total\{result="failure"\} 0`,
		`portal_idp_token_requests_total\{grant_type="authorization_code",result="success"\} 1`,
		`portal_idp_token_requests_total\{grant_type="refresh_token",result="success"\} [1-9]`,
		`portal_v2_requests_total\{endpoint="[a-z.]+",status_class="2xx"\} [1-9]`, // the customer list page
		`portal_v2_request_duration_seconds_count\{endpoint="[a-z.]+"\} [1-9]`,
		`portal_build_info\{goversion="go[^"]+",version="dev"\} 1`,
		`portal_streamed_bytes_total\{direction="upload"\} 0`,
		`portal_uploads_in_flight 0`,
		`go_goroutines [1-9]`,
		`process_resident_memory_bytes `,
	} {
		if !regexp.MustCompile(`(?m)^` + pattern).MatchString(body) {
			t.Errorf("scrape lacks a line matching %s", pattern)
		}
	}
	for _, raw := range []string{"12345", css, "/no/such"} {
		if strings.Contains(body, raw) {
			t.Errorf("the scrape carries the raw path part %q", raw)
		}
	}
	if strings.Contains(body, "portal_session_store_errors_total{") {
		t.Errorf("session store errors were counted:\n%s", seriesOf(body, "portal_session_store_errors_total"))
	}
	if err := p.stop(); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// seriesOf returns the lines of body about metric name.
func seriesOf(body, name string) string {
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, name) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// otlpReceiver is a minimal OTLP/HTTP trace collector.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*otlpSpan
}

type otlpSpan struct {
	name, traceID, spanID, parentID string
	resource                        map[string]string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		res := map[string]string{}
		for _, kv := range rs.GetResource().GetAttributes() {
			res[kv.GetKey()] = kv.GetValue().GetStringValue()
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				o.spans = append(o.spans, &otlpSpan{
					name: s.GetName(), traceID: hexOf(s.GetTraceId()), spanID: hexOf(s.GetSpanId()),
					parentID: hexOf(s.GetParentSpanId()), resource: res,
				})
			}
		}
	}
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// TestTracingFromOTELEnvironment runs the portal with only OTEL_EXPORTER_OTLP_ENDPOINT set: request
// spans named by route template reach the collector by the time the portal has shut down, and the
// access log line of a request carries its trace_id.
// Not parallel: the OTLP exporter reads the process environment (t.Setenv).
func TestTracingFromOTELEnvironment(t *testing.T) {
	receiver := &otlpReceiver{}
	collector := httptest.NewServer(receiver)
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_SERVICE_NAME", "cpq-portal-test")

	p := startPortal(t, []string{"-demo", "-addr", "127.0.0.1:0", "-demo-customers", "3", "-log-format", "json"}, getenvOf(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL,
	}))
	client := browser(t)
	signIn(t, client, p.base, "sales", "sales-demo")
	if resp, _ := get(t, client, p.base+"/customers"); resp.StatusCode != http.StatusOK {
		t.Fatalf("/customers: %d", resp.StatusCode)
	}
	if err := p.stop(); err != nil { // flushes the spans
		t.Fatalf("shutdown: %v", err)
	}

	receiver.mu.Lock()
	defer receiver.mu.Unlock()
	var customers *otlpSpan
	names := map[string]bool{}
	for _, s := range receiver.spans {
		names[s.name] = true
		if s.name == "GET /customers" {
			customers = s
		}
		if strings.Contains(s.name, "healthz") || strings.Contains(s.name, "readyz") {
			t.Errorf("probe traced: %q", s.name)
		}
	}
	if customers == nil {
		t.Fatalf("no span \"GET /customers\" among %v", names)
	}
	if customers.resource["service.name"] != "cpq-portal-test" || customers.resource["service.version"] != "dev" {
		t.Errorf("resource = %v, want service.name from OTEL_SERVICE_NAME and service.version dev", customers.resource)
	}
	// The customer list comes from the v2 API: the first visit (at the end of the sign-in) calls it
	// inside the page's trace, and the simulator's call is a child span "v2 <endpoint>".
	pageTraces := map[string]bool{}
	for _, s := range receiver.spans {
		if s.name == "GET /customers" {
			pageTraces[s.traceID] = true
		}
	}
	v2InPage := false
	for _, s := range receiver.spans {
		v2InPage = v2InPage || (strings.HasPrefix(s.name, "v2 ") && pageTraces[s.traceID] && s.parentID != "")
	}
	if !v2InPage {
		t.Errorf("no v2 client span inside a GET /customers trace among %v", names)
	}
	if !hasPrefix(names, "idp POST ") {
		t.Errorf("no client span for the token request at sign-in among %v", names)
	}
	// The access log line of that request names its trace.
	found := false
	for _, line := range strings.Split(p.logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "http request" || rec["route"] != "/customers" {
			continue
		}
		if rec["trace_id"] == customers.traceID {
			found = true
		}
	}
	if !found {
		t.Errorf("no access log line for /customers with trace_id %s", customers.traceID)
	}
}

func hasPrefix(set map[string]bool, prefix string) bool {
	for k := range set {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

func getenvOf(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// TestV2CallsTracedAndCounted: the v2 client that buildPortal wires makes a client span per call,
// child of the request's server span, sends its traceparent to the v2 API and counts the call by
// endpoint name. A test page (through ExtraRoutes, behind all the portal's middleware) makes the call.
func TestV2CallsTracedAndCounted(t *testing.T) {
	t.Parallel()
	sim := v2sim.New(v2sim.Options{Customers: 3, Seed: 1}) // any bearer token is accepted
	simServer := httptest.NewServer(sim)
	t.Cleanup(func() { simServer.Close(); _ = sim.Close() })

	cfg, err := config.Load([]string{"-demo", "-addr", "127.0.0.1:8080", "-v2-api-url", simServer.URL, "-metrics-addr", "127.0.0.1:0", "-data-dir", t.TempDir()}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	exporter := tracetest.NewInMemoryExporter()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	obs, err := newObservability(t.Context(), cfg, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	obs.tracing = telemetry.NewTracing(provider)

	// The page calls the v2 API with the portal's own client (set once buildPortal returns).
	var api *apiclient.Client
	extra := func(r *gin.Engine) {
		r.GET("/test/customers/:customerId", func(c *gin.Context) {
			ctx := apiclient.WithToken(c.Request.Context(), "test-token")
			if _, err := api.Customers.Get(ctx, 1); err != nil {
				c.String(http.StatusBadGateway, err.Error())
				return
			}
			c.String(http.StatusOK, "ok")
		})
	}
	p, err := buildPortal(cfg, slog.New(slog.DiscardHandler), extra, obs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.close)
	api = p.api

	rec := httptest.NewRecorder()
	p.engine.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/test/customers/1", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("test page: %d %s", rec.Code, rec.Body)
	}

	var server, client *tracetest.SpanStub
	spans := exporter.GetSpans()
	for i := range spans {
		switch spans[i].Name {
		case "GET /test/customers/:customerId":
			server = &spans[i]
		case "v2 " + apiclient.EndpointCustomerGet:
			client = &spans[i]
		}
	}
	if server == nil || client == nil || server.SpanKind != trace.SpanKindServer || client.SpanKind != trace.SpanKindClient {
		t.Fatalf("want a server and a client span, got %v", spans)
	}
	if client.Parent.SpanID() != server.SpanContext.SpanID() {
		t.Error("the v2 client span is not a child of the request's server span")
	}
	var traceparent string
	for _, r := range sim.Requests() {
		if r.Endpoint == apiclient.EndpointCustomerGet {
			traceparent = r.Header.Get("Traceparent")
		}
	}
	if want := "00-" + client.SpanContext.TraceID().String() + "-" + client.SpanContext.SpanID().String() + "-01"; traceparent != want {
		t.Errorf("the simulator received traceparent %q, want %q", traceparent, want)
	}

	scrape := httptest.NewRecorder()
	promhttp.HandlerFor(obs.registry, promhttp.HandlerOpts{}).ServeHTTP(scrape, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{
		`portal_v2_requests_total{endpoint="customers.get",status_class="2xx"} 1`,
		`portal_v2_request_duration_seconds_count{endpoint="customers.get"} 1`,
		`portal_http_requests_total{method="GET",route="/test/customers/:customerId",status="200"} 1`,
	} {
		if !strings.Contains(scrape.Body.String(), want+"\n") {
			t.Errorf("scrape lacks %s", want)
		}
	}
}

// TestBehindTLSProxy: behind a TLS-terminating proxy the portal takes its scheme and host from
// PORTAL_PUBLIC_URL only. X-Forwarded-Proto/-Host, which anyone can send, change neither the sign-in
// redirect_uri nor the cookies; X-Forwarded-For is believed only from PORTAL_TRUSTED_PROXIES.
func TestBehindTLSProxy(t *testing.T) {
	t.Parallel()
	const public = "https://portal.example.com"
	idpServer := httptest.NewUnstartedServer(nil)
	issuer := "http://" + idpServer.Listener.Addr().String()
	provider, err := demoidp.New(demoidp.Options{
		Issuer: issuer, ClientID: "cpq-portal", ClientSecret: "s3cret",
		RedirectURIs: []string{public + "/auth/callback"}, PostLogoutRedirectURIs: []string{public + "/auth/logged-out"},
	})
	if err != nil {
		t.Fatal(err)
	}
	idpServer.Config.Handler = provider.Handler()
	idpServer.Start()
	t.Cleanup(idpServer.Close)

	for _, tc := range []struct {
		name, trustedProxies, wantClientIP string
	}{
		{name: "no trusted proxy", trustedProxies: "", wantClientIP: "192.0.2.1"},
		{name: "the proxy is trusted", trustedProxies: "192.0.2.0/24", wantClientIP: "203.0.113.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{
				"PORTAL_PUBLIC_URL": public, "PORTAL_ADDR": "0.0.0.0:8080", "PORTAL_V2_API_URL": "http://v2.internal:8081",
				"PORTAL_OIDC_ISSUER": issuer, "PORTAL_OIDC_CLIENT_ID": "cpq-portal", "PORTAL_OIDC_CLIENT_SECRET": "s3cret",
				"PORTAL_SESSION_KEYS": testSessionKey, "PORTAL_TRUSTED_PROXIES": tc.trustedProxies,
			}
			env["PORTAL_DATA_DIR"] = t.TempDir()
			cfg, err := config.Load(nil, getenvOf(env))
			if err != nil {
				t.Fatal(err)
			}
			logs := &syncBuffer{}
			p, err := buildPortal(cfg, newLogger(cfg, logs), nil, observability{}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.close)

			// What a browser's request looks like after the proxy, plus forged forwarding headers.
			req := httptest.NewRequest(http.MethodGet, "http://evil.example/auth/login?return_to=/customers", nil)
			req.Header.Set("X-Forwarded-Proto", "http")
			req.Header.Set("X-Forwarded-Host", "evil.example")
			req.Header.Set("X-Forwarded-For", "203.0.113.9")
			rec := httptest.NewRecorder()
			p.engine.ServeHTTP(rec, req)
			if rec.Code < 300 || rec.Code > 399 {
				t.Fatalf("login: %d %s", rec.Code, rec.Body)
			}
			location, err := url.Parse(rec.Header().Get("Location"))
			if err != nil || !strings.HasPrefix(location.String(), issuer) {
				t.Fatalf("login redirected to %q, want the provider %s", rec.Header().Get("Location"), issuer)
			}
			if got := location.Query().Get("redirect_uri"); got != public+"/auth/callback" {
				t.Errorf("redirect_uri = %q, want %s/auth/callback", got, public)
			}
			cookies := rec.Result().Cookies()
			if len(cookies) == 0 {
				t.Fatal("no login cookie set")
			}
			for _, c := range cookies {
				if !c.Secure || !c.HttpOnly || !strings.HasPrefix(c.Name, "__Secure-") {
					t.Errorf("cookie %s: Secure=%v HttpOnly=%v; want Secure, HttpOnly, __Secure- prefix", c.Name, c.Secure, c.HttpOnly)
				}
				if c.Domain != "" {
					t.Errorf("cookie %s has Domain %q (from a forwarded host?)", c.Name, c.Domain)
				}
			}
			if hsts := rec.Header().Get("Strict-Transport-Security"); !strings.HasPrefix(hsts, "max-age=") {
				t.Errorf("Strict-Transport-Security = %q, want max-age=... with an https public URL", hsts)
			}
			if strings.Contains(rec.Body.String()+strings.Join(rec.Header().Values("Location"), ""), "evil.example") {
				t.Error("the answer mentions the forwarded host")
			}

			var clientIP string
			for _, line := range strings.Split(logs.String(), "\n") {
				var rec map[string]any
				if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "http request" {
					clientIP, _ = rec["client_ip"].(string)
				}
			}
			if clientIP != tc.wantClientIP {
				t.Errorf("access log client_ip = %q, want %q", clientIP, tc.wantClientIP)
			}
		})
	}
}

// TestLogoutEverywhere: with the sessions in a PostgreSQL state database (as replicas share them),
// "sign out everywhere" in one browser ends the same user's session in every other browser at once,
// and leaves other users signed in.
func TestLogoutEverywhere(t *testing.T) {
	t.Parallel()
	p := startPortal(t, []string{"-demo", "-addr", "127.0.0.1:0", "-demo-customers", "3",
		"-database-url", statedbtest.PostgresURL(t)}, noEnv)

	laptop, phone, colleague := browser(t), browser(t), browser(t)
	signIn(t, laptop, p.base, "sales", "sales-demo")
	signIn(t, phone, p.base, "sales", "sales-demo")
	signIn(t, colleague, p.base, "backoffice", "backoffice-demo")

	req, _ := http.NewRequest(http.MethodPost, p.base+"/auth/logout-everywhere", nil)
	req.Header.Set("Origin", p.base)
	noFollow := *laptop
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound {
		t.Fatalf("logout-everywhere answered %d, want a redirect", resp.StatusCode)
	}

	for name, c := range map[string]*http.Client{"laptop": laptop, "phone": phone} {
		// The browser that signed out lands on the sign-in form; the other one is first told why
		// (its session ended elsewhere, issue 26).
		resp, body := get(t, c, p.base+"/customers")
		told := resp.Request.URL.Path == "/auth/login" && resp.Request.URL.Query().Get("reason") == "ended" &&
			strings.Contains(body, "Your session was ended")
		if resp.Request.URL.Path != "/idp/login" && !told {
			t.Errorf("%s: /customers ended at %s, want the sign-in form or the reason for the sign-out", name, resp.Request.URL)
		}
	}
	if resp, _ := get(t, colleague, p.base+"/customers"); resp.Request.URL.Path != "/customers" || resp.StatusCode != http.StatusOK {
		t.Errorf("another user's session ended too: %s %d", resp.Request.URL, resp.StatusCode)
	}

	// A cross-site form cannot sign anyone out.
	forged, _ := http.NewRequest(http.MethodPost, p.base+"/auth/logout-everywhere", nil)
	forged.Header.Set("Origin", "https://evil.example")
	forged.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err = colleague.Do(forged)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site logout-everywhere: %d, want 403", resp.StatusCode)
	}
	if resp, _ := get(t, colleague, p.base+"/customers"); resp.Request.URL.Path != "/customers" {
		t.Errorf("the refused cross-site request signed the user out: %s", resp.Request.URL)
	}
}
