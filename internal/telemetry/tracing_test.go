package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gin-gonic/gin"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/cpqportal/portal/internal/apiclient"
)

func TestTracingWanted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		want    bool
		wantErr string
	}{
		{name: "nothing set: off", env: nil, want: false},
		{name: "endpoint set", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, want: true},
		{name: "traces endpoint set", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, want: true},
		{name: "exporter otlp", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, want: true},
		{name: "exporter none wins over endpoint", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, want: false},
		{name: "sdk disabled", env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, want: false},
		{name: "http/protobuf is fine", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_TRACES_EXPORTER": "otlp"}, want: true},
		{name: "grpc refused", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_TRACES_EXPORTER": "otlp"}, wantErr: "OTEL_EXPORTER_OTLP_PROTOCOL: only http/protobuf"},
		{name: "traces protocol wins", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_TRACES_EXPORTER": "otlp"}, want: true},
		{name: "unknown exporter refused", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, wantErr: "OTEL_TRACES_EXPORTER: only otlp or none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tracingWanted(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("tracingWanted = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestTracingOffByDefault(t *testing.T) {
	t.Parallel()
	tr, err := TracingFromEnv(t.Context(), func(string) string { return "" }, "dev")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Enabled() {
		t.Fatal("tracing is on without any OTEL_* variable")
	}
	base := http.DefaultTransport
	if tr.Transport(base) != base {
		t.Error("the disabled tracing wraps the v2 transport")
	}
	if err := tr.Shutdown(t.Context()); err != nil {
		t.Error(err)
	}
}

// TestServerAndClientSpans: a request to a page that calls the v2 simulator makes a server span
// named after the route template and a child client span named after the v2 endpoint, and the
// simulator receives that client span's traceparent.
func TestServerAndClientSpans(t *testing.T) {
	t.Parallel()
	exporter := tracetest.NewInMemoryExporter()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	tr := NewTracing(provider)

	sim, simURL := startSimulator(t)
	api, err := apiclient.New(simURL, apiclient.WithHTTPClient(&http.Client{Transport: tr.Transport(apiclient.NewTransport())}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := apiclient.WithToken(t.Context(), "any-token")
	customers, _, _, err := api.Customers.List(ctx, "")
	if err != nil || len(customers) == 0 {
		t.Fatalf("List: %v", err)
	}
	exporter.Reset() // the set-up call above ran outside any request
	sim.ResetRequests()

	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	engine.Use(tr.Middleware())
	engine.GET("/customers/:id", func(c *gin.Context) {
		id, _ := strconv.Atoi(c.Param("id"))
		cust, err := api.Customers.Get(apiclient.WithToken(c.Request.Context(), "any-token"), int32(id))
		if err != nil {
			c.String(http.StatusBadGateway, err.Error())
			return
		}
		c.String(http.StatusOK, cust.Name)
	})
	engine.GET("/healthz", func(c *gin.Context) { c.String(http.StatusOK, "ok") })

	for _, path := range []string{"/customers/" + strconv.Itoa(int(customers[0].ID)), "/healthz", "/no/such/page"} {
		rec := httptest.NewRecorder()
		engine.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if path != "/no/such/page" && rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
	}

	spans := exporter.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	server, ok := byName["GET /customers/:id"]
	if !ok || server.SpanKind != trace.SpanKindServer {
		t.Fatalf("no server span \"GET /customers/:id\" among %v", spanNames(spans))
	}
	client, ok := byName["v2 customers.get"]
	if !ok || client.SpanKind != trace.SpanKindClient {
		t.Fatalf("no client span \"v2 customers.get\" among %v", spanNames(spans))
	}
	if client.Parent.SpanID() != server.SpanContext.SpanID() || client.SpanContext.TraceID() != server.SpanContext.TraceID() {
		t.Errorf("the client span is not a child of the server span")
	}
	if _, ok := byName["GET unmatched"]; !ok {
		t.Errorf("no span \"GET unmatched\" for an unknown path among %v", spanNames(spans))
	}
	for _, s := range spans {
		if strings.Contains(s.Name, "healthz") || strings.Contains(s.Name, strconv.Itoa(int(customers[0].ID))) {
			t.Errorf("span %q: health probes are not traced and names carry no raw ids", s.Name)
		}
	}
	hasEndpoint := false
	for _, a := range client.Attributes {
		if string(a.Key) == "v2.endpoint" && a.Value.AsString() == apiclient.EndpointCustomerGet {
			hasEndpoint = true
		}
	}
	if !hasEndpoint {
		t.Errorf("client span lacks v2.endpoint=%s: %v", apiclient.EndpointCustomerGet, client.Attributes)
	}

	// The simulator got the W3C traceparent of the client span: version-traceid-spanid-flags.
	var got string
	for _, r := range sim.Requests() {
		if r.Endpoint == apiclient.EndpointCustomerGet {
			got = r.Header.Get("Traceparent")
		}
	}
	want := "00-" + client.SpanContext.TraceID().String() + "-" + client.SpanContext.SpanID().String() + "-01"
	if got != want {
		t.Errorf("simulator received traceparent %q, want %q", got, want)
	}
}

func spanNames(spans tracetest.SpanStubs) []string {
	names := make([]string, 0, len(spans))
	for _, s := range spans {
		names = append(names, s.Name)
	}
	return names
}

// otlpReceiver is a minimal OTLP/HTTP collector: it decodes the protobuf export requests it receives.
type otlpReceiver struct {
	mu       sync.Mutex
	requests []*collectortrace.ExportTraceServiceRequest
	paths    []string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	o.requests = append(o.requests, &req)
	o.paths = append(o.paths, r.URL.Path)
	o.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	resp, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	_, _ = w.Write(resp)
}

// TestTracingFromEnvExportsOTLP: with only OTEL_EXPORTER_OTLP_ENDPOINT set, spans reach an OTLP/HTTP
// collector on Shutdown, with the service name and version as resource attributes.
// Not parallel: the exporter reads the process environment (t.Setenv).
func TestTracingFromEnvExportsOTLP(t *testing.T) {
	receiver := &otlpReceiver{}
	collector := httptest.NewServer(receiver)
	t.Cleanup(collector.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")

	tr, err := TracingFromEnv(t.Context(), func(k string) string {
		if k == "OTEL_EXPORTER_OTLP_ENDPOINT" {
			return collector.URL
		}
		return ""
	}, "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Enabled() {
		t.Fatal("tracing is off with OTEL_EXPORTER_OTLP_ENDPOINT set")
	}
	engine := gin.New()
	engine.Use(tr.Middleware())
	engine.GET("/quotes/:quoteId", func(c *gin.Context) { c.String(http.StatusOK, "quote") })
	rec := httptest.NewRecorder()
	engine.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/quotes/42", nil))
	if err := tr.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}

	receiver.mu.Lock()
	defer receiver.mu.Unlock()
	if len(receiver.requests) == 0 {
		t.Fatal("the collector received nothing")
	}
	if receiver.paths[0] != "/v1/traces" {
		t.Errorf("exported to %s, want /v1/traces", receiver.paths[0])
	}
	var names []string
	resource := map[string]string{}
	for _, req := range receiver.requests {
		for _, rs := range req.GetResourceSpans() {
			for _, kv := range rs.GetResource().GetAttributes() {
				resource[kv.GetKey()] = kv.GetValue().GetStringValue()
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					names = append(names, s.GetName())
				}
			}
		}
	}
	if len(names) != 1 || names[0] != "GET /quotes/:quoteId" {
		t.Errorf("exported spans %q, want [\"GET /quotes/:quoteId\"]", names)
	}
	for k, v := range map[string]string{"service.name": ServiceName, "service.version": "1.2.3", "deployment.environment": "test"} {
		if resource[k] != v {
			t.Errorf("resource %s = %q, want %q (all: %v)", k, resource[k], v, resource)
		}
	}
}

func TestLogHandlerAddsTraceIDs(t *testing.T) {
	t.Parallel()
	exporter := tracetest.NewInMemoryExporter()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	var buf bytes.Buffer
	logger := slog.New(LogHandler(slog.NewJSONHandler(&buf, nil))).With("component", "test")

	ctx, span := provider.Tracer("test").Start(t.Context(), "work")
	logger.InfoContext(ctx, "inside")
	span.End()
	logger.InfoContext(t.Context(), "outside")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("log lines: %q", lines)
	}
	var inside, outside map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &inside); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &outside); err != nil {
		t.Fatal(err)
	}
	if inside["trace_id"] != span.SpanContext().TraceID().String() || inside["span_id"] != span.SpanContext().SpanID().String() || inside["component"] != "test" {
		t.Errorf("inside a span: %v", inside)
	}
	if _, ok := outside["trace_id"]; ok {
		t.Errorf("outside a span the line has a trace_id: %v", outside)
	}
}

// TestClientSpanRedactsQuery: search text in a v2 call's query never reaches the trace backend.
func TestClientSpanRedactsQuery(t *testing.T) {
	t.Parallel()
	exporter := tracetest.NewInMemoryExporter()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	tr := NewTracing(provider)
	_, simURL := startSimulator(t)
	api, err := apiclient.New(simURL, apiclient.WithHTTPClient(&http.Client{Transport: tr.Transport(apiclient.NewTransport())}))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = api.Customers.Search(apiclient.WithToken(t.Context(), "any-token"), 1, "Rossi private") // the answer does not matter

	spans := exporter.GetSpans()
	if len(spans) != 1 || spans[0].Name != "v2 "+apiclient.EndpointCustomerSearch {
		t.Fatalf("spans: %v", spanNames(spans))
	}
	var full string
	for _, a := range spans[0].Attributes {
		if a.Key == "url.full" {
			full = a.Value.AsString()
		}
	}
	if !strings.Contains(full, "=REDACTED") || strings.Contains(full, "Rossi") || strings.Contains(full, "private") {
		t.Errorf("url.full = %q, want query values REDACTED", full)
	}
}
