package apiclient

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
)

const (
	testToken     = "token-of-sam"
	testSessionID = "cpq-session-7f3a"
	testUserAgent = "cpq-portal/test"
)

// fixture is one test's v2 service: an httptest server whose routes are keyed
// by method and ESCAPED path, so a test sees exactly what was sent.
type fixture struct {
	t      *testing.T
	server *httptest.Server
	mu     sync.Mutex
	routes map[string]http.HandlerFunc
	hits   atomic.Int64
}

// setup starts a server for one test and a client pointed at it.
func setup(t *testing.T, opts ...Option) (*Client, *fixture) {
	t.Helper()
	f := &fixture{t: t, routes: map[string]http.HandlerFunc{}}
	f.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.hits.Add(1)
		key := r.Method + " " + r.URL.EscapedPath()
		f.mu.Lock()
		h := f.routes[key]
		f.mu.Unlock()
		if h == nil {
			t.Errorf("unexpected request %s (request URI %s)", key, r.RequestURI)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"status":404,"code":"NOT_FOUND","message":"no route in test"}`)
			return
		}
		h(w, r)
	}))
	t.Cleanup(f.server.Close)
	c, err := New(f.server.URL, append([]Option{WithUserAgent(testUserAgent)}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c, f
}

// handle registers h for "METHOD /escaped/path".
func (f *fixture) handle(route string, h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.routes[route] = h
}

// authCtx is a context carrying the test token.
func authCtx(t *testing.T) context.Context {
	return WithToken(t.Context(), testToken)
}

// testCommon checks what every request carries: method, bearer token,
// user agent and the X-SessionId rule (wantSession: sent with testSessionID,
// else absent).
func testCommon(t *testing.T, r *http.Request, method string, wantSession bool) {
	t.Helper()
	if r.Method != method {
		t.Errorf("method = %s, want %s", r.Method, method)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testToken {
		t.Errorf("Authorization = %q, want %q", got, "Bearer "+testToken)
	}
	if got := r.Header.Get("User-Agent"); got != testUserAgent {
		t.Errorf("User-Agent = %q, want %q", got, testUserAgent)
	}
	got, present := r.Header["X-Sessionid"]
	switch {
	case wantSession && (!present || len(got) != 1 || got[0] != testSessionID):
		t.Errorf("X-SessionId = %q, want %q", got, testSessionID)
	case !wantSession && present:
		t.Errorf("X-SessionId = %q sent, want none (R4)", got)
	}
}

// testAccept checks the Accept header.
func testAccept(t *testing.T, r *http.Request, want string) {
	t.Helper()
	if got := r.Header.Get("Accept"); got != want {
		t.Errorf("Accept = %q, want %q", got, want)
	}
}

// testQuery checks the whole query string.
func testQuery(t *testing.T, r *http.Request, want map[string]string) {
	t.Helper()
	q := r.URL.Query()
	if len(q) != len(want) {
		t.Errorf("query = %v, want %v", q, want)
	}
	for k, v := range want {
		if got := q[k]; len(got) != 1 || got[0] != v {
			t.Errorf("query %s = %q, want %q", k, got, v)
		}
	}
}

// testJSONBody checks Content-Type: application/json and that the body is
// the JSON value want (same keys, same values).
func testJSONBody(t *testing.T, r *http.Request, want string) {
	t.Helper()
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", got)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	if int64(len(body)) != r.ContentLength {
		t.Errorf("Content-Length = %d, body has %d bytes", r.ContentLength, len(body))
	}
	var got, exp any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("body %q is not JSON: %v", body, err)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatalf("bad want JSON %q: %v", want, err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("body = %s, want %s", body, want)
	}
}

// testNoBody checks that no body and no Content-Type were sent (a POST or
// PUT carries Content-Length: 0).
func testNoBody(t *testing.T, r *http.Request) {
	t.Helper()
	if got, ok := r.Header["Content-Type"]; ok {
		t.Errorf("Content-Type = %q sent without a JSON body", got)
	}
	body, _ := io.ReadAll(r.Body)
	if len(body) != 0 {
		t.Errorf("body = %q, want none", body)
	}
	if r.ContentLength != 0 {
		t.Errorf("Content-Length = %d, want 0", r.ContentLength)
	}
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		if got := r.Header.Get("Content-Length"); got != "0" {
			t.Errorf("Content-Length header = %q, want \"0\" (empty body, A3)", got)
		}
	}
	if len(r.TransferEncoding) != 0 {
		t.Errorf("Transfer-Encoding = %v, want none", r.TransferEncoding)
	}
}

// writeJSON answers status with a JSON body.
func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// quoteJSON is a realistic quote document (docs/v2-assumptions.md A4) with a
// field the client does not know ("salesChannel").
const quoteJSON = `{
  "quoteId": 900001, "cpqId": 1, "customerId": 17, "customerQuoteId": 4711,
  "status": "DRAFT", "currency": "EUR", "updatedAt": "2026-11-21T10:00:00Z", "salesChannel": "DIRECT",
  "tofList": [{"id": 11, "name": "Mobile plans", "description": "SIM plans"}],
  "availablePricelists": [{"pricelistId": 1, "name": "Standard 2026"}, {"pricelistId": 2, "name": "Partner 2026"}],
  "carts": [{
    "basketId": 700001, "tofId": 11, "label": "Head office", "quantity": 2, "pricelistId": 1,
    "root": {
      "nodeId": 800001, "parentId": 0, "productId": 101, "tofProductId": 1101, "kind": "MAIN",
      "name": "Business Mobile 50GB", "itemUniqueId": "7c9e6679-7425-40de-944b-e07fc1f90ae7",
      "listActivationPrice": 49.00, "listRecurringPrice": 29.90,
      "activationPrice": 49.00, "recurringPrice": 29.90, "repriced": false,
      "breakdown": {
        "list": {"activation": 98.00, "recurring": 59.80},
        "discounts": [{"discountId": 1, "name": "Loyalty 10%", "activation": 0, "recurring": 5.98}],
        "extra": {"activation": 0, "recurring": 2.69},
        "net": {"activation": 98.00, "recurring": 51.13}
      },
      "children": [{
        "nodeId": 800002, "parentId": 800001, "productId": 201, "tofProductId": 1201, "kind": "ADDON",
        "name": "Roaming EU", "itemUniqueId": "0b7f1f8e-3c2a-4d55-9d1e-2f6a1b3c4d5e",
        "listActivationPrice": 0, "listRecurringPrice": 5.00, "activationPrice": 0, "recurringPrice": 4.00,
        "repriced": true,
        "breakdown": {"list": {"activation": 0, "recurring": 10.00}, "discounts": [],
                      "extra": {"activation": 0, "recurring": 0}, "net": {"activation": 0, "recurring": 8.00}},
        "children": []
      }]
    },
    "totals": {"listActivation": 98, "listRecurring": 69.8, "discountActivation": 0, "discountRecurring": 5.98,
               "extraActivation": 0, "extraRecurring": 2.69, "netActivation": 98, "netRecurring": 59.13}
  }],
  "appliedDiscounts": [{"discountId": 1, "name": "Loyalty 10%", "percent": 10, "appliesTo": "RECURRING"}],
  "extraDiscounts": [{"discountId": 9, "name": "Negotiated discount", "discountValue": 4.5}],
  "packages": [{"packageId": 31, "tofId": 11, "name": "Business Bundle", "recurringPrice": 15.00, "assigneeUserId": 1001}],
  "attachments": [{"attachmentId": 5, "quoteId": 900001, "attachmentType": "ID_DOCUMENT", "fileName": "id.pdf",
                   "contentType": "application/pdf", "size": 1234, "createdAt": "2026-11-21T09:00:00Z"}],
  "contract": {"contractId": 42, "contractNumber": "C-2026-000042"},
  "totals": {"listActivation": 98, "listRecurring": 84.8, "discountActivation": 0, "discountRecurring": 5.98,
             "extraActivation": 0, "extraRecurring": 2.69, "netActivation": 98, "netRecurring": 74.13}
}`

// checkQuote asserts the decoding of quoteJSON.
func checkQuote(t *testing.T, q *Quote) {
	t.Helper()
	if q == nil {
		t.Fatal("quote is nil")
	}
	if q.QuoteID != 900001 || q.CPQID != 1 || q.CustomerID != 17 || q.CustomerQuoteID != 4711 || q.Status != "DRAFT" {
		t.Errorf("quote head = %+v", q)
	}
	if len(q.TOFList) != 1 || q.TOFList[0].ID != 11 || q.TOFList[0].Name != "Mobile plans" {
		t.Errorf("tofList = %+v", q.TOFList)
	}
	if len(q.AvailablePricelists) != 2 || q.AvailablePricelists[1].PricelistID != 2 {
		t.Errorf("availablePricelists = %+v", q.AvailablePricelists)
	}
	cart, ok := q.Cart(700001)
	if !ok {
		t.Fatalf("cart 700001 missing: %+v", q.Carts)
	}
	if cart.Quantity != 2 || cart.TOFID != 11 || cart.Label != "Head office" || cart.Totals.NetRecurring != 59.13 {
		t.Errorf("cart = %+v", cart)
	}
	root := cart.Root
	if root == nil || root.NodeID != 800001 || root.Kind != "MAIN" || root.Breakdown.Net.Recurring != 51.13 ||
		len(root.Breakdown.Discounts) != 1 || root.Breakdown.Discounts[0].Recurring != 5.98 || root.Breakdown.Extra.Recurring != 2.69 {
		t.Errorf("root = %+v", root)
	}
	if root != nil && (len(root.Children) != 1 || root.Children[0].ParentID != 800001 || !root.Children[0].Repriced ||
		root.Children[0].RecurringPrice != 4.00) {
		t.Errorf("children = %+v", root.Children)
	}
	if len(q.AppliedDiscounts) != 1 || q.AppliedDiscounts[0].AppliesTo != "RECURRING" || q.AppliedDiscounts[0].Percent != 10 {
		t.Errorf("appliedDiscounts = %+v", q.AppliedDiscounts)
	}
	if len(q.ExtraDiscounts) != 1 || q.ExtraDiscounts[0].DiscountValue != 4.5 {
		t.Errorf("extraDiscounts = %+v", q.ExtraDiscounts)
	}
	if len(q.Packages) != 1 || q.Packages[0].AssigneeUserID != 1001 {
		t.Errorf("packages = %+v", q.Packages)
	}
	if len(q.Attachments) != 1 || q.Attachments[0].FileName != "id.pdf" || q.Attachments[0].Size != 1234 {
		t.Errorf("attachments = %+v", q.Attachments)
	}
	if q.Contract == nil || q.Contract.ContractNumber != "C-2026-000042" {
		t.Errorf("contract = %+v", q.Contract)
	}
	if q.Totals.NetRecurring != 74.13 || q.Totals.ListRecurring != 84.8 {
		t.Errorf("totals = %+v", q.Totals)
	}
	// The raw document keeps what the client does not model.
	var raw map[string]any
	if err := json.Unmarshal(q.Raw, &raw); err != nil || raw["salesChannel"] != "DIRECT" {
		t.Errorf("Raw = %s (err %v), want the whole document", q.Raw, err)
	}
}

// customerJSON is a realistic customer document (A8).
const customerJSON = `{
  "id": 17, "name": "Rossi Costruzioni S.p.A.", "taxId": "IT01234567890", "email": "amministrazione@rossi.example",
  "phone": "+39 02 1234567", "segment": "BUSINESS", "status": "ACTIVE",
  "address": {"street": "Via Roma 1", "city": "Milano", "postalCode": "20121", "country": "IT"},
  "owners": [{"ownerId": 1001, "name": "Sam Sales", "email": "sam@example.com"}],
  "profiles": [{"profileId": 3, "customerId": 17, "profileType": "BILLING", "contactName": "Anna Bianchi",
                "email": "billing@rossi.example", "phone": "+39 02 7654321", "createdAt": "2026-01-02T03:04:05Z"}],
  "cpqIds": [1, 2], "attributes": {"vip": true, "notes": {"language": "it"}}, "version": 3,
  "createdAt": "2025-05-01T08:00:00Z", "updatedAt": "2026-11-20T16:30:00Z", "creditRating": "A"
}`

func checkCustomer(t *testing.T, c *Customer) {
	t.Helper()
	checkCustomerFields(t, c)
	var raw map[string]any
	if err := json.Unmarshal(c.Raw, &raw); err != nil || raw["creditRating"] != "A" {
		t.Errorf("Raw = %s, want the whole document", c.Raw)
	}
}

// checkCustomerFields checks the modelled fields of customerJSON (the list leaves Raw nil).
func checkCustomerFields(t *testing.T, c *Customer) {
	t.Helper()
	if c == nil {
		t.Fatal("customer is nil")
	}
	if c.ID != 17 || c.Name != "Rossi Costruzioni S.p.A." || c.TaxID != "IT01234567890" || c.Segment != "BUSINESS" || c.Version != 3 {
		t.Errorf("customer = %+v", c)
	}
	if c.Address.City != "Milano" || c.Address.Country != "IT" {
		t.Errorf("address = %+v", c.Address)
	}
	if len(c.Owners) != 1 || c.Owners[0].OwnerID != 1001 {
		t.Errorf("owners = %+v", c.Owners)
	}
	if len(c.Profiles) != 1 || c.Profiles[0].ProfileType != "BILLING" || c.Profiles[0].CreatedAt.Year() != 2026 {
		t.Errorf("profiles = %+v", c.Profiles)
	}
	if !reflect.DeepEqual(c.CPQIDs, []int32{1, 2}) {
		t.Errorf("cpqIds = %v", c.CPQIDs)
	}
	var attrs map[string]any
	if err := json.Unmarshal(c.Attributes, &attrs); err != nil || attrs["vip"] != true {
		t.Errorf("attributes = %s", c.Attributes)
	}
}

// contractJSON is a realistic contract document (A7).
const contractJSON = `{
  "contractId": 42, "contractNumber": "C-2026-000042", "quoteId": 900001, "customerId": 17, "cpqId": 1,
  "status": "SIGNATURE_REQUESTED", "createdAt": "2026-11-21T11:00:00Z",
  "totals": {"listActivation": 98, "listRecurring": 84.8, "netActivation": 98, "netRecurring": 74.13},
  "customer": {"id": 17, "name": "Rossi Costruzioni S.p.A.", "taxId": "IT01234567890"},
  "pdf": {"fileName": "contract-C-2026-000042.pdf", "size": 20480, "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
  "signatureRequests": [
    {"signatureRequestId": 1, "email": "old@rossi.example", "signerName": "Old Signer", "message": "", "status": "REMOVED",
     "sentAt": "2026-11-21T11:05:00Z", "removedAt": "2026-11-21T11:06:00Z"},
    {"signatureRequestId": "SR-2", "email": "ceo@rossi.example", "signerName": "Mario Rossi", "message": "Please sign",
     "status": "SENT", "sentAt": "2026-11-21T11:10:00Z", "removedAt": null}],
  "archive": {"archived": false, "archiveId": null, "archivedAt": null}
}`

func checkContract(t *testing.T, c *Contract) {
	t.Helper()
	if c == nil {
		t.Fatal("contract is nil")
	}
	if c.ContractID != 42 || c.ContractNumber != "C-2026-000042" || c.QuoteID != 900001 || c.Status != "SIGNATURE_REQUESTED" {
		t.Errorf("contract = %+v", c)
	}
	if c.Customer.TaxID != "IT01234567890" || c.PDF.Size != 20480 || c.Totals.NetRecurring != 74.13 {
		t.Errorf("contract details = %+v %+v %+v", c.Customer, c.PDF, c.Totals)
	}
	active, ok := c.ActiveSignatureRequest()
	if !ok || active.SignatureRequestID != "SR-2" || active.SignerName != "Mario Rossi" {
		t.Errorf("active signature request = %+v", active)
	}
	if c.SignatureRequests[0].SignatureRequestID != "1" || c.SignatureRequests[0].RemovedAt.IsZero() {
		t.Errorf("first signature request = %+v", c.SignatureRequests[0])
	}
	if c.Archive.Archived || c.Archive.ArchiveID != "" {
		t.Errorf("archive = %+v", c.Archive)
	}
	if len(c.Raw) == 0 {
		t.Error("Raw is empty")
	}
}
