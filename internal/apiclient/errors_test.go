package apiclient

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

var allSentinels = map[string]error{
	"ErrBadRequest": ErrBadRequest, "ErrUnauthorized": ErrUnauthorized, "ErrForbidden": ErrForbidden,
	"ErrNotFound": ErrNotFound, "ErrConflict": ErrConflict, "ErrPayloadTooLarge": ErrPayloadTooLarge,
	"ErrUnsupportedMediaType": ErrUnsupportedMediaType, "ErrUnprocessable": ErrUnprocessable,
	"ErrServer": ErrServer, "ErrSessionInvalid": ErrSessionInvalid,
}

func TestAPIErrorMapping(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status      int
		code        string
		contentType string
		body        string
		want        []string // sentinels that must match; all others must not
	}{
		{400, "BAD_REQUEST", "", "", []string{"ErrBadRequest"}},
		{400, "SESSION_INVALID", "", "", []string{"ErrBadRequest", "ErrSessionInvalid"}},
		{401, "UNAUTHORIZED", "", "", []string{"ErrUnauthorized"}},
		{403, "FORBIDDEN", "", "", []string{"ErrForbidden"}},
		{404, "NOT_FOUND", "", "", []string{"ErrNotFound"}},
		{409, "CONFLICT", "", "", []string{"ErrConflict"}},
		{413, "PAYLOAD_TOO_LARGE", "", "", []string{"ErrPayloadTooLarge"}},
		{415, "UNSUPPORTED_MEDIA_TYPE", "", "", []string{"ErrUnsupportedMediaType"}},
		{422, "VALIDATION_FAILED", "", "", []string{"ErrUnprocessable"}},
		{500, "INTERNAL", "", "", []string{"ErrServer"}},
		{503, "UNAVAILABLE", "", "", []string{"ErrServer"}},
		// A proxy's HTML page: no code, still classified by status.
		{502, "", "text/html", "<html><body>Bad Gateway</body></html>", []string{"ErrServer"}},
		// SESSION_INVALID only means an expired session on a 400.
		{404, "SESSION_INVALID", "", "", []string{"ErrNotFound"}},
	} {
		t.Run(fmt.Sprintf("%d %s", tc.status, tc.code), func(t *testing.T) {
			t.Parallel()
			client, f := setup(t)
			body := tc.body
			if body == "" {
				body = fmt.Sprintf(`{"status": %d, "code": %q, "message": "customer 17 says no", "path": "/v2/customer/17",
					"fieldErrors": [{"field": "taxId", "message": "must look like IT01234567890"}]}`, tc.status, tc.code)
			}
			f.handle("GET /v2/customer/17", func(w http.ResponseWriter, r *http.Request) {
				ct := tc.contentType
				if ct == "" {
					ct = "application/json"
				}
				w.Header().Set("Content-Type", ct)
				w.Header().Set("X-Request-Id", "req-1")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(body))
			})
			_, err := client.Customers.Get(authCtx(t), 17)
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v (%T), want *APIError", err, err)
			}
			if apiErr.Method != "GET" || apiErr.Endpoint != EndpointCustomerGet || apiErr.Path != "/v2/customer/17" ||
				apiErr.Status != tc.status || apiErr.Code != tc.code || apiErr.RequestID != "req-1" || apiErr.Body != body {
				t.Errorf("APIError = %+v", apiErr)
			}
			if tc.code != "" && (apiErr.Message != "customer 17 says no" || apiErr.FieldMessage("taxId") != "must look like IT01234567890") {
				t.Errorf("message %q, field errors %+v", apiErr.Message, apiErr.FieldErrors)
			}
			msg := err.Error()
			if !strings.Contains(msg, "GET /v2/customer/17") || !strings.Contains(msg, fmt.Sprint(tc.status)) || !strings.Contains(msg, "customers.get") {
				t.Errorf("Error() = %q, want method, path, endpoint and status", msg)
			}
			for name, sentinel := range allSentinels {
				want := false
				for _, w := range tc.want {
					want = want || w == name
				}
				if errors.Is(err, sentinel) != want {
					t.Errorf("errors.Is(err, %s) = %v, want %v", name, !want, want)
				}
			}
			if n := f.hits.Load(); n != 1 {
				t.Errorf("%d requests, want 1 (an HTTP error is not retried)", n)
			}
		})
	}
}

// An error body is kept as an excerpt of at most 4 KiB, cut on a character
// boundary.
func TestAPIErrorBodyIsBounded(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	big := strings.Repeat("é", 10_000) // 20,000 bytes
	f.handle("POST /v2/customer", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 500, `{"code": "INTERNAL", "message": "`+big+`"}`)
	})
	_, err := client.Customers.Create(authCtx(t), CustomerInput{Name: "x"})
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v", err)
	}
	if len(apiErr.Body) > 4096 || len(apiErr.Body) < 4090 || !utf8.ValidString(apiErr.Body) || !strings.HasPrefix(apiErr.Body, `{"code": "INTERNAL"`) {
		t.Errorf("Body excerpt: %d bytes, valid UTF-8 %v", len(apiErr.Body), utf8.ValidString(apiErr.Body))
	}
	if apiErr.Code != "INTERNAL" || apiErr.Message != big {
		t.Errorf("code %q, message of %d bytes: the error body up to 64 KiB should still be parsed", apiErr.Code, len(apiErr.Message))
	}
	if !errors.Is(err, ErrServer) {
		t.Errorf("errors.Is(err, ErrServer) = false")
	}
}

// A 2xx answer that is not the promised JSON is ErrMalformedResponse naming
// the endpoint, never a panic or a half-filled document.
func TestMalformedResponses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		body string
	}{
		{"not JSON", `<html>oops</html>`},
		{"cut short", `{"id": 17, "name": "Ros`},
		{"empty", ``},
		{"array for object", `[{"id": 17}]`},
		{"null", `null`},
		{"two documents", `{"id": 17} {"id": 18}`},
		{"trailing garbage", `{"id": 17} xyz`},
		{"wrong type", `{"id": "seventeen"}`},
		{"id out of int32", `{"id": 3000000000}`},
		{"bad time", `{"id": 17, "createdAt": "yesterday"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			client, f := setup(t)
			f.handle("GET /v2/customer/17", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, tc.body)
			})
			got, err := client.Customers.Get(authCtx(t), 17)
			if !errors.Is(err, ErrMalformedResponse) || got != nil {
				t.Fatalf("Get = %+v, err %v; want ErrMalformedResponse", got, err)
			}
			if !strings.Contains(err.Error(), EndpointCustomerGet) {
				t.Errorf("error %q does not name the endpoint", err)
			}
		})
	}
}

func TestMalformedArrays(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	body := ""
	f.handle("GET /v2/cpq/list", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, body) })
	f.handle("GET /v2/customer/", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, body) })
	ctx := authCtx(t)
	for _, b := range []string{`{"id": 1}`, `[{"id": 1}, oops]`, `[{"id": 1}`, ``, `[] []`, `[{"id": "x"}]`, `null`} {
		body = b
		if _, err := client.CPQ.List(ctx); !errors.Is(err, ErrMalformedResponse) {
			t.Errorf("CPQ.List of %q: err = %v", b, err)
		}
		customers, _, _, err := client.Customers.List(ctx, "")
		if !errors.Is(err, ErrMalformedResponse) || customers != nil {
			t.Errorf("Customers.List of %q: %d customers, err = %v", b, len(customers), err)
		}
	}
}

func TestResponseTooLarge(t *testing.T) {
	t.Parallel()
	client, f := setup(t, WithMaxResponseBytes(1024))
	f.handle("GET /v2/customer/17", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"id": 17, "name": "`+strings.Repeat("x", 2000)+`"}`)
	})
	f.handle("GET /v2/customer/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `[`+strings.Repeat(`{"id": 17},`, 200)+`{"id": 18}]`)
	})
	f.handle("GET /v2/customer/18", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"id": 18, "name": "`+strings.Repeat("x", 1024-len(`{"id": 18, "name": ""}`))+`"}`)
	})
	ctx := authCtx(t)
	if _, err := client.Customers.Get(ctx, 17); !errors.Is(err, ErrResponseTooLarge) {
		t.Errorf("Get: err = %v, want ErrResponseTooLarge", err)
	}
	if _, _, _, err := client.Customers.List(ctx, ""); !errors.Is(err, ErrResponseTooLarge) {
		t.Errorf("List: err = %v, want ErrResponseTooLarge", err)
	}
	if c, err := client.Customers.Get(ctx, 18); err != nil || c.ID != 18 {
		t.Errorf("Get of exactly the limit: %v", err)
	}
}

// Missing fields are left zero and unknown ones ignored.
func TestTolerantDecoding(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("GET /v2/contract/42", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"contractId": 42, "future": {"deeply": [1, {"nested": true}]}, "status": "NEW_STATE"}`)
	})
	got, err := client.Contracts.Get(authCtx(t), 42)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.ContractID != 42 || got.Status != "NEW_STATE" || got.ContractNumber != "" || got.SignatureRequests != nil ||
		!strings.Contains(string(got.Raw), "deeply") {
		t.Errorf("Get = %+v", got)
	}
}
