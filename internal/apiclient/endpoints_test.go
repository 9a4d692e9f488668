package apiclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

func TestEndpointsTable(t *testing.T) {
	t.Parallel()
	all := Endpoints()
	if len(all) != 38 {
		t.Fatalf("%d endpoints, want 38 (sections 4.1 to 4.5)", len(all))
	}
	names := map[string]bool{}
	perSection := map[string]int{}
	for _, e := range all {
		if names[e.Name] {
			t.Errorf("duplicate name %q", e.Name)
		}
		names[e.Name] = true
		perSection[e.Section]++
		if !strings.HasPrefix(e.Path, "/v2/") {
			t.Errorf("%s: path %q does not begin with /v2/ (spec section 9)", e.Name, e.Path)
		}
		var want SessionRule
		switch {
		case e.Section != "4.1":
			want = SessionNotUsed
		case e.Number == 1 || e.Number == 2 || e.Number == 10:
			want = SessionForbidden // section 5: "made without it"
		case e.Number >= 3 && e.Number <= 16:
			want = SessionRequired // R4
		default:
			t.Errorf("%s: call number %d outside 1..16", e.Name, e.Number)
		}
		if e.Session != want {
			t.Errorf("%s (#%d): session rule %s, want %s", e.Name, e.Number, e.Session, want)
		}
	}
	wantSections := map[string]int{"4.1": 16, "4.2": 4, "4.3": 2, "4.4": 6, "4.5": 10}
	for s, n := range wantSections {
		if perSection[s] != n {
			t.Errorf("section %s has %d endpoints, want %d", s, perSection[s], n)
		}
	}
	// The table is a copy: changing it does not change the client's.
	all[0].Path = "/changed"
	if Endpoints()[0].Path == "/changed" {
		t.Error("Endpoints returns shared state")
	}
}

// endpointCall makes one call of the named endpoint with valid parameters.
type endpointCall func(ctx context.Context, c *Client, sessionID string) error

func allCalls() map[string]endpointCall {
	ignore := func(_ any, err error) error { return err }
	closeDownload := func(d *Download, err error) error {
		if d != nil {
			d.Close()
		}
		return err
	}
	return map[string]endpointCall{
		EndpointCPQList: func(ctx context.Context, c *Client, s string) error { return ignore(c.CPQ.List(ctx)) },
		EndpointCPQInit: func(ctx context.Context, c *Client, s string) error { return ignore(c.CPQ.Init(ctx, 1, 17)) },
		EndpointCPQAddCart: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.CPQ.AddCart(ctx, s, 1, 11, AddCartRequest{ProductID: 101, TOFProductID: 1101, CustomerID: 17}))
		},
		EndpointCPQAddCartToQuote: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.CPQ.AddCartToQuote(ctx, s, 1, 11, 900001))
		},
		EndpointCPQAddItem: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.CPQ.AddItem(ctx, s, 1, 900001, 700001, 800001, AddItemRequest{OfferTypeID: 11, ProductID: 201, OfferTypeProductID: 1201}))
		},
		EndpointCPQRemoveItem: func(ctx context.Context, c *Client, s string) error {
			return c.CPQ.RemoveItem(ctx, s, 1, 900001, 700001, 800002, 800001)
		},
		EndpointCPQRemoveCart: func(ctx context.Context, c *Client, s string) error {
			return c.CPQ.RemoveCart(ctx, s, 1, 900001, 700001)
		},
		EndpointCPQQuantity: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.CPQ.SetQuantity(ctx, s, 1, 900001, 700001, 3))
		},
		EndpointCPQValidProducts: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.CPQ.ValidProducts(ctx, s, 1, 11))
		},
		EndpointCPQTOFList: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.CPQ.TOFList(ctx, 1, 17, 900001))
		},
		EndpointCPQApplicableDiscounts: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.CPQ.ApplicableDiscounts(ctx, s, 1, 900001))
		},
		EndpointCPQApplyDiscounts: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.CPQ.ApplyDiscounts(ctx, s, 1, 900001, ApplyDiscountsRequest{AppliedDiscounts: []int32{1}}))
		},
		EndpointCPQReprice: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.CPQ.Reprice(ctx, s, 1, 900001, RepriceRequest{RecurringPrice: 1, BasketID: 700001, CartItemID: 800001}))
		},
		EndpointCPQPackageGet: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.CPQ.PackageConfig(ctx, s, 1, 11, 900001))
		},
		EndpointCPQPackageAdd: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.CPQ.AddPackage(ctx, s, 1, AddPackageRequest{CustomerID: 17, PackageID: 31, TOFID: 11, QuoteID: 900001, AssigneeUserID: 1001}))
		},
		EndpointCPQChangePricelist: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.CPQ.ChangePricelist(ctx, s, 1, 900001, ChangePricelistRequest{PricelistID: 2, CartID: 700001}))
		},
		EndpointAttachmentUpload: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.Attachments.Upload(ctx, 900001, AttachmentTypeOther, "a.txt", "text/plain", 5, strings.NewReader("hello")))
		},
		EndpointAttachmentDelete: func(ctx context.Context, c *Client, s string) error {
			return c.Attachments.Delete(ctx, 5, 900001)
		},
		EndpointAttachmentDownload: func(ctx context.Context, c *Client, s string) error {
			return closeDownload(c.Attachments.Download(ctx, 5, 900001))
		},
		EndpointContractGenerate: func(ctx context.Context, c *Client, s string) error {
			res, err := c.Contracts.Generate(ctx, 900001)
			res.Close()
			return err
		},
		EndpointSignatureCreate: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.Signatures.Create(ctx, SignatureInput{ContractID: 42, Email: "a@example.com", SignerName: "A"}))
		},
		EndpointSignatureDelete: func(ctx context.Context, c *Client, s string) error {
			return c.Signatures.Delete(ctx, 42)
		},
		EndpointContractGet: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.Contracts.Get(ctx, 42))
		},
		EndpointContractGetByNumber: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.Contracts.GetByNumber(ctx, "C-2026-000042"))
		},
		EndpointContractArchive: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.Contracts.Archive(ctx, "C-2026-000042"))
		},
		EndpointContractDigitalArchivePayload: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.Contracts.DigitalArchivePayload(ctx, "C-2026-000042"))
		},
		EndpointContractValidationAudit: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.Contracts.ValidationAudit(ctx, 900001))
		},
		EndpointContractValidationAuditPDF: func(ctx context.Context, c *Client, s string) error {
			return closeDownload(c.Contracts.ValidationAuditPDF(ctx, 900001))
		},
		EndpointCustomerGet: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.Customers.Get(ctx, 17))
		},
		EndpointCustomerList: func(ctx context.Context, c *Client, s string) error {
			_, _, _, err := c.Customers.List(ctx, "")
			return err
		},
		EndpointCustomerSearch: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.Customers.Search(ctx, 1, "rossi"))
		},
		EndpointCustomerCreate: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.Customers.Create(ctx, CustomerInput{Name: "N", TaxID: "IT01234567890", Segment: "BUSINESS"}))
		},
		EndpointCustomerUpdate: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.Customers.Update(ctx, CustomerUpdate{ID: 17, Name: "N", TaxID: "IT01234567890", Segment: "BUSINESS"}))
		},
		EndpointCustomerOwnersUpdate: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.Customers.SetOwners(ctx, 17, []int64{1001}))
		},
		EndpointCustomerOwnerAdd: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.Customers.AddOwner(ctx, 17, 1002))
		},
		EndpointCustomerOwnerChange: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.Customers.ChangeOwner(ctx, 17, 1001, 1002))
		},
		EndpointCustomerProfileCreate: func(ctx context.Context, c *Client, s string) error {
			return ignore(c.Customers.CreateProfile(ctx, ProfileInput{CustomerID: 17, ProfileType: "BILLING"}))
		},
		EndpointCustomerProfileDelete: func(ctx context.Context, c *Client, s string) error {
			return c.Customers.DeleteProfile(ctx, 17, 3)
		},
	}
}

// seenRequest is what the recording service saw of one request.
type seenRequest struct {
	method, escapedPath string
	query               map[string][]string
	header              http.Header
	bodyLen             int
}

// recordingService answers any request the way the named endpoint would
// (an empty array, a PDF, 204, ...) and records it.
type recordingService struct {
	mu      sync.Mutex
	current string
	seen    []seenRequest
}

func (s *recordingService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	name := s.current
	s.seen = append(s.seen, seenRequest{r.Method, r.URL.EscapedPath(), r.URL.Query(), r.Header.Clone(), len(body)})
	s.mu.Unlock()
	switch name {
	case EndpointCPQList, EndpointCPQValidProducts, EndpointCPQApplicableDiscounts, EndpointCustomerList, EndpointCustomerSearch:
		writeJSON(w, 200, `[]`)
	case EndpointContractValidationAuditPDF, EndpointAttachmentDownload:
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = io.WriteString(w, fakePDF)
	case EndpointCPQRemoveItem, EndpointCPQRemoveCart, EndpointAttachmentDelete, EndpointSignatureDelete, EndpointCustomerProfileDelete:
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, 200, `{}`)
	}
}

func (s *recordingService) start(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current, s.seen = name, nil
}

func (s *recordingService) requests() []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// templateRegexp turns "/v2/cpq/{cpqId}/list" into a pattern where each
// placeholder is one non-empty segment.
func templateRegexp(template string) *regexp.Regexp {
	return regexp.MustCompile("^" + regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(template), `[^/]+`) + "$")
}

// Every endpoint of the table is callable through the client, goes to its
// method and path template, and follows section 5: Authorization always,
// Content-Type only with a body, X-SessionId exactly on calls 3-9 and 11-16.
func TestEveryEndpointFollowsTheHeaderRules(t *testing.T) {
	t.Parallel()
	svc := &recordingService{}
	server := httptest.NewServer(svc)
	t.Cleanup(server.Close)
	client, err := New(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	calls := allCalls()
	var tableNames, callNames []string
	for _, e := range Endpoints() {
		tableNames = append(tableNames, e.Name)
	}
	for name := range calls {
		callNames = append(callNames, name)
	}
	sort.Strings(tableNames)
	sort.Strings(callNames)
	if !slices.Equal(tableNames, callNames) {
		t.Fatalf("endpoints table %v\n client calls %v", tableNames, callNames)
	}

	ctx := authCtx(t)
	for _, ep := range Endpoints() {
		svc.start(ep.Name)
		if err := calls[ep.Name](ctx, client, testSessionID); err != nil {
			t.Errorf("%s: %v", ep.Name, err)
			continue
		}
		seen := svc.requests()
		if len(seen) != 1 {
			t.Errorf("%s: %d requests, want 1", ep.Name, len(seen))
			continue
		}
		r := seen[0]
		if r.method != ep.Method || !templateRegexp(ep.Path).MatchString(r.escapedPath) {
			t.Errorf("%s: sent %s %s, want %s %s", ep.Name, r.method, r.escapedPath, ep.Method, ep.Path)
		}
		var queryNames []string
		for k := range r.query {
			queryNames = append(queryNames, k)
		}
		sort.Strings(queryNames)
		wantQuery := slices.Sorted(slices.Values(ep.Query))
		if !slices.Equal(queryNames, wantQuery) && !(len(queryNames) == 0 && len(wantQuery) == 0) {
			t.Errorf("%s: query parameters %v, want %v", ep.Name, queryNames, wantQuery)
		}
		if got := r.header.Get("Authorization"); got != "Bearer "+testToken {
			t.Errorf("%s: Authorization = %q", ep.Name, got)
		}
		_, hasSession := r.header["X-Sessionid"]
		if hasSession != (ep.Session == SessionRequired) {
			t.Errorf("%s (#%d): X-SessionId sent = %v, rule %s", ep.Name, ep.Number, hasSession, ep.Session)
		}
		contentType, hasContentType := r.header["Content-Type"]
		switch {
		case r.bodyLen == 0 && hasContentType:
			t.Errorf("%s: Content-Type %q without a body", ep.Name, contentType)
		case r.bodyLen > 0 && ep.Name != EndpointAttachmentUpload && r.header.Get("Content-Type") != "application/json":
			t.Errorf("%s: JSON body with Content-Type %q", ep.Name, contentType)
		case r.bodyLen > 0 && ep.Name == EndpointAttachmentUpload && !strings.HasPrefix(r.header.Get("Content-Type"), "multipart/form-data;"):
			t.Errorf("%s: upload with Content-Type %q", ep.Name, contentType)
		}
	}
}

// A call without a token fails before anything is sent.
func TestEveryEndpointNeedsAToken(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	for name, call := range allCalls() {
		err := call(t.Context(), client, testSessionID)
		if !errors.Is(err, ErrNoToken) {
			t.Errorf("%s without token: err = %v, want ErrNoToken", name, err)
		}
		err = call(WithToken(t.Context(), "bad\r\ntoken"), client, testSessionID)
		if !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("%s with a token holding CR/LF: err = %v, want ErrInvalidParameter", name, err)
		}
	}
	if n := f.hits.Load(); n != 0 {
		t.Errorf("%d requests sent without a token", n)
	}
}

// A call that needs X-SessionId and has none fails before anything is sent.
func TestSessionCallsNeedASessionID(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	calls := allCalls()
	required := 0
	for _, ep := range Endpoints() {
		if ep.Session != SessionRequired {
			continue
		}
		required++
		err := calls[ep.Name](authCtx(t), client, "")
		if !errors.Is(err, ErrNoSessionID) {
			t.Errorf("%s without session id: err = %v, want ErrNoSessionID", ep.Name, err)
		}
		if err != nil && !strings.Contains(err.Error(), ep.Name) {
			t.Errorf("%s: error %q does not name the endpoint", ep.Name, err)
		}
		err = calls[ep.Name](authCtx(t), client, "sess\nX-Evil: 1")
		if !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("%s with a session id holding a newline: err = %v", ep.Name, err)
		}
	}
	if required != 13 {
		t.Errorf("%d endpoints require a session id, want 13 (calls 3-9 and 11-16)", required)
	}
	if n := f.hits.Load(); n != 0 {
		t.Errorf("%d requests sent without a session id", n)
	}
}
