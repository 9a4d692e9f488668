package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/v2sim"
)

// simEndpointNames maps the client's endpoint names to the names the
// simulator's request log uses. The two packages share no code (STYLE.md 15),
// so the suite holds the correspondence; TestEndpointNameMapping keeps it whole.
var simEndpointNames = map[string]string{
	apiclient.EndpointCPQList:                       "cpq.list",
	apiclient.EndpointCPQInit:                       "cpq.init",
	apiclient.EndpointCPQAddCart:                    "cpq.addcart",
	apiclient.EndpointCPQAddCartToQuote:             "cpq.addcart_existing",
	apiclient.EndpointCPQAddItem:                    "cpq.additem",
	apiclient.EndpointCPQRemoveItem:                 "cpq.removeitem",
	apiclient.EndpointCPQRemoveCart:                 "cpq.removecart",
	apiclient.EndpointCPQQuantity:                   "cpq.quantity",
	apiclient.EndpointCPQValidProducts:              "cpq.validproducts",
	apiclient.EndpointCPQTOFList:                    "cpq.toflist",
	apiclient.EndpointCPQApplicableDiscounts:        "cpq.discounts",
	apiclient.EndpointCPQApplyDiscounts:             "cpq.applydiscounts",
	apiclient.EndpointCPQReprice:                    "cpq.reprice",
	apiclient.EndpointCPQPackageGet:                 "cpq.package.get",
	apiclient.EndpointCPQPackageAdd:                 "cpq.package.add",
	apiclient.EndpointCPQChangePricelist:            "cpq.pricelist",
	apiclient.EndpointAttachmentUpload:              "attachments.upload",
	apiclient.EndpointAttachmentDelete:              "attachments.delete",
	apiclient.EndpointAttachmentDownload:            "attachments.download",
	apiclient.EndpointContractGenerate:              "contracts.generate",
	apiclient.EndpointSignatureCreate:               "signature.request",
	apiclient.EndpointSignatureDelete:               "signature.remove",
	apiclient.EndpointContractGet:                   "contracts.get",
	apiclient.EndpointContractGetByNumber:           "contracts.bynumber",
	apiclient.EndpointContractArchive:               "contracts.archive",
	apiclient.EndpointContractDigitalArchivePayload: "contracts.archivepayload",
	apiclient.EndpointContractValidationAudit:       "contracts.audit",
	apiclient.EndpointContractValidationAuditPDF:    "contracts.auditpdf",
	apiclient.EndpointCustomerGet:                   "customers.get",
	apiclient.EndpointCustomerList:                  "customers.list",
	apiclient.EndpointCustomerSearch:                "customers.onlinesearch",
	apiclient.EndpointCustomerCreate:                "customers.create",
	apiclient.EndpointCustomerUpdate:                "customers.update",
	apiclient.EndpointCustomerOwnersUpdate:          "customers.owners.replace",
	apiclient.EndpointCustomerOwnerAdd:              "customers.owners.add",
	apiclient.EndpointCustomerOwnerChange:           "customers.owners.change",
	apiclient.EndpointCustomerProfileCreate:         "customers.profile.create",
	apiclient.EndpointCustomerProfileDelete:         "customers.profile.delete",
}

// suite is one run of the conformance scenario against one target.
type suite struct {
	target    *target
	prefix    string // escaped path prefix of the base URL
	rec       *recorder
	client    *apiclient.Client
	rawClient *http.Client
	endpoints map[string]apiclient.Endpoint // the suite's reading of the spec (specEndpoints)
	ledger    ledger
	simChecks int // requests compared with the simulator's log
}

func newSuite(t *testing.T) *suite {
	t.Helper()
	tg := selectTarget(t)
	prefix := tg.pathPrefix(t)
	rec := newRecorder(apiclient.NewTransport(), prefix)
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	client, err := apiclient.New(tg.baseURL,
		apiclient.WithHTTPClient(&http.Client{Transport: rec, CheckRedirect: noRedirect}),
		apiclient.WithUserAgent(userAgent))
	if err != nil {
		t.Fatalf("apiclient.New(%q): %v", tg.baseURL, err)
	}
	s := &suite{
		target:    tg,
		prefix:    prefix,
		rec:       rec,
		client:    client,
		rawClient: &http.Client{Transport: rec, CheckRedirect: noRedirect},
		endpoints: map[string]apiclient.Endpoint{},
	}
	for _, ep := range specEndpoints() {
		s.endpoints[ep.Name] = ep
	}
	return s
}

// ctx answers a context carrying the target's token, ended with the test.
func (s *suite) ctx(t *testing.T) context.Context {
	return apiclient.WithToken(t.Context(), s.target.token)
}

// path answers the escaped path a request for an endpoint path must have on
// the wire: the base URL's prefix and the endpoint path.
func (s *suite) path(format string, args ...any) string {
	return s.prefix + fmt.Sprintf(format, args...)
}

// step runs fn as the subtest named name (an endpoint name, or another check)
// and then checks every request fn made: the client's against the header
// rules of the spec, and, on the in-process simulator, against what the
// simulator received. A step named after an endpoint must call it.
func (s *suite) step(t *testing.T, name string, fn func(t *testing.T)) bool {
	t.Helper()
	recMark := s.rec.mark()
	simMark := s.simMark()
	return t.Run(name, func(t *testing.T) {
		defer func() {
			// Also after t.Fatal in fn: the requests made so far are checked.
			exchanges := s.rec.since(recMark)
			if _, isEndpoint := s.endpoints[name]; isEndpoint && !t.Failed() {
				if !slices.ContainsFunc(exchanges, func(ex *exchange) bool { return !ex.raw && ex.endpoint == name }) {
					t.Errorf("the step made no request to %s", name)
				}
			}
			for _, ex := range exchanges {
				if !ex.raw {
					s.checkClientRules(t, ex)
				}
			}
			s.checkSimulatorView(t, simMark, exchanges)
		}()
		fn(t)
	})
}

// simMark answers how many requests the in-process simulator has served
// (0 against a deployment).
func (s *suite) simMark() int {
	if s.target.served == nil {
		return 0
	}
	s.target.served.mu.Lock()
	defer s.target.served.mu.Unlock()
	return s.target.served.n
}

// checkClientRules checks one request of the client against the rules every
// call follows: a known endpoint and its method, the bearer token (spec
// section 5), X-SessionId exactly on calls 3-9 and 11-16 (R4, A3),
// Content-Type application/json only with a JSON body, and only the query
// parameters the endpoint takes.
func (s *suite) checkClientRules(t *testing.T, ex *exchange) {
	t.Helper()
	where := ex.method + " " + ex.url.EscapedPath()
	ep, ok := s.endpoints[ex.endpoint]
	if !ok {
		t.Errorf("%s: the client sent a request that matches no v2 endpoint", where)
		return
	}
	where += " (" + ep.Name + ")"
	if ex.method != ep.Method {
		t.Errorf("%s: method %s, want %s", where, ex.method, ep.Method)
	}
	if got, _ := headerValue(ex.header, "Authorization"); got != "Bearer "+s.target.token {
		t.Errorf("%s: Authorization %q, want %q", where, redact(got, s.target.token), "Bearer <token>")
	}
	sessionIDs := headerValues(ex.header, "X-SessionId")
	switch {
	case ep.Session == apiclient.SessionRequired && (len(sessionIDs) != 1 || sessionIDs[0] == ""):
		t.Errorf("%s: X-SessionId %q, want exactly one non-empty value (rule R4: calls 3-9 and 11-16)", where, sessionIDs)
	case ep.Session != apiclient.SessionRequired && len(sessionIDs) > 0:
		t.Errorf("%s: X-SessionId %q sent, want none (section 5: calls 1, 2 and 10 are made without it; "+
			"sections 4.2-4.5 do not use it)", where, sessionIDs)
	}
	contentType, hasContentType := headerValue(ex.header, "Content-Type")
	body := ex.sentBody()
	mediaType, _, _ := mime.ParseMediaType(contentType)
	switch {
	case ep.Name == apiclient.EndpointAttachmentUpload:
		if mediaType != "multipart/form-data" {
			t.Errorf("%s: Content-Type %q, want multipart/form-data (A6)", where, contentType)
		}
	case len(body) > 0:
		if contentType != "application/json" {
			t.Errorf("%s: Content-Type %q with a body, want application/json (section 5)", where, contentType)
		}
		if !json.Valid(body) {
			t.Errorf("%s: the body is not JSON: %.200q", where, body)
		}
	case hasContentType:
		t.Errorf("%s: Content-Type %q without a body, want none (section 5: only calls with a JSON body carry it)", where, contentType)
	}
	if ex.method == http.MethodGet || ex.method == http.MethodDelete {
		if ex.hasBody || len(body) > 0 {
			t.Errorf("%s: a %s carries a body", where, ex.method)
		}
	}
	for key := range ex.url.Query() {
		if !slices.Contains(ep.Query, key) {
			t.Errorf("%s: query parameter %q, the endpoint takes %q", where, key, ep.Query)
		}
	}
}

// checkSimulatorView compares what the client sent with what the in-process
// simulator received, request by request: method, request URI (escaped path
// and query), the spec's headers, the JSON body, the endpoint it routed to
// and the status it answered.
func (s *suite) checkSimulatorView(t *testing.T, simMark int, exchanges []*exchange) {
	t.Helper()
	if s.target.sim == nil {
		return
	}
	for _, ex := range exchanges {
		if ex.err != nil {
			t.Errorf("%s %s: no answer (%v): the simulator view cannot be compared", ex.method, ex.url.EscapedPath(), ex.err)
			return
		}
	}
	want := simMark + len(exchanges)
	if got := s.target.served.waitFor(want); got != want {
		t.Errorf("the simulator served %d requests during the step, the client sent %d", got-simMark, len(exchanges))
		return
	}
	all := s.target.sim.Requests()
	if len(all) != want {
		t.Errorf("the simulator's log holds %d requests, want %d", len(all), want)
		return
	}
	for i, got := range all[simMark:] {
		s.compareWithSimulator(t, exchanges[i], got)
		s.simChecks++
	}
}

func (s *suite) compareWithSimulator(t *testing.T, ex *exchange, got v2sim.RecordedRequest) {
	t.Helper()
	where := ex.method + " " + ex.url.EscapedPath()
	if got.Method != ex.method {
		t.Errorf("%s: the simulator received method %s", where, got.Method)
	}
	if got.EscapedPath != ex.url.EscapedPath() {
		t.Errorf("%s: the simulator received path %s", where, got.EscapedPath)
	}
	if got.RequestURI != ex.url.RequestURI() {
		t.Errorf("%s: the simulator received request URI %s, the client sent %s", where, got.RequestURI, ex.url.RequestURI())
	}
	for _, name := range []string{"Authorization", "Content-Type", "X-SessionId", "Accept", "If-None-Match", "User-Agent"} {
		sent, received := headerValues(ex.header, name), headerValues(got.Header, name)
		if !slices.Equal(sent, received) {
			t.Errorf("%s: header %s: the client sent %q, the simulator received %q", where, name,
				redactAll(sent, s.target.token), redactAll(received, s.target.token))
		}
	}
	contentType, _ := headerValue(ex.header, "Content-Type")
	// The simulator keeps no copy of uploads (binary, possibly large).
	if mt, _, _ := mime.ParseMediaType(contentType); mt != "multipart/form-data" {
		if sent := ex.sentBody(); !bytes.Equal([]byte(got.Body), sent[:min(len(sent), 4<<10)]) {
			t.Errorf("%s: body: the client sent %.300q, the simulator received %.300q", where, sent, got.Body)
		}
	}
	wantEndpoint := ""
	if ex.endpoint != "" {
		wantEndpoint = simEndpointNames[ex.endpoint]
	}
	if got.Endpoint != wantEndpoint {
		t.Errorf("%s: the client's table names endpoint %q (simulator name %q), the simulator routed it to %q",
			where, ex.endpoint, wantEndpoint, got.Endpoint)
	}
	if got.Status != ex.status {
		t.Errorf("%s: the simulator answered %d, the client received %d", where, got.Status, ex.status)
	}
}

// sent answers the single request of the step to endpoint (failing when
// there is not exactly one), for assertions about what was sent.
func (s *suite) sent(t *testing.T, mark int, endpoint string) *exchange {
	t.Helper()
	all := s.sentAll(t, mark, endpoint)
	if len(all) != 1 {
		t.Fatalf("%d requests to %s since the mark, want 1", len(all), endpoint)
	}
	return all[0]
}

// sentAll answers the client's requests to endpoint since mark.
func (s *suite) sentAll(t *testing.T, mark int, endpoint string) []*exchange {
	t.Helper()
	var out []*exchange
	for _, ex := range s.rec.since(mark) {
		if !ex.raw && ex.endpoint == endpoint {
			out = append(out, ex)
		}
	}
	return out
}

// wire is what one request must look like beyond the common rules.
type wire struct {
	path      string     // escaped path, with the base URL's prefix
	query     url.Values // exact query; nil for none
	sessionID string     // the X-SessionId value; "" for none
	// body is the JSON body as a Go value compared after a JSON round trip;
	// nil for no body at all. emptyBody is a POST without a body
	// (Content-Length: 0, A3 init, A7 generate, A8 owner add).
	body      any
	emptyBody bool
	accept    string // "" to skip
	status    int    // the answer's status
}

// expectWire checks one request of the client against w.
func (s *suite) expectWire(t *testing.T, ex *exchange, w wire) {
	t.Helper()
	where := ex.method + " " + ex.url.EscapedPath() + " (" + ex.endpoint + ")"
	if got := ex.url.EscapedPath(); got != w.path {
		t.Errorf("%s: escaped path %s, want %s", where, got, w.path)
	}
	gotQuery := ex.url.Query()
	if len(gotQuery) == 0 {
		gotQuery = nil
	}
	if !reflect.DeepEqual(gotQuery, w.query) {
		t.Errorf("%s: query %q, want %q", where, ex.url.RawQuery, w.query.Encode())
	}
	got, present := headerValue(ex.header, "X-SessionId")
	if got != w.sessionID || present != (w.sessionID != "") {
		t.Errorf("%s: X-SessionId %q (present %v), want %q", where, got, present, w.sessionID)
	}
	body := ex.sentBody()
	switch {
	case w.body != nil:
		equalJSON(t, where+": body", body, w.body)
	case w.emptyBody:
		if len(body) != 0 {
			t.Errorf("%s: body %.200q, want an empty body", where, body)
		}
	default:
		if ex.hasBody || len(body) > 0 {
			t.Errorf("%s: body %.200q, want none", where, body)
		}
	}
	if w.accept != "" {
		if got, _ := headerValue(ex.header, "Accept"); got != w.accept {
			t.Errorf("%s: Accept %q, want %q", where, got, w.accept)
		}
	}
	if ex.status != w.status {
		t.Errorf("%s: answered %d, want %d", where, ex.status, w.status)
	}
}

// equalJSON compares JSON bytes with a Go value, both after a JSON round
// trip (so numbers, key order and spacing do not matter).
func equalJSON(t *testing.T, what string, got []byte, want any) {
	t.Helper()
	wantBytes, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("%s: encoding the expected JSON: %v", what, err)
	}
	var gotValue, wantValue any
	if err := json.Unmarshal(got, &gotValue); err != nil {
		t.Errorf("%s: not JSON (%v): %.300q", what, err, got)
		return
	}
	if err := json.Unmarshal(wantBytes, &wantValue); err != nil {
		t.Fatalf("%s: decoding the expected JSON: %v", what, err)
	}
	if !reflect.DeepEqual(gotValue, wantValue) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, wantBytes)
	}
}

// errorBody is the A2 error body.
type errorBody struct {
	Status      int    `json:"status"`
	Code        string `json:"code"`
	Message     string `json:"message"`
	Path        string `json:"path"`
	FieldErrors []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"fieldErrors"`
}

// rawAnswer is the answer to a raw request.
type rawAnswer struct {
	status int
	header http.Header
	body   []byte
}

// raw sends a request by hand, for protocol checks the client refuses to make
// (no X-SessionId, no token, no Content-Type). header is sent as given: no
// Authorization unless it is in there.
func (s *suite) raw(t *testing.T, method, path string, header http.Header, body []byte) rawAnswer {
	t.Helper()
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(withRaw(t.Context()), method, s.target.baseURL+path, reader)
	if err != nil {
		t.Fatalf("raw %s %s: %v", method, path, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := s.rawClient.Do(req)
	if err != nil {
		t.Fatalf("raw %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatalf("raw %s %s: reading the answer: %v", method, path, err)
	}
	return rawAnswer{status: resp.StatusCode, header: resp.Header, body: data}
}

// bearer answers the Authorization header of the target's token.
func (s *suite) bearer() http.Header {
	return http.Header{"Authorization": {"Bearer " + s.target.token}}
}

// wantError checks a raw answer is the A2 error body with that status and code.
func (a rawAnswer) wantError(t *testing.T, status int, code string) errorBody {
	t.Helper()
	if a.status != status {
		t.Errorf("status %d, want %d; body %.300q", a.status, status, a.body)
	}
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("error answer Content-Type %q, want application/json (A2)", ct)
	}
	var eb errorBody
	if err := json.Unmarshal(a.body, &eb); err != nil {
		t.Errorf("error body is not the A2 JSON (%v): %.300q", err, a.body)
		return eb
	}
	if eb.Status != status || eb.Code != code || eb.Message == "" {
		t.Errorf("error body status %d code %q message %q, want status %d code %q and a message (A2)",
			eb.Status, eb.Code, eb.Message, status, code)
	}
	return eb
}

// wantAPIError checks err is an *apiclient.APIError with that status and code.
func wantAPIError(t *testing.T, err error, sentinel error, status int, code string) *apiclient.APIError {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %d %s", status, code)
	}
	apiErr, ok := errors.AsType[*apiclient.APIError](err)
	if !ok {
		t.Fatalf("error %v (%T), want an *apiclient.APIError %d %s", err, err, status, code)
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("errors.Is(%v, %v) is false", err, sentinel)
	}
	if apiErr.Status != status || apiErr.Code != code {
		t.Errorf("APIError status %d code %q, want %d %q (A2): %v", apiErr.Status, apiErr.Code, status, code, err)
	}
	return apiErr
}

// redact hides the token in a header value for failure messages.
func redact(v, token string) string {
	if token == "" {
		return v
	}
	return strings.ReplaceAll(v, token, "<token>")
}

func redactAll(vs []string, token string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = redact(v, token)
	}
	return out
}
