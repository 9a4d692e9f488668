package handlers

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

// callbackRoute is the sign-in callback (internal/auth CallbackPath): its outcome is a login.
const callbackRoute = "/auth/callback"

// Directions of portal_streamed_bytes_total.
const (
	streamUpload   = "upload"   // browser → portal → v2 API (attachments)
	streamDownload = "download" // v2 API → portal → browser (PDFs, attachments)
)

// httpMetrics are the Prometheus metrics of the portal's HTTP traffic (PORTAL_METRICS_ADDR).
// Labels use the route template (c.FullPath()), never the raw path, so ids do not multiply series;
// requests that match no route are labelled "unmatched". docs/operations.md lists every series.
type httpMetrics struct {
	requests        *prometheus.CounterVec
	duration        *prometheus.HistogramVec
	inFlight        prometheus.Gauge
	logins          *prometheus.CounterVec
	uploadsInFlight prometheus.Gauge
	streamed        *prometheus.CounterVec
}

func newHTTPMetrics(reg prometheus.Registerer) (*httpMetrics, error) {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portal_http_requests_total",
			Help: "HTTP requests answered by the portal, by route template, method and status.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "portal_http_request_duration_seconds",
			Help:    "Time to answer HTTP requests, by route template and method.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "portal_http_requests_in_flight",
			Help: "HTTP requests being answered right now.",
		}),
		logins: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portal_logins_total",
			Help: "Sign-ins completed at /auth/callback, by result (success, failure).",
		}, []string{"result"}),
		uploadsInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "portal_uploads_in_flight",
			Help: "Attachment uploads being streamed to the v2 API right now.",
		}),
		streamed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portal_streamed_bytes_total",
			Help: "Bytes streamed through the portal: upload (browser to v2 API) or download (v2 API to browser).",
		}, []string{"direction"}),
	}
	// Both directions exist from the start, so rate() works before the first transfer.
	m.streamed.WithLabelValues(streamUpload)
	m.streamed.WithLabelValues(streamDownload)
	m.logins.WithLabelValues("success")
	m.logins.WithLabelValues("failure")
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.inFlight, m.logins, m.uploadsInFlight, m.streamed} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("handlers: metrics: %w", err)
		}
	}
	return m, nil
}

// observe records one request (middleware; only installed when metrics are enabled).
func (m *httpMetrics) observe(c *gin.Context) {
	start := time.Now()
	m.inFlight.Inc()
	defer m.inFlight.Dec() // also when a handler panics through (http.ErrAbortHandler)
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	status := c.Writer.Status()
	m.requests.WithLabelValues(route, c.Request.Method, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route, c.Request.Method).Observe(time.Since(start).Seconds())
	if route == callbackRoute {
		// auth answers a completed sign-in with a redirect to the page asked for, every failure
		// (bad state, refused code, bad ID token, provider down) with an error page.
		switch {
		case status >= 300 && status < 400:
			m.logins.WithLabelValues("success").Inc()
		case status >= 400:
			m.logins.WithLabelValues("failure").Inc()
		}
	}
}

// trackUpload counts an attachment upload in portal_uploads_in_flight until done is called, when
// the v2 call that streams it has ended. A no-op when metrics are off.
func (h *Handler) trackUpload() (done func()) {
	if h.metrics == nil {
		return func() {}
	}
	h.metrics.uploadsInFlight.Inc()
	return h.metrics.uploadsInFlight.Dec
}

// countStreamed adds n bytes moved in direction (streamUpload, streamDownload) to
// portal_streamed_bytes_total. The transfers call it once they end, with what was moved, also when
// they broke off. A no-op when metrics are off.
func (h *Handler) countStreamed(direction string, n int64) {
	if h.metrics == nil || n <= 0 {
		return
	}
	h.metrics.streamed.WithLabelValues(direction).Add(float64(n))
}
