package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/cpqportal/portal/internal/apiclient"
)

// ServiceName is the default OpenTelemetry service.name (OTEL_SERVICE_NAME overrides it).
const ServiceName = "cpq-portal"

// Tracing is the portal's OpenTelemetry tracing. A nil *Tracing, or one from TracingFromEnv when
// the environment does not ask for tracing, is off: Middleware passes requests through and Transport
// returns its argument, so callers need no conditions.
type Tracing struct {
	provider   trace.TracerProvider
	propagator propagation.TextMapPropagator
	shutdown   func(context.Context) error
}

// TracingFromEnv sets up tracing as the standard OpenTelemetry variables say. It is off unless
// OTEL_TRACES_EXPORTER=otlp, or OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is
// set; OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true turn it off. Spans go to an OTLP/HTTP
// (protobuf) exporter that reads its own OTEL_EXPORTER_OTLP_* settings (endpoint, headers, timeout,
// TLS) from the process environment; OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER
// and OTEL_BSP_* are honoured too. Other exporters or protocols (grpc) are refused with an error
// naming the variable. Call Shutdown on exit to flush the last spans.
func TracingFromEnv(ctx context.Context, getenv func(string) string, version string) (*Tracing, error) {
	enabled, err := tracingWanted(getenv)
	if err != nil || !enabled {
		return nil, err
	}
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: tracing exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(
			attribute.String("service.name", ServiceName),
			attribute.String("service.version", version),
		),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the defaults above
	)
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	provider := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exporter),
		sdktrace.WithResource(res),
	)
	t := NewTracing(provider)
	t.shutdown = provider.Shutdown
	return t, nil
}

// tracingWanted applies the enabling rules of TracingFromEnv.
func tracingWanted(getenv func(string) string) (bool, error) {
	if disabled, err := strconv.ParseBool(strings.TrimSpace(getenv("OTEL_SDK_DISABLED"))); err == nil && disabled {
		return false, nil
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := strings.TrimSpace(getenv(name)); p != "" {
			if p != "http/protobuf" {
				return false, fmt.Errorf("%s: only http/protobuf is supported, not %q", name, p)
			}
			break // the traces-specific variable wins
		}
	}
	switch exporter := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exporter {
	case "none":
		return false, nil
	case "otlp":
		return true, nil
	case "":
		return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "", nil
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER: only otlp or none are supported, not %q", exporter)
	}
}

// NewTracing traces with provider (tests pass an SDK provider with an in-memory exporter) and the
// W3C trace-context and baggage propagators.
func NewTracing(provider trace.TracerProvider) *Tracing {
	return &Tracing{
		provider:   provider,
		propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
}

// Enabled reports whether spans are recorded.
func (t *Tracing) Enabled() bool { return t != nil && t.provider != nil }

// Shutdown flushes the spans not yet exported and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil || t.shutdown == nil {
		return nil
	}
	if err := t.shutdown(ctx); err != nil {
		return fmt.Errorf("telemetry: tracing shutdown: %w", err)
	}
	return nil
}

// Middleware returns the gin middleware that starts a server span per request, named
// "METHOD /route/:template" ("METHOD unmatched" for unknown paths; never the raw path), continuing a
// trace whose traceparent came with the request. Health probes are not traced: they would drown
// the traces that matter. Install it first, so every other middleware runs inside the span.
func (t *Tracing) Middleware() gin.HandlerFunc {
	if !t.Enabled() {
		return func(c *gin.Context) { c.Next() }
	}
	return otelgin.Middleware(ServiceName,
		otelgin.WithTracerProvider(t.provider),
		otelgin.WithPropagators(t.propagator),
		otelgin.WithMeterProvider(metricnoop.NewMeterProvider()), // metrics are Prometheus' job here
		otelgin.WithFilter(func(r *http.Request) bool {
			return r.URL.Path != "/healthz" && r.URL.Path != "/readyz"
		}),
		otelgin.WithSpanNameFormatter(func(c *gin.Context) string {
			route := c.FullPath()
			if route == "" {
				route = "unmatched"
			}
			return c.Request.Method + " " + route
		}),
	)
}

// Transport returns next wrapped so that every v2 API call is a client span named
// "v2 <endpoint>" (e.g. "v2 customers.get", attribute v2.endpoint) and carries the W3C traceparent
// header of that span, so the v2 API's own spans join the trace. Query values (search text) are
// redacted from the span's url.full, as the access log leaves queries out.
func (t *Tracing) Transport(next http.RoundTripper) http.RoundTripper {
	if !t.Enabled() {
		return next
	}
	// The inner wrapper runs inside the client span, where it can label it.
	labelled := roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		span := trace.SpanFromContext(req.Context())
		redactURL(span, req)
		if endpoint, ok := apiclient.EndpointFromContext(req.Context()); ok {
			span.SetAttributes(attribute.String("v2.endpoint", endpoint))
		}
		return next.RoundTrip(req)
	})
	return otelhttp.NewTransport(labelled,
		otelhttp.WithTracerProvider(t.provider),
		otelhttp.WithPropagators(t.propagator),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			endpoint, ok := apiclient.EndpointFromContext(r.Context())
			if !ok {
				endpoint = UnknownEndpoint
			}
			return "v2 " + endpoint
		}),
	)
}

// IdPTransport returns next wrapped so that calls to the identity provider (discovery, keys, token
// requests) are client spans named "idp METHOD /path" (the provider's paths hold no user data; query
// values are redacted).
func (t *Tracing) IdPTransport(next http.RoundTripper) http.RoundTripper {
	if !t.Enabled() {
		return next
	}
	redacting := roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		redactURL(trace.SpanFromContext(req.Context()), req)
		return next.RoundTrip(req)
	})
	return otelhttp.NewTransport(redacting,
		otelhttp.WithTracerProvider(t.provider),
		otelhttp.WithPropagators(t.propagator),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			return "idp " + r.Method + " " + r.URL.Path
		}),
	)
}

// redactURL overwrites the span's url.full (set by otelhttp with the whole query) with one whose
// query values read REDACTED, as the OpenTelemetry semantic conventions advise for sensitive values.
func redactURL(span trace.Span, req *http.Request) {
	if req.URL == nil || req.URL.RawQuery == "" || !span.IsRecording() {
		return
	}
	u := *req.URL
	u.User = nil
	query := u.Query()
	for key := range query {
		query[key] = []string{"REDACTED"}
	}
	u.RawQuery = query.Encode()
	span.SetAttributes(attribute.String("url.full", u.String()))
}
