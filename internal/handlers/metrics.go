package handlers

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

// httpMetrics are the Prometheus metrics of the portal's HTTP traffic (PORTAL_METRICS_ADDR).
// Labels use the route template (c.FullPath()), never the raw path, so ids do not multiply series.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
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
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("handlers: metrics: %w", err)
		}
	}
	return m, nil
}

// observe records one request (middleware; only installed when metrics are enabled).
func (m *httpMetrics) observe(c *gin.Context) {
	start := time.Now()
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	m.requests.WithLabelValues(route, c.Request.Method, strconv.Itoa(c.Writer.Status())).Inc()
	m.duration.WithLabelValues(route, c.Request.Method).Observe(time.Since(start).Seconds())
}
