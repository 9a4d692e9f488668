package handlers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/v2sim"
)

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassify(t *testing.T) {
	t.Parallel()
	apiErr := func(status int, code, msg string) error {
		return fmt.Errorf("apiclient: customers.get: %w", &apiclient.APIError{Status: status, Code: code, Message: msg})
	}
	refused := &url.Error{Op: "Get", URL: "http://127.0.0.1:1/v2", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		name        string
		err         error
		wantStatus  int
		wantTitle   string
		wantMessage string // substring
	}{
		{"our own validation", badRequest("error.path_param", "customerId", 9), 400, "The request is not valid", "customerId must be a whole number from 1 to 9"},
		{"body too large", fmt.Errorf("parse: %w", &http.MaxBytesError{Limit: 1 << 20}), 413, "Too large", "1 MiB"},
		{"session store down (a refused connection is not the CPQ service)", fmt.Errorf("%w: list sessions: %w", auth.ErrSessionStoreUnavailable, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), 503, "Service unavailable", "Your sessions cannot be read"},
		{"v2 400", apiErr(400, "BAD_REQUEST", "quantity must be a number"), 400, "The CPQ service refused the request", "quantity must be a number"},
		{"v2 session expired", apiErr(400, apiclient.CodeSessionInvalid, "unknown session"), 400, "The quote was left idle too long", "Open it again to continue"},
		{"v2 403", apiErr(403, "FORBIDDEN", ""), 403, "Not allowed", "not allowed"},
		{"v2 404", apiErr(404, "NOT_FOUND", "customer 17 not found"), 404, "Not found", "customer 17 not found"},
		{"v2 409", apiErr(409, "CONFLICT", "an active signature request exists"), 409, "Conflict", "an active signature request exists"},
		{"v2 413", apiErr(413, "PAYLOAD_TOO_LARGE", ""), 413, "Too large", "too large"},
		{"v2 422", fmt.Errorf("x: %w", &apiclient.APIError{Status: 422, Message: "validation failed",
			FieldErrors: []apiclient.FieldError{{Field: "taxId", Message: "must look like IT01234567890"}}}), 422, "The CPQ service did not accept the data", "taxId: must look like IT01234567890"},
		{"v2 415 (our mistake)", apiErr(415, "UNSUPPORTED_MEDIA_TYPE", ""), 502, "The CPQ service answered with an error", "(415)"},
		{"v2 500", apiErr(500, "INTERNAL", "db down"), 502, "The CPQ service answered with an error", "(500)"},
		{"v2 503", apiErr(503, "", ""), 502, "The CPQ service answered with an error", "(503)"},
		{"v2 504", apiErr(504, "", ""), 504, "The CPQ service is not answering", "in time"},
		{"malformed answer", fmt.Errorf("apiclient: GET /v2/customer/1: %w", apiclient.ErrMalformedResponse), 502, "The CPQ service answered with an error", "cannot read"},
		{"answer too large", fmt.Errorf("x: %w", apiclient.ErrResponseTooLarge), 502, "The CPQ service answered with an error", "cannot read"},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), 504, "The CPQ service is not answering", "in time"},
		{"net timeout", &url.Error{Op: "Get", URL: "http://x", Err: timeoutErr{}}, 504, "The CPQ service is not answering", "in time"},
		{"connection refused", fmt.Errorf("apiclient: %w", refused), 502, "The CPQ service is not answering", "cannot reach"},
		{"dns", &net.DNSError{Err: "no such host", Name: "cpq.invalid"}, 502, "The CPQ service is not answering", "cannot reach"},
		{"invalid parameter", fmt.Errorf("x: %w", apiclient.ErrInvalidParameter), 400, "The request is not valid", "not valid"},
		{"anything else", errors.New("nil map write"), 500, "Something went wrong", "request id"},
	}
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	en := bundle.Translator(i18n.Source)
	for _, tt := range tests {
		f := classify(tt.err)
		title, message := f.title.In(en), f.message.In(en)
		if f.status != tt.wantStatus || title != tt.wantTitle || !strings.Contains(message, tt.wantMessage) {
			t.Errorf("%s: got %d %q %q; want %d %q containing %q", tt.name, f.status, title, message, tt.wantStatus, tt.wantTitle, tt.wantMessage)
		}
		if strings.Contains(message, "nil map") || strings.Contains(message, "db down") {
			t.Errorf("%s: internal detail in the user's message: %q", tt.name, message)
		}
	}
}

func TestFieldErrorsFrom(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("create: %w", &apiclient.APIError{Status: 422, FieldErrors: []apiclient.FieldError{
		{Field: "taxId", Message: "first"}, {Field: "taxId", Message: "second"}, {Field: "name", Message: "required"},
	}})
	got := fieldErrorsFrom(err)
	if len(got) != 2 || got["taxId"] != "first" || got["name"] != "required" {
		t.Errorf("fieldErrorsFrom = %v", got)
	}
	if fieldErrorsFrom(errors.New("plain")) != nil || fieldErrorsFrom(&apiclient.APIError{Status: 404}) != nil {
		t.Error("errors without field errors must give nil")
	}
}

// customerRoute is a handler like the real pages: parse the id, call the v2 API, fail or answer.
func customerRoute(h *Handler, r *gin.Engine) {
	r.GET("/test/customers/:customerId", h.auth.RequireLogin(), func(c *gin.Context) {
		id, err := parseInt32ID(c, "customerId")
		if err != nil {
			h.fail(c, err)
			return
		}
		customer, err := h.api.Customers.Get(h.apiContext(c), id)
		if err != nil {
			h.fail(c, err)
			return
		}
		c.String(http.StatusOK, "customer: %s", customer.Name)
	})
	r.POST("/test/customers", h.auth.RequireLogin(), func(c *gin.Context) {
		_, err := h.api.Customers.Create(h.apiContext(c), apiclient.CustomerInput{Name: c.PostForm("name"), TaxID: "bad", Segment: "BUSINESS"})
		if fields := fieldErrorsFrom(err); fields != nil {
			c.String(http.StatusUnprocessableEntity, "taxId=%s", fields["taxId"])
			return
		}
		if err != nil {
			h.fail(c, err)
			return
		}
		c.String(http.StatusCreated, "created")
	})
	r.GET("/test/conflict", func(c *gin.Context) {
		h.fail(c, &apiclient.APIError{Status: 409, Message: `<script>alert(1)</script> already exists`})
	})
}

func TestErrorEdgeAgainstTheSimulator(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{v2Timeout: 500 * time.Millisecond, extraRoute: customerRoute})
	user := p.login(t, "sales", "sales-demo")

	ok := p.get(t, user, "/test/customers/1", nil)
	if ok.StatusCode != 200 || !strings.HasPrefix(ok.body, "customer: ") {
		t.Fatalf("existing customer: %d %q", ok.StatusCode, ok.body)
	}
	// The request id and the user's token travel to the v2 API.
	reqs := p.sim.Requests()
	last := reqs[len(reqs)-1]
	if last.Header.Get("X-Request-Id") != ok.Header.Get("X-Request-Id") {
		t.Errorf("v2 got X-Request-Id %q, portal answered %q", last.Header.Get("X-Request-Id"), ok.Header.Get("X-Request-Id"))
	}
	if !strings.HasPrefix(last.Header.Get("Authorization"), "Bearer ey") {
		t.Errorf("v2 got Authorization %q, want the user's JWT", last.Header.Get("Authorization"))
	}

	t.Run("bad ids never reach the v2 API", func(t *testing.T) {
		before := len(p.sim.Requests())
		for _, bad := range []string{"abc", "0", "-1", "2147483648", "1e3", "%2B7", "99999999999999999999"} {
			resp := p.get(t, user, "/test/customers/"+bad, nil)
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("id %q: status %d, want 400", bad, resp.StatusCode)
			}
		}
		if after := len(p.sim.Requests()); after != before {
			t.Errorf("%d v2 calls were made for malformed ids", after-before)
		}
	})

	t.Run("404 page and toast", func(t *testing.T) {
		page := p.get(t, user, "/test/customers/99999", nil)
		doc := parseHTML(t, page.body)
		if page.StatusCode != 404 || doc.Find(`[data-testid="error-page"]`).AttrOr("data-status", "") != "404" {
			t.Fatalf("status %d, page:\n%s", page.StatusCode, page.body)
		}
		if doc.Find(`[data-testid="error-request-id"]`).Text() != page.Header.Get("X-Request-Id") {
			t.Error("error page does not show the request id")
		}
		if doc.Find(`[data-testid="error-back"]`).AttrOr("href", "") == "" {
			t.Error("404 page offers no way back")
		}
		if doc.Find(`[data-testid="main-nav"]`).Length() != 1 {
			t.Error("error page is not inside the layout with navigation")
		}

		toast := p.get(t, user, "/test/customers/99999", htmx)
		if toast.StatusCode != 404 || toast.Header.Get("HX-Retarget") != "#toasts" || toast.Header.Get("HX-Reswap") != "beforeend" {
			t.Errorf("htmx: status %d, HX-Retarget %q, HX-Reswap %q", toast.StatusCode, toast.Header.Get("HX-Retarget"), toast.Header.Get("HX-Reswap"))
		}
		tdoc := parseHTML(t, toast.body)
		if tdoc.Find(`[hx-swap-oob="beforeend:#toasts"] [data-testid="toast"][data-level="error"]`).Length() != 1 {
			t.Errorf("htmx: no error toast fragment:\n%s", toast.body)
		}
		if tdoc.Find("header, main").Length() != 0 || strings.Contains(toast.body, "<html") {
			t.Error("htmx error answer must be a fragment, not a page")
		}
	})

	t.Run("v2 failures become 502 and 504", func(t *testing.T) {
		cases := []struct {
			fault v2sim.Fault
			want  int
			text  string
		}{
			{v2sim.Fault{Status: 500, Times: 1}, 502, "answered with an error"},
			{v2sim.Fault{Malformed: true, Times: 1}, 502, "cannot read"},
			{v2sim.Fault{WrongContentType: true, Times: 1}, 502, "cannot read"},
			{v2sim.Fault{Hang: true, Times: 1}, 504, "did not answer in time"},
		}
		for _, tc := range cases {
			p.sim.SetFault("customers.get", tc.fault)
			resp := p.get(t, user, "/test/customers/1", nil)
			if resp.StatusCode != tc.want || !strings.Contains(resp.body, tc.text) {
				t.Errorf("fault %+v: status %d, want %d with %q", tc.fault, resp.StatusCode, tc.want, tc.text)
			}
			if !strings.Contains(resp.body, resp.Header.Get("X-Request-Id")) {
				t.Errorf("fault %+v: the answer does not show the request id", tc.fault)
			}
		}
		p.sim.ClearFaults()
	})

	t.Run("field errors for forms", func(t *testing.T) {
		resp := p.do(t, user, http.MethodPost, "/test/customers", strings.NewReader("name=Acme"),
			map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": p.URL})
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.HasPrefix(resp.body, "taxId=") || resp.body == "taxId=" {
			t.Errorf("422 with field errors: %d %q", resp.StatusCode, resp.body)
		}
	})

	t.Run("API messages are escaped", func(t *testing.T) {
		for _, hdr := range []map[string]string{nil, htmx} {
			resp := p.get(t, user, "/test/conflict", hdr)
			if resp.StatusCode != 409 {
				t.Errorf("status %d, want 409", resp.StatusCode)
			}
			if strings.Contains(resp.body, "<script>alert(1)") {
				t.Errorf("API message not escaped:\n%s", resp.body)
			}
			if !strings.Contains(parseHTML(t, resp.body).Text(), "<script>alert(1)</script> already exists") {
				t.Error("API message not shown as text")
			}
		}
	})
}

func TestUnauthorizedFromV2RenewsSignIn(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{extraRoute: customerRoute})
	user := p.login(t, "sales", "sales-demo")
	tokenOf := func(i int) string { return p.sim.Requests()[i].Header.Get("Authorization") }

	// One 401: the token is renewed and the page loaded again with the new token.
	p.sim.SetFault("customers.get", v2sim.Fault{Status: 401, Times: 1})
	first := p.get(t, user, "/test/customers/1?tab=owners", nil)
	if first.StatusCode != http.StatusSeeOther {
		t.Fatalf("after a 401: status %d, want 303:\n%s", first.StatusCode, first.body)
	}
	loc := first.Header.Get("Location")
	if loc != "/test/customers/1?renewed=1&tab=owners" {
		t.Errorf("Location = %q, want the same page marked renewed", loc)
	}
	refused := len(p.sim.Requests()) - 1
	second := p.get(t, user, loc, nil)
	if second.StatusCode != 200 {
		t.Fatalf("reload after renewal: %d %s", second.StatusCode, second.body)
	}
	if tokenOf(refused) == tokenOf(len(p.sim.Requests())-1) {
		t.Error("the reload used the refused token; want a renewed one")
	}

	// Refused again after renewal: no loop, an explanation.
	p.sim.SetFault("customers.get", v2sim.Fault{Status: 401})
	again := p.get(t, user, "/test/customers/1?renewed=1", nil)
	if again.StatusCode != http.StatusUnauthorized || !strings.Contains(again.body, "even after renewing") {
		t.Errorf("second refusal: status %d:\n%s", again.StatusCode, again.body)
	}

	// htmx: renewed, and the user is asked to repeat (never repeated for them).
	toast := p.get(t, user, "/test/customers/1", htmx)
	if toast.StatusCode != http.StatusUnauthorized || toast.Header.Get("HX-Retarget") != "#toasts" || !strings.Contains(toast.body, "repeat your last action") {
		t.Errorf("htmx 401: status %d, retarget %q:\n%s", toast.StatusCode, toast.Header.Get("HX-Retarget"), toast.body)
	}
	p.sim.ClearFaults()
}

func TestUnreachableV2(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{v2URL: closedURL(t), extraRoute: customerRoute})
	user := p.login(t, "sales", "sales-demo")
	resp := p.get(t, user, "/test/customers/1", nil)
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(resp.body, "cannot reach the CPQ service") {
		t.Errorf("status %d:\n%s", resp.StatusCode, resp.body)
	}
	if !strings.Contains(p.logs.String(), "connection refused") {
		t.Error("the cause was not logged")
	}
}
