package v2sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is an injectable clock for session expiry.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is one simulator behind a real HTTP server.
type env struct {
	t     *testing.T
	sim   *Server
	srv   *httptest.Server
	clock *fakeClock
}

func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	clock := newFakeClock()
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	if opts.TempDir == "" {
		opts.TempDir = t.TempDir()
	}
	sim := New(opts)
	srv := httptest.NewServer(sim)
	t.Cleanup(func() {
		srv.Close()
		if err := sim.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &env{t: t, sim: sim, srv: srv, clock: clock}
}

// reqOpt changes a request before it is sent.
type reqOpt func(*http.Request)

func withSession(id string) reqOpt {
	return func(r *http.Request) { r.Header.Set(sessionHeader, id) }
}

func withHeader(k, v string) reqOpt { return func(r *http.Request) { r.Header.Set(k, v) } }

func withoutHeader(k string) reqOpt { return func(r *http.Request) { r.Header.Del(k) } }

// response is a fully read answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// apiErrorBody is the A2 error body as a client reads it.
type apiErrorBody struct {
	Status      int
	Code        string
	Message     string
	Path        string
	FieldErrors []struct{ Field, Message string }
}

func (r response) apiError(t *testing.T) apiErrorBody {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error Content-Type = %q, want application/json; body %s", ct, r.body)
	}
	var e apiErrorBody
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("error body is not JSON: %v: %s", err, r.body)
	}
	if e.Status != r.status {
		t.Fatalf("error body status %d, HTTP status %d", e.Status, r.status)
	}
	return e
}

// wantError checks status and code of an A2 error answer.
func (r response) wantError(t *testing.T, status int, code string) apiErrorBody {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	e := r.apiError(t)
	if e.Code != code {
		t.Fatalf("code = %q, want %q; body %s", e.Code, code, r.body)
	}
	return e
}

func (r response) wantStatus(t *testing.T, status int) response {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	return r
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %T: %v: %s", v, err, r.body)
	}
}

// hasFieldError reports whether the 422 names the field.
func (e apiErrorBody) hasFieldError(field string) bool {
	for _, fe := range e.FieldErrors {
		if fe.Field == field {
			return true
		}
	}
	return false
}

// do sends a request with a bearer token; a non-nil body that is not []byte or string is sent as JSON.
func (e *env) do(method, path string, body any, opts ...reqOpt) response {
	e.t.Helper()
	var rd io.Reader
	isJSON := false
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
		isJSON = true
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
		isJSON = true
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer test-token")
	if isJSON {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

// Test-side readings of the documents (independent of the simulator's Go types).
type tAmounts struct{ Activation, Recurring float64 }

type tTotals struct {
	ListActivation, ListRecurring, DiscountActivation, DiscountRecurring float64
	ExtraActivation, ExtraRecurring, NetActivation, NetRecurring         float64
}

type tNode struct {
	NodeID, ParentID                        int64
	ProductID, TOFProductID                 int32
	Kind, Name, ItemUniqueID                string
	ListActivationPrice, ListRecurringPrice float64
	ActivationPrice, RecurringPrice         float64
	Repriced                                bool
	Breakdown                               struct {
		List      tAmounts
		Discounts []struct {
			DiscountID            int32
			Name                  string
			Activation, Recurring float64
		}
		Extra, Net tAmounts
	}
	Children []tNode
}

type tCart struct {
	BasketID    int64
	TOFID       int32
	Label       string
	Quantity    int64
	PricelistID int32
	Root        tNode
	Totals      tTotals
}

type tQuote struct {
	QuoteID, CustomerQuoteID int64
	CPQID, CustomerID        int32
	Status, Currency         string
	UpdatedAt                time.Time
	TOFList                  []struct {
		ID   int32
		Name string
	}
	AvailablePricelists []struct {
		PricelistID int32
		Name        string
	}
	Carts            []tCart
	AppliedDiscounts []struct {
		DiscountID int32
		Percent    float64
		AppliesTo  string
	}
	ExtraDiscounts []struct {
		DiscountID    int32
		DiscountValue float64
	}
	Packages []struct {
		PackageID, TOFID int32
		RecurringPrice   float64
		AssigneeUserID   int64
	}
	Attachments []struct {
		AttachmentID                          int32
		AttachmentType, FileName, ContentType string
		Size                                  int64
	}
	Contract *struct {
		ContractID     int32
		ContractNumber string
	}
	Totals tTotals
}

func cents(v float64) int64 { return int64(math.Round(v * 100)) }

// session starts a configuration session.
func (e *env) session(cpqID, customerID int32, opts ...reqOpt) string {
	e.t.Helper()
	var out struct {
		SessionID string
		TOFList   []struct{ ID int32 }
	}
	e.do("POST", path("/v2/cpq/%d/customer/%d/init", cpqID, customerID), nil, opts...).wantStatus(e.t, 200).decode(e.t, &out)
	if out.SessionID == "" || len(out.TOFList) == 0 {
		e.t.Fatalf("init answered no session or TOFs: %+v", out)
	}
	return out.SessionID
}

// newQuote starts a session and creates a quote with one cart of product 102 (Business Mobile 50GB, TOF 11).
func (e *env) newQuote(customerID int32) (string, tQuote) {
	e.t.Helper()
	sid := e.session(1, customerID)
	var q tQuote
	e.do("POST", "/v2/cpq/1/tof/11/addcart", map[string]any{
		"productId": 102, "tofProductId": 1102, "customerId": customerID, "customerQuoteId": 0, "label": "Head office",
	}, withSession(sid)).wantStatus(e.t, 200).decode(e.t, &q)
	return sid, q
}

func path(format string, args ...any) string { return fmt.Sprintf(format, args...) }
