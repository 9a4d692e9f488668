package handlers

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
		n, err := io.Copy(io.Discard, c.Request.Body)
		h.countStreamed(streamUpload, n)
		if err != nil {
			c.String(http.StatusBadRequest, err.Error())
			return
		}
		inFlightDuringUpload = seriesLine(scrape(t, reg), "portal_uploads_in_flight ")
		c.String(http.StatusOK, "%d", n)
	})
	engine.GET("/contracts/:contractId/pdf", func(c *gin.Context) {
		n, _ := io.Copy(c.Writer, strings.NewReader(strings.Repeat("%PDF", 250)))
		h.countStreamed(streamDownload, n)
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

// TestStreamedBytesAndUploadsInFlightThroughTheRealRoutes: an attachment uploaded through the
// quote's documents and downloaded again moves portal_streamed_bytes_total by its size each way,
// and portal_uploads_in_flight is 1 while the v2 API receives the file, 0 after.
func TestStreamedBytesAndUploadsInFlightThroughTheRealRoutes(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	var inFlightDuringUpload atomic.Value
	e := newDocsEnv(t, docsOptions{metrics: reg, wrap: func(sim http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/attachmentType/") {
				inFlightDuringUpload.Store(seriesLine(scrape(t, reg), "portal_uploads_in_flight "))
			}
			sim.ServeHTTP(w, r)
		})
	}})
	ref := e.newQuote(t)
	const size = 70_000
	body, contentType := streamedMultipart(
		formPart{name: "attachmentType", body: strings.NewReader("CONTRACT_ANNEX")},
		formPart{name: "file", fileName: "annex.pdf", contentType: "application/pdf", body: pdfLike(3, size)},
	)
	if resp := e.upload(t, ref, body, contentType, -1); resp.StatusCode != http.StatusOK {
		t.Fatalf("upload: %d %s", resp.StatusCode, resp.body)
	}
	attachments := e.quote(t, ref).Attachments
	if len(attachments) != 1 {
		t.Fatalf("the simulator has %d attachments, want 1", len(attachments))
	}
	if got := e.p.get(t, e.user, attachmentURL(ref, attachments[0].AttachmentID), nil); got.StatusCode != http.StatusOK || len(got.body) != size {
		t.Fatalf("download: %d, %d bytes", got.StatusCode, len(got.body))
	}

	// The download is counted when the handler's copy returns, which may be just after the browser
	// has the last byte: wait for it.
	wants := []string{
		`portal_streamed_bytes_total{direction="upload"} 70000`,
		`portal_streamed_bytes_total{direction="download"} 70000`,
		`portal_uploads_in_flight 0`,
	}
	var missing []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		scraped := scrape(t, reg)
		missing = missing[:0]
		for _, want := range wants {
			if !strings.Contains(scraped, want+"\n") {
				missing = append(missing, want+" (scraped: "+seriesLine(scraped, strings.Fields(want)[0][:20])+")")
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, m := range missing {
		t.Errorf("scrape lacks %s", m)
	}
	if got, _ := inFlightDuringUpload.Load().(string); got != "portal_uploads_in_flight 1" {
		t.Errorf("while the v2 API received the file: %q, want portal_uploads_in_flight 1", got)
	}
}
