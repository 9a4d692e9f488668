package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cpqportal/portal/internal/config"
	"github.com/cpqportal/portal/internal/telemetry"
)

// observability is what the portal is instrumented with. The zero value instruments nothing.
type observability struct {
	// registry holds every metric (nil: PORTAL_METRICS_ADDR is not set, metrics are off). It is
	// the portal's own, never prometheus.DefaultRegisterer: no package-level state.
	registry *prometheus.Registry
	// metrics are the dependency metrics on registry (v2 API, identity provider, session store).
	metrics *telemetry.Metrics
	// tracing is nil or disabled unless the OTEL_* variables ask for it.
	tracing *telemetry.Tracing
}

// newObservability builds the metrics registry (when PORTAL_METRICS_ADDR is set) and the tracing
// the OTEL_* variables ask for.
func newObservability(ctx context.Context, cfg config.Config, getenv func(string) string) (observability, error) {
	var obs observability
	if cfg.MetricsAddr != "" {
		obs.registry = newMetricsRegistry()
		m, err := telemetry.NewMetrics(obs.registry, version)
		if err != nil {
			return observability{}, err
		}
		obs.metrics = m
	}
	tracing, err := telemetry.TracingFromEnv(ctx, getenv, version)
	if err != nil {
		return observability{}, err
	}
	obs.tracing = tracing
	return obs, nil
}

// newMetricsRegistry returns the registry of the portal's metrics: Go runtime, process, and the
// metrics the handlers and telemetry add.
func newMetricsRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// startMetrics serves /metrics on its own listener (PORTAL_METRICS_ADDR), apart from user traffic:
// the ingress never exposes it. It returns the server and the URL it really listens on.
func startMetrics(addr string, reg *prometheus.Registry, logger *slog.Logger) (*http.Server, string, error) {
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("PORTAL_METRICS_ADDR: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		// A failing collector is reported in the scrape and logged, not hidden.
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}))
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics server stopped", slog.Any("err", err))
		}
	}()
	url := "http://" + listener.Addr().String() + "/metrics"
	logger.Info("metrics listening", slog.String("url", url))
	return server, url, nil
}
