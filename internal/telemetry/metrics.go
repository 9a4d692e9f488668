package telemetry

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cpqportal/portal/internal/apiclient"
)

// Label values used when there is no better one.
const (
	// StatusClassError is the status_class of a v2 call that got no HTTP answer (connection
	// refused, time-out, cancelled).
	StatusClassError = "error"
	// UnknownEndpoint labels a request sent through the v2 transport without an apiclient endpoint.
	UnknownEndpoint = "unknown"
)

// Results of identity-provider token requests (portal_idp_token_requests_total).
const (
	ResultSuccess  = "success"  // 2xx
	ResultRejected = "rejected" // 4xx: the grant was refused (a refresh: the session ends, unless another replica had just refreshed it)
	ResultError    = "error"    // 5xx or no answer: the provider is unavailable
)

// latencyBuckets suit calls of a few milliseconds to the v2 time limit (PORTAL_V2_TIMEOUT, 15 s).
var latencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// Metrics are the portal's Prometheus metrics of its dependencies. Build one with NewMetrics; its
// methods wrap the pieces cmd/portal wires together.
type Metrics struct {
	v2Requests    *prometheus.CounterVec
	v2Duration    *prometheus.HistogramVec
	tokenRequests *prometheus.CounterVec
	storeErrors   *prometheus.CounterVec
}

// NewMetrics registers the dependency metrics and portal_build_info{version} on reg.
func NewMetrics(reg prometheus.Registerer, version string) (*Metrics, error) {
	m := &Metrics{
		v2Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portal_v2_requests_total",
			Help: "Calls to the v2 API, by endpoint name and status class (2xx, 4xx, 5xx, error = no answer).",
		}, []string{"endpoint", "status_class"}),
		v2Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "portal_v2_request_duration_seconds",
			Help:    "Time from sending a v2 API call to its response headers, by endpoint name.",
			Buckets: latencyBuckets,
		}, []string{"endpoint"}),
		tokenRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portal_idp_token_requests_total",
			Help: "Requests to the identity provider's token endpoint, by grant type (authorization_code = sign-in, refresh_token = token refresh) and result (success, rejected, error).",
		}, []string{"grant_type", "result"}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portal_session_store_errors_total",
			Help: "Session store operations that failed (e.g. the state database unreachable, session too large for cookies), by operation.",
		}, []string{"operation"}),
	}
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "portal_build_info",
		Help: "Always 1; labels tell the running portal's version and Go version.",
	}, []string{"version", "goversion"})
	build.WithLabelValues(version, runtime.Version()).Set(1)
	for _, c := range []prometheus.Collector{m.v2Requests, m.v2Duration, m.tokenRequests, m.storeErrors, build} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("telemetry: metrics: %w", err)
		}
	}
	return m, nil
}

// V2Transport counts and times the v2 API calls sent through next, labelled with the endpoint name
// the apiclient puts into each request's context (never the raw path: it holds ids). The time is to
// the response headers, so long downloads do not distort the latency of the call itself.
func (m *Metrics) V2Transport(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		endpoint, ok := apiclient.EndpointFromContext(req.Context())
		if !ok {
			endpoint = UnknownEndpoint
		}
		start := time.Now()
		resp, err := next.RoundTrip(req)
		m.v2Duration.WithLabelValues(endpoint).Observe(time.Since(start).Seconds())
		class := StatusClassError
		if err == nil {
			class = strconv.Itoa(resp.StatusCode/100) + "xx"
		}
		m.v2Requests.WithLabelValues(endpoint, class).Inc()
		return resp, err
	})
}

// IdPTransport counts the token requests sent through next to the identity provider: sign-ins
// (authorization_code) and token refreshes (refresh_token), by result. It reads the grant type from
// a copy of the form body (Request.GetBody), never from the body being sent.
func (m *Metrics) IdPTransport(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		grant := grantType(req)
		resp, err := next.RoundTrip(req)
		if grant == "" {
			return resp, err
		}
		result := ResultError
		switch {
		case err != nil:
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			result = ResultSuccess
		case resp.StatusCode >= 400 && resp.StatusCode < 500:
			result = ResultRejected
		}
		m.tokenRequests.WithLabelValues(grant, result).Inc()
		return resp, err
	})
}

// maxTokenRequestBody bounds how much of a token request is read to find its grant type.
const maxTokenRequestBody = 16 << 10

// grantType returns the grant_type of an OAuth token request (a form POST), "other" for a grant we
// do not name, or "" when req is not a token request.
func grantType(req *http.Request) string {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return ""
	}
	if mediaType, _, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err != nil || mediaType != "application/x-www-form-urlencoded" {
		return ""
	}
	body, err := req.GetBody()
	if err != nil {
		return ""
	}
	defer body.Close()
	raw, err := io.ReadAll(io.LimitReader(body, maxTokenRequestBody))
	if err != nil {
		return ""
	}
	form, err := url.ParseQuery(string(raw))
	if err != nil {
		return ""
	}
	switch g := form.Get("grant_type"); g {
	case "":
		return ""
	case "authorization_code", "refresh_token":
		return g
	default:
		return "other" // bounded label values whatever is sent
	}
}

// roundTripperFunc adapts a function to http.RoundTripper.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
