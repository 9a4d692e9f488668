// Package telemetry lets operators watch the portal: Prometheus metrics of what the portal depends on
// (the v2 API, the identity provider, the session store) and OpenTelemetry tracing.
//
// The HTTP request metrics themselves (by route template, logins, uploads) belong to the handlers
// package, which sees the routes; this package instruments the outgoing side, where the handlers
// cannot look: http.RoundTrippers for the v2 API client and the identity provider's client, and the
// session stores' error hook (StoreErrorHook). cmd/portal builds one non-global prometheus.Registry and passes it to
// both (docs/operations.md lists every series).
//
// Tracing is off unless the standard OpenTelemetry variables ask for it (TracingFromEnv): then every
// request gets a server span (otelgin), every v2 call a client span (otelhttp) and the W3C
// traceparent header goes to the v2 API, so its traces join the portal's. No global OpenTelemetry
// state is set: the provider and propagator are passed explicitly.
package telemetry
