package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"golang.org/x/oauth2"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/v2sim"
)

// series gathers reg into "name{label="value",...}" → value (counters, gauges) and
// "name_count{...}" → count (histograms), labels sorted by name.
func series(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := f.GetName() + labelString(m.GetLabel())
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[f.GetName()+"_count"+labelString(m.GetLabel())] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

func labelString(labels []*dto.LabelPair) string {
	if len(labels) == 0 {
		return ""
	}
	parts := make([]string, 0, len(labels))
	for _, l := range labels {
		parts = append(parts, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

func newTestMetrics(t *testing.T) (*Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	return m, reg
}

// startSimulator serves a fresh v2 simulator (any bearer token is accepted).
func startSimulator(t *testing.T) (*v2sim.Server, string) {
	t.Helper()
	sim := v2sim.New(v2sim.Options{Customers: 3, Seed: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); _ = sim.Close() })
	return sim, srv.URL
}

func TestV2TransportCountsByEndpointAndStatusClass(t *testing.T) {
	t.Parallel()
	m, reg := newTestMetrics(t)
	_, simURL := startSimulator(t)
	api, err := apiclient.New(simURL, apiclient.WithHTTPClient(&http.Client{Transport: m.V2Transport(apiclient.NewTransport())}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := apiclient.WithToken(t.Context(), "any-token")
	customers, _, _, err := api.Customers.List(ctx, "")
	if err != nil || len(customers) == 0 {
		t.Fatalf("List: %d customers, %v", len(customers), err)
	}
	if _, err := api.Customers.Get(ctx, customers[0].ID); err != nil {
		t.Fatalf("Get: %v", err)
	}
	if _, err := api.Customers.Get(ctx, 999999); !errors.Is(err, apiclient.ErrNotFound) {
		t.Fatalf("Get(unknown) = %v, want ErrNotFound", err)
	}

	// No answer at all: a port nobody listens on.
	closed := closedPortURL(t)
	down, err := apiclient.New(closed, apiclient.WithHTTPClient(&http.Client{Transport: m.V2Transport(apiclient.NewTransport())}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := down.Customers.Get(ctx, 1); err == nil {
		t.Fatal("a call to a closed port succeeded")
	}

	got := series(t, reg)
	want := map[string]float64{
		`portal_v2_requests_total{endpoint="customers.list",status_class="2xx"}`:   1,
		`portal_v2_requests_total{endpoint="customers.get",status_class="2xx"}`:    1,
		`portal_v2_requests_total{endpoint="customers.get",status_class="4xx"}`:    1,
		`portal_v2_requests_total{endpoint="customers.get",status_class="error"}`:  2, // the GET is retried once
		`portal_v2_request_duration_seconds_count{endpoint="customers.list"}`:      1,
		`portal_v2_request_duration_seconds_count{endpoint="customers.get"}`:       4,
		`portal_build_info{goversion="` + runtime.Version() + `",version="1.2.3"}`: 1,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	for k := range got {
		if strings.Contains(k, "999999") || strings.Contains(k, "/v2/") {
			t.Errorf("a series carries a raw path or id: %s", k)
		}
	}
}

// closedPortURL returns an http URL of a loopback port with no listener.
func closedPortURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr
}

// TestIdPTransportCountsTokenRequests drives the real oauth2 library (as auth does) against a token
// endpoint that accepts one code and one refresh token and refuses or fails the others.
func TestIdPTransportCountsTokenRequests(t *testing.T) {
	t.Parallel()
	m, reg := newTestMetrics(t)
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		switch r.PostForm.Get("code") + r.PostForm.Get("refresh_token") {
		case "good-code", "good-refresh":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"access_token":"at","token_type":"Bearer","refresh_token":"rt","expires_in":300}`)
		case "revoked-refresh":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_grant"}`)
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(idp.Close)
	cfg := oauth2.Config{ClientID: "portal", ClientSecret: "secret", Endpoint: oauth2.Endpoint{TokenURL: idp.URL + "/token"}}
	ctx := context.WithValue(t.Context(), oauth2.HTTPClient, &http.Client{Transport: m.IdPTransport(http.DefaultTransport)})

	if _, err := cfg.Exchange(ctx, "good-code"); err != nil {
		t.Fatalf("Exchange: %v", err)
	}
	for _, rt := range []string{"good-refresh", "revoked-refresh", "flaky-refresh"} {
		_, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: rt}).Token()
		if (err == nil) != (rt == "good-refresh") {
			t.Fatalf("refresh %s: err = %v", rt, err)
		}
	}
	// Not a token request: not counted.
	resp, err := (&http.Client{Transport: m.IdPTransport(http.DefaultTransport)}).Get(idp.URL + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()

	got := series(t, reg)
	want := map[string]float64{
		`portal_idp_token_requests_total{grant_type="authorization_code",result="success"}`: 1,
		`portal_idp_token_requests_total{grant_type="refresh_token",result="success"}`:      1,
		`portal_idp_token_requests_total{grant_type="refresh_token",result="rejected"}`:     1,
		`portal_idp_token_requests_total{grant_type="refresh_token",result="error"}`:        1,
	}
	total := 0.0
	for k, v := range got {
		if strings.HasPrefix(k, "portal_idp_token_requests_total") {
			total += v
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if total != 4 {
		t.Errorf("%v token requests counted, want 4 (the discovery GET is none)", total)
	}
}

func TestStoreErrorHookCountsFailuresOnly(t *testing.T) {
	t.Parallel()
	m, reg := newTestMetrics(t)
	const key = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

	// A state database that is gone: every operation that reaches it fails.
	db := statedbtest.SQLite(t)
	dbStore, err := session.NewSQLStore(session.Options{Keys: []string{key}, OnError: m.StoreErrorHook()}, db)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	if err := session.Save(dbStore, rec, req, &session.Session{Subject: "u1"}); err == nil {
		t.Fatal("Save against a closed database succeeded")
	}

	// A cookie store without a cookie: ErrNoSession is a signed-out user, not a failure.
	cookieStore, err := session.NewCookieStore(session.Options{Keys: []string{key}, OnError: m.StoreErrorHook()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := session.Load(cookieStore, httptest.NewRequest(http.MethodGet, "/", nil)); !errors.Is(err, session.ErrNoSession) {
		t.Fatalf("Load without cookie = %v, want ErrNoSession", err)
	}
	// A session that is saved and loaded back counts nothing.
	rec = httptest.NewRecorder()
	if err := session.Save(cookieStore, rec, httptest.NewRequest(http.MethodGet, "/", nil), &session.Session{Subject: "u2"}); err != nil {
		t.Fatal(err)
	}
	req = httptest.NewRequest(http.MethodGet, "/", nil)
	for _, c := range rec.Result().Cookies() {
		req.AddCookie(c)
	}
	if s, err := session.Load(cookieStore, req); err != nil || s.Subject != "u2" {
		t.Fatalf("Load = %v, %v", s, err)
	}

	got := series(t, reg)
	if got[`portal_session_store_errors_total{operation="save"}`] != 1 {
		t.Errorf("save errors = %v, want 1", got[`portal_session_store_errors_total{operation="save"}`])
	}
	if v := got[`portal_session_store_errors_total{operation="load"}`]; v != 0 {
		t.Errorf("load errors = %v, want 0 (ErrNoSession is no failure)", v)
	}
}
