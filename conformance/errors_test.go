package conformance

import (
	"bytes"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/cpqportal/portal/internal/apiclient"
)

// errorChecks runs the error-handling checks (A1, A2, A3, R4). They are safe
// on a deployment: they read, or send bodies that must be refused.
func (s *scenario) errorChecks(t *testing.T) {
	need(t, s.cpqID != 0, "a configurator")

	s.step(t, "404-unknown-customer", func(t *testing.T) {
		mark := s.rec.mark()
		_, err := s.client.Customers.Get(s.ctx(t), math.MaxInt32)
		apiErr := wantAPIError(t, err, apiclient.ErrNotFound, http.StatusNotFound, "NOT_FOUND")
		if apiErr.Endpoint != apiclient.EndpointCustomerGet || apiErr.Path != s.path("/v2/customer/%d", math.MaxInt32) {
			t.Errorf("APIError names endpoint %q path %q", apiErr.Endpoint, apiErr.Path)
		}
		s.expectWire(t, s.sent(t, mark, apiclient.EndpointCustomerGet), wire{
			path: s.path("/v2/customer/%d", math.MaxInt32), status: http.StatusNotFound,
		})
	})

	s.step(t, "400-R4-validproducts-without-X-SessionId", func(t *testing.T) {
		need(t, s.tofID != 0, "a TOF")
		// The client refuses to send it: nothing goes out.
		mark := s.rec.mark()
		_, err := s.client.CPQ.ValidProducts(s.ctx(t), "", s.cpqID, s.tofID)
		if !errors.Is(err, apiclient.ErrNoSessionID) {
			t.Errorf("the client sent call 9 without a session id: %v, want ErrNoSessionID", err)
		}
		if n := len(s.rec.since(mark)); n != 0 {
			t.Errorf("the client sent %d requests for a call it refused", n)
		}
		// On the wire, the service answers 400 SESSION_REQUIRED (A2).
		answer := s.raw(t, http.MethodGet, s.path("/v2/cpq/%d/tof/%d/validproducts", s.cpqID, s.tofID), s.bearer(), nil)
		eb := answer.wantError(t, http.StatusBadRequest, "SESSION_REQUIRED")
		if eb.Path != "" && eb.Path != s.path("/v2/cpq/%d/tof/%d/validproducts", s.cpqID, s.tofID) {
			t.Errorf("error body path %q (A2: the request path)", eb.Path)
		}
	})

	s.step(t, "400-A3-list-with-X-SessionId", func(t *testing.T) {
		need(t, s.sessionID != "", "a configuration session")
		header := s.bearer()
		header["X-SessionId"] = []string{s.sessionID}
		s.raw(t, http.MethodGet, s.path("/v2/cpq/list"), header, nil).wantError(t, http.StatusBadRequest, "SESSION_NOT_ALLOWED")
	})

	s.step(t, "400-A3-toflist-with-X-SessionId", func(t *testing.T) {
		need(t, s.sessionID != "" && s.quoteID != 0, "a configuration session and the quote")
		header := s.bearer()
		header["X-SessionId"] = []string{s.sessionID}
		s.raw(t, http.MethodGet, s.path("/v2/cpq/%d/customer/%d/quote/%d/toflist", s.cpqID, s.customer.ID, s.quoteID), header, nil).
			wantError(t, http.StatusBadRequest, "SESSION_NOT_ALLOWED")
	})

	s.step(t, "200-A3-customer-get-with-X-SessionId", func(t *testing.T) {
		need(t, s.sessionID != "" && s.customer != nil, "a configuration session and the customer")
		header := s.bearer()
		header["X-SessionId"] = []string{s.sessionID}
		answer := s.raw(t, http.MethodGet, s.path("/v2/customer/%d", s.customer.ID), header, nil)
		if answer.status != http.StatusOK {
			t.Errorf("GET customer with X-SessionId answered %d %.200s, want 200 (A3: on 4.2-4.5 neither required nor rejected)",
				answer.status, answer.body)
		}
	})

	s.step(t, "401-without-token", func(t *testing.T) {
		// The client refuses to send without a token.
		mark := s.rec.mark()
		_, err := s.client.CPQ.List(t.Context())
		if !errors.Is(err, apiclient.ErrNoToken) {
			t.Errorf("a call without a token: %v, want ErrNoToken", err)
		}
		if n := len(s.rec.since(mark)); n != 0 {
			t.Errorf("the client sent %d requests without a token", n)
		}
		answer := s.raw(t, http.MethodGet, s.path("/v2/cpq/list"), nil, nil)
		answer.wantError(t, http.StatusUnauthorized, "UNAUTHORIZED")
		if got := answer.header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
			t.Errorf("WWW-Authenticate %q, want Bearer (A1)", got)
		}
		// A malformed scheme is no token either (A1).
		s.raw(t, http.MethodGet, s.path("/v2/cpq/list"), http.Header{"Authorization": {"Basic " + s.target.token}}, nil).
			wantError(t, http.StatusUnauthorized, "UNAUTHORIZED")
	})

	s.step(t, "415-json-body-without-content-type", func(t *testing.T) {
		// A customer the service must refuse whatever it makes of the media
		// type (empty name, bad tax id), so no data is created.
		answer := s.raw(t, http.MethodPost, s.path("/v2/customer"), s.bearer(), []byte(`{"name":"","taxId":"x","segment":"BUSINESS"}`))
		answer.wantError(t, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
	})

	s.step(t, "400-SESSION_INVALID-unknown-session", func(t *testing.T) {
		need(t, s.tofID != 0, "a TOF")
		unknown := "conformance-unknown-session-" + s.runID
		mark := s.rec.mark()
		_, err := s.client.CPQ.ValidProducts(s.ctx(t), unknown, s.cpqID, s.tofID)
		wantAPIError(t, err, apiclient.ErrSessionInvalid, http.StatusBadRequest, apiclient.CodeSessionInvalid)
		s.expectWire(t, s.sent(t, mark, apiclient.EndpointCPQValidProducts), wire{
			path: s.path("/v2/cpq/%d/tof/%d/validproducts", s.cpqID, s.tofID), sessionID: unknown, status: http.StatusBadRequest,
		})
	})

	s.step(t, "422-invalid-customer", func(t *testing.T) {
		mark := s.rec.mark()
		_, err := s.client.Customers.Create(s.ctx(t), apiclient.CustomerInput{Name: "", TaxID: "not a tax id", Segment: "BUSINESS"})
		apiErr := wantAPIError(t, err, apiclient.ErrUnprocessable, http.StatusUnprocessableEntity, "VALIDATION_FAILED")
		if apiErr.FieldMessage("name") == "" || apiErr.FieldMessage("taxId") == "" {
			t.Errorf("fieldErrors %+v, want messages for name and taxId (A2, A8)", apiErr.FieldErrors)
		}
		s.expectWire(t, s.sent(t, mark, apiclient.EndpointCustomerCreate), wire{
			path: s.path("/v2/customer"), body: map[string]any{"name": "", "taxId": "not a tax id", "segment": "BUSINESS"},
			status: http.StatusUnprocessableEntity,
		})
	})

	s.step(t, "422-unknown-attachment-type", func(t *testing.T) {
		need(t, s.quoteID != 0, "the quote")
		data := []byte("conformance: this upload must be refused")
		_, err := s.client.Attachments.Upload(s.ctx(t), s.quoteID, "NOT_A_TYPE", "refused.txt", "text/plain",
			int64(len(data)), bytes.NewReader(data))
		wantAPIError(t, err, apiclient.ErrUnprocessable, http.StatusUnprocessableEntity, "VALIDATION_FAILED")
	})

	s.step(t, "404-contract-number-is-one-segment", func(t *testing.T) {
		const number = "A/../../x"
		mark := s.rec.mark()
		_, err := s.client.Contracts.GetByNumber(s.ctx(t), number)
		apiErr := wantAPIError(t, err, apiclient.ErrNotFound, http.StatusNotFound, "NOT_FOUND")
		ex := s.sent(t, mark, apiclient.EndpointContractGetByNumber)
		want := s.path("/v2/contract/bycontractnumber/A%%2F..%%2F..%%2Fx")
		if ex.url.RawPath != want || ex.url.EscapedPath() != want {
			t.Errorf("sent RawPath %q (escaped %q), want %q: the number must stay one path segment (A7)",
				ex.url.RawPath, ex.url.EscapedPath(), want)
		}
		if s.target.sim != nil && !strings.Contains(apiErr.Message, number) {
			// The simulator names the number it looked up: it routed the
			// request to contract-by-number with the whole number.
			t.Errorf("the simulator's answer %q does not name the contract number %q", apiErr.Message, number)
		}
	})
}
