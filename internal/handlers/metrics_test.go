package handlers

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// scrape answers what Prometheus would read from reg.
func scrape(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d", rec.Code)
	}
	return rec.Body.String()
}

// TestMetricsByRouteTemplate: requests are counted by route template, never by raw path, and the
// sign-in callback's outcome counts as a login.
func TestMetricsByRouteTemplate(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := newHTTPMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	h := &Handler{metrics: m}
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	engine.Use(m.observe)
	engine.GET("/customers/:customerId", func(c *gin.Context) { c.String(http.StatusOK, "customer") })
	engine.GET(callbackRoute, func(c *gin.Context) {
		if c.Query("state") == "good" {
			c.Redirect(http.StatusSeeOther, "/customers")
			return
		}
		c.String(http.StatusBadRequest, "Sign-in failed")
	})
	var inFlightDuringUpload string
	engine.POST("/quotes/:quoteId/attachments", func(c *gin.Context) {
		defer h.trackUpload()()
		n, err := io.Copy(io.Discard, h.meterUpload(c.Request.Body))
		if err != nil {
			c.String(http.StatusBadRequest, err.Error())
			return
		}
		inFlightDuringUpload = seriesLine(scrape(t, reg), "portal_uploads_in_flight ")
		c.String(http.StatusOK, "%d", n)
	})
	engine.GET("/contracts/:contractId/pdf", func(c *gin.Context) {
		_, _ = io.Copy(c.Writer, h.meterDownload(strings.NewReader(strings.Repeat("%PDF", 250))))
	})

	for _, r := range []struct {
		method, path string
		body         string
		want         int
	}{
		{"GET", "/customers/17", "", 200},
		{"GET", "/customers/18", "", 200},
		{"GET", "/no/such/page/99", "", 404},
		{"GET", callbackRoute + "?state=good", "", 303},
		{"GET", callbackRoute + "?state=bad", "", 400},
		{"GET", callbackRoute + "?state=bad", "", 400},
		{"POST", "/quotes/5/attachments", strings.Repeat("x", 1500), 200},
		{"GET", "/contracts/9/pdf", "", 200},
	} {
		rec := httptest.NewRecorder()
		engine.ServeHTTP(rec, httptest.NewRequest(r.method, r.path, strings.NewReader(r.body)))
		if rec.Code != r.want {
			t.Fatalf("%s %s: %d, want %d", r.method, r.path, rec.Code, r.want)
		}
	}

	body := scrape(t, reg)
	for _, want := range []string{
		`portal_http_requests_total{method="GET",route="/customers/:customerId",status="200"} 2`,
		`portal_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`portal_http_request_duration_seconds_count{method="GET",route="/customers/:customerId"} 2`,
		`portal_logins_total{result="success"} 1`,
		`portal_logins_total{result="failure"} 2`,
		`portal_streamed_bytes_total{direction="upload"} 1500`,
		`portal_streamed_bytes_total{direction="download"} 1000`,
		`portal_uploads_in_flight 0`,
		`portal_http_requests_in_flight 0`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if inFlightDuringUpload != "portal_uploads_in_flight 1" {
		t.Errorf("during the upload: %q, want portal_uploads_in_flight 1", inFlightDuringUpload)
	}
	for _, raw := range []string{"/customers/17", "/no/such/page", "/quotes/5"} {
		if strings.Contains(body, raw) {
			t.Errorf("the scrape carries the raw path %s", raw)
		}
	}
}

// seriesLine returns the line of body that starts with prefix, or "".
func seriesLine(body, prefix string) string {
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	return ""
}

// TestMetricsOffHelpersAreNoOps: with metrics off the upload helpers change nothing.
func TestMetricsOffHelpersAreNoOps(t *testing.T) {
	t.Parallel()
	h := &Handler{}
	h.trackUpload()()
	body := strings.NewReader("data")
	if h.meterUpload(body) != io.Reader(body) || h.meterDownload(body) != io.Reader(body) {
		t.Error("with metrics off the bodies are wrapped")
	}
}

func TestMetricsRegisterOnce(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	if _, err := newHTTPMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := newHTTPMetrics(reg); err == nil || !strings.Contains(err.Error(), "handlers: metrics") {
		t.Errorf("registering twice: err = %v, want a handlers: metrics error", err)
	}
}
