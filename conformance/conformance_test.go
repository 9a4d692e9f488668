package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cpqportal/portal/internal/apiclient"
)

// customerQuoteID is the customer's own quote reference the suite sends
// (A5 #3, #15): non-zero, so a client or service that drops it shows.
const customerQuoteID int64 = 4242

// scenario is the state the steps build on, one step after the other.
type scenario struct {
	*suite
	runID string

	configurators []apiclient.Configurator
	ownerIDs      []int64 // sales users seen on existing customers (A8)

	customer *apiclient.Customer
	input    apiclient.CustomerInput
	profile  *apiclient.Profile

	cpqID     int32
	sessionID string
	tofID     int32
	main      apiclient.Product // MAIN product of the first cart
	addon     apiclient.Product // ADDON accepted under main
	deflt     apiclient.Product // the TOF's default MAIN product (#4)

	quote      *apiclient.Quote
	quoteID    int64
	basket1    int64 // the cart the contract is generated from
	basket2    int64 // the cart added by #4, removed by #7
	root1      int64
	addonNode  int64
	discountID int32 // regular discount applied, 0 when none is offered
	extraID    int32 // extra discount applied, 0 when none is offered
	extraValue float64
	packageID  int32

	attachmentID int32
	fileData     []byte

	contractID     int32
	contractNumber string

	records map[string]*record
}

// TestConformance builds a whole scenario on the target, one subtest per
// endpoint in an order where each step has the data it needs, then runs the
// error-handling checks and checks that every endpoint was called.
func TestConformance(t *testing.T) {
	s := &scenario{suite: newSuite(t), runID: newRunID(t), records: map[string]*record{}}
	t.Cleanup(func() {
		// Counted before the cleanups, which call endpoints too.
		called, requests := s.rec.calledEndpoints(), s.rec.mark()
		for _, line := range s.ledger.leftovers() {
			t.Log("cleanup: " + line)
		}
		s.logSummary(t, called, requests)
	})

	steps := []struct {
		name string
		fn   func(t *testing.T)
	}{
		{apiclient.EndpointCPQList, s.cpqList},
		{apiclient.EndpointCustomerList, s.customerList},
		{apiclient.EndpointCustomerCreate, s.customerCreate},
		{apiclient.EndpointCustomerGet, s.customerGet},
		{apiclient.EndpointCustomerSearch, s.customerSearch},
		{apiclient.EndpointCustomerOwnersUpdate, s.ownersUpdate},
		{apiclient.EndpointCustomerOwnerChange, s.ownerChange},
		{apiclient.EndpointCustomerOwnerAdd, s.ownerAdd},
		{apiclient.EndpointCustomerProfileCreate, s.profileCreate},
		{apiclient.EndpointCPQInit, s.cpqInit},
		{apiclient.EndpointCPQValidProducts, s.validProducts},
		{apiclient.EndpointCPQAddCart, s.addCart},
		{apiclient.EndpointCPQAddCartToQuote, s.addCartToQuote},
		{apiclient.EndpointCPQAddItem, s.addItem},
		{apiclient.EndpointCPQQuantity, s.quantity},
		{apiclient.EndpointCPQTOFList, s.tofList},
		{apiclient.EndpointCPQApplicableDiscounts, s.applicableDiscounts},
		{apiclient.EndpointCPQApplyDiscounts, s.applyDiscounts},
		{apiclient.EndpointCPQReprice, s.reprice},
		{apiclient.EndpointCPQPackageGet, s.packageGet},
		{apiclient.EndpointCPQPackageAdd, s.packageAdd},
		{apiclient.EndpointCPQChangePricelist, s.changePricelist},
		// After the quote exists, so the update shows in its audit (A7).
		{apiclient.EndpointCustomerUpdate, s.customerUpdate},
		{apiclient.EndpointCPQRemoveItem, s.removeItem},
		{apiclient.EndpointCPQRemoveCart, s.removeCart},
		{apiclient.EndpointAttachmentUpload, s.attachmentUpload},
		{apiclient.EndpointAttachmentDownload, s.attachmentDownload},
		{apiclient.EndpointAttachmentDelete, s.attachmentDelete},
		{apiclient.EndpointContractGenerate, s.contractGenerate},
		{apiclient.EndpointContractGet, s.contractGet},
		{apiclient.EndpointContractGetByNumber, s.contractGetByNumber},
		{apiclient.EndpointSignatureCreate, s.signatureCreate},
		{apiclient.EndpointSignatureDelete, s.signatureDelete},
		{apiclient.EndpointContractArchive, s.contractArchive},
		{apiclient.EndpointContractDigitalArchivePayload, s.archivePayload},
		{apiclient.EndpointCustomerProfileDelete, s.profileDelete},
		{apiclient.EndpointContractValidationAudit, s.validationAudit},
		{apiclient.EndpointContractValidationAuditPDF, s.validationAuditPDF},
	}
	for _, st := range steps {
		s.step(t, st.name, st.fn)
	}

	t.Run("errors", s.errorChecks)

	t.Run("all-endpoints-called", func(t *testing.T) {
		called := s.rec.calledEndpoints()
		var missing []string
		for _, ep := range apiclient.Endpoints() {
			if called[ep.Name] == 0 {
				missing = append(missing, ep.Name)
			}
		}
		if len(missing) > 0 {
			t.Errorf("%d of %d endpoints were never called through the client: %s",
				len(missing), len(apiclient.Endpoints()), strings.Join(missing, ", "))
		}
	})
}

// need stops a step whose input an earlier step failed to produce.
func need(t *testing.T, ok bool, what string) {
	t.Helper()
	if !ok {
		t.Fatalf("needs %s from an earlier step, which failed", what)
	}
}

// check fails the step on an unexpected error.
func check(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// ---- Configurators and customers ----

func (s *scenario) cpqList(t *testing.T) {
	mark := s.rec.mark()
	list, err := s.client.CPQ.List(s.ctx(t))
	check(t, err, "list configurators")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCPQList), wire{path: s.path("/v2/cpq/list"), status: http.StatusOK})
	if len(list) == 0 {
		t.Fatal("no configurators: the suite needs at least one to build a quote")
	}
	for _, c := range list {
		if c.ID < 1 || c.Name == "" {
			t.Errorf("configurator %s: want an id >= 1 and a name (spec #1)", c.Raw)
		}
	}
	s.configurators = list
	s.cpqID = list[0].ID
}

func (s *scenario) customerList(t *testing.T) {
	mark := s.rec.mark()
	customers, etag, notModified, err := s.client.Customers.List(s.ctx(t), "")
	check(t, err, "list customers")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCustomerList), wire{path: s.path("/v2/customer/"), status: http.StatusOK})
	if notModified {
		t.Error("a list without If-None-Match answered not modified")
	}
	seen := map[int64]bool{}
	for _, c := range customers {
		if c.ID < 1 || c.Name == "" {
			t.Errorf("customer %.200s: want an id >= 1 and a name (A8)", c.Raw)
		}
		for _, o := range c.Owners {
			if o.OwnerID >= 1 && !seen[o.OwnerID] {
				seen[o.OwnerID] = true
				s.ownerIDs = append(s.ownerIDs, o.OwnerID)
			}
		}
	}
	slices.Sort(s.ownerIDs)

	// A8: a strong ETag, and If-None-Match with it answers 304.
	if etag == "" || strings.HasPrefix(etag, "W/") {
		t.Fatalf("ETag %q, want a strong ETag (A8)", etag)
	}
	mark = s.rec.mark()
	again, etag2, notModified, err := s.client.Customers.List(s.ctx(t), etag)
	check(t, err, "list customers with If-None-Match")
	ex := s.sent(t, mark, apiclient.EndpointCustomerList)
	s.expectWire(t, ex, wire{path: s.path("/v2/customer/"), status: http.StatusNotModified})
	if got, _ := headerValue(ex.header, "If-None-Match"); got != etag {
		t.Errorf("If-None-Match %q, want %q", got, etag)
	}
	if !notModified || len(again) != 0 || etag2 != etag {
		t.Errorf("If-None-Match with the current ETag: notModified %v, %d customers, ETag %q; want 304 with ETag %q (A8)",
			notModified, len(again), etag2, etag)
	}
}

func (s *scenario) customerCreate(t *testing.T) {
	s.input = apiclient.CustomerInput{
		Name:    "Conformance " + s.runID,
		TaxID:   newTaxID(t),
		Email:   "conformance+" + s.runID + "@example.com",
		Phone:   "+39 02 5550100",
		Segment: "BUSINESS",
		Address: &apiclient.Address{Street: "Via della Conformità 1", City: "Milano", PostalCode: "20121", Country: "IT"},
		Attributes: json.RawMessage(`{"createdBy":"conformance suite","run":"` + s.runID +
			`","nested":{"tags":["a","b"],"level":1}}`),
	}
	mark := s.rec.mark()
	c, err := s.client.Customers.Create(s.ctx(t), s.input)
	check(t, err, "create customer")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCustomerCreate), wire{
		path: s.path("/v2/customer"),
		body: map[string]any{
			"name": s.input.Name, "taxId": s.input.TaxID, "email": s.input.Email, "phone": s.input.Phone,
			"segment": "BUSINESS",
			"address": map[string]any{"street": "Via della Conformità 1", "city": "Milano", "postalCode": "20121", "country": "IT"},
			"attributes": map[string]any{"createdBy": "conformance suite", "run": s.runID,
				"nested": map[string]any{"tags": []any{"a", "b"}, "level": 1}},
		},
		status: http.StatusCreated,
	})
	s.customer = c
	s.records["customer"] = s.ledger.add(fmt.Sprintf("customer %d %q (tax id %s)", c.ID, c.Name, c.TaxID),
		"kept: the v2 API has no call to delete a customer", nil)
	if c.ID < 1 || c.Name != s.input.Name || c.TaxID != s.input.TaxID || c.Email != s.input.Email || c.Phone != s.input.Phone ||
		c.Segment != "BUSINESS" || c.Address != *s.input.Address {
		t.Errorf("created customer %s does not carry what was sent", c.Raw)
	}
	if c.Status != "ACTIVE" || c.Version < 1 || len(c.Owners) != 0 || len(c.Profiles) != 0 {
		t.Errorf("new customer: status %q, version %d, %d owners, %d profiles; want ACTIVE, >= 1, none, none (A8)",
			c.Status, c.Version, len(c.Owners), len(c.Profiles))
	}
	equalJSON(t, "attributes", c.Attributes, map[string]any{"createdBy": "conformance suite", "run": s.runID,
		"nested": map[string]any{"tags": []any{"a", "b"}, "level": 1}})
	// A8: cpqIds omitted on POST means every configurator.
	var all []int32
	for _, cfg := range s.configurators {
		all = append(all, cfg.ID)
	}
	got := slices.Clone(c.CPQIDs)
	slices.Sort(got)
	slices.Sort(all)
	if !slices.Equal(got, all) {
		t.Errorf("cpqIds %v, want every configurator %v (A8: omitted on POST means all)", got, all)
	}
}

func (s *scenario) customerGet(t *testing.T) {
	need(t, s.customer != nil, "the customer")
	mark := s.rec.mark()
	c, err := s.client.Customers.Get(s.ctx(t), s.customer.ID)
	check(t, err, "get customer")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCustomerGet), wire{path: s.path("/v2/customer/%d", s.customer.ID), status: http.StatusOK})
	if c.ID != s.customer.ID || c.Name != s.customer.Name || c.TaxID != s.customer.TaxID || c.Version != s.customer.Version {
		t.Errorf("got customer %s, want the one created: %s", c.Raw, s.customer.Raw)
	}
}

func (s *scenario) customerSearch(t *testing.T) {
	need(t, s.customer != nil && s.cpqID != 0, "the customer and a configurator")
	mark := s.rec.mark()
	found, err := s.client.Customers.Search(s.ctx(t), int64(s.cpqID), s.runID)
	check(t, err, "search customers")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCustomerSearch), wire{
		path: s.path("/v2/customer/onlinesearch/%d", s.cpqID), query: url.Values{"query": {s.runID}}, status: http.StatusOK,
	})
	if !slices.ContainsFunc(found, func(c apiclient.Customer) bool { return c.ID == s.customer.ID }) {
		t.Errorf("search %q in configurator %d found %d customers, not customer %d (A8: name contains the text)",
			s.runID, s.cpqID, len(found), s.customer.ID)
	}
	if len(found) > 50 {
		t.Errorf("search answered %d customers, at most 50 (A8)", len(found))
	}
}

func ownerIDsOf(c *apiclient.Customer) []int64 {
	var ids []int64
	for _, o := range c.Owners {
		ids = append(ids, o.OwnerID)
	}
	slices.Sort(ids)
	return ids
}

// needOwners stops a step when fewer than two sales users are known.
func (s *scenario) needOwners(t *testing.T) (first, second int64) {
	t.Helper()
	need(t, s.customer != nil, "the customer")
	if len(s.ownerIDs) < 2 {
		t.Fatalf("found %d owner ids on the existing customers (%v): the owner calls need two known sales users "+
			"(A8: the spec does not expose the directory)", len(s.ownerIDs), s.ownerIDs)
	}
	return s.ownerIDs[0], s.ownerIDs[1]
}

func (s *scenario) ownersUpdate(t *testing.T) {
	first, _ := s.needOwners(t)
	mark := s.rec.mark()
	c, err := s.client.Customers.SetOwners(s.ctx(t), s.customer.ID, []int64{first})
	check(t, err, "replace owners")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCustomerOwnersUpdate), wire{
		path: s.path("/v2/customer/%d/owners", s.customer.ID), body: map[string]any{"ownerIds": []int64{first}}, status: http.StatusOK,
	})
	if got := ownerIDsOf(c); !slices.Equal(got, []int64{first}) {
		t.Errorf("owners %v, want [%d]", got, first)
	}
}

func (s *scenario) ownerChange(t *testing.T) {
	first, second := s.needOwners(t)
	mark := s.rec.mark()
	c, err := s.client.Customers.ChangeOwner(s.ctx(t), s.customer.ID, first, second)
	check(t, err, "change owner")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCustomerOwnerChange), wire{
		path: s.path("/v2/customer/%d/owner/change", s.customer.ID),
		body: map[string]any{"currentOwnerId": first, "newOwnerId": second}, status: http.StatusOK,
	})
	if got := ownerIDsOf(c); !slices.Equal(got, []int64{second}) {
		t.Errorf("owners %v, want [%d]", got, second)
	}
}

func (s *scenario) ownerAdd(t *testing.T) {
	first, second := s.needOwners(t)
	mark := s.rec.mark()
	c, err := s.client.Customers.AddOwner(s.ctx(t), s.customer.ID, first)
	check(t, err, "add owner")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCustomerOwnerAdd), wire{
		path: s.path("/v2/customer/%d/owner/%d", s.customer.ID, first), emptyBody: true, status: http.StatusOK,
	})
	if got := ownerIDsOf(c); !slices.Equal(got, []int64{first, second}) {
		t.Errorf("owners %v, want [%d %d]", got, first, second)
	}
	// A8: adding an owner already present answers 409.
	_, err = s.client.Customers.AddOwner(s.ctx(t), s.customer.ID, first)
	wantAPIError(t, err, apiclient.ErrConflict, http.StatusConflict, "CONFLICT")
}

func (s *scenario) profileCreate(t *testing.T) {
	need(t, s.customer != nil, "the customer")
	in := apiclient.ProfileInput{CustomerID: s.customer.ID, ProfileType: "BILLING", ContactName: "Conformance Billing",
		Email: "billing+" + s.runID + "@example.com", Phone: "+39 02 5550101"}
	mark := s.rec.mark()
	p, err := s.client.Customers.CreateProfile(s.ctx(t), in)
	check(t, err, "create profile")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCustomerProfileCreate), wire{
		path: s.path("/v2/customer/customerprofile"),
		body: map[string]any{"customerId": s.customer.ID, "profileType": "BILLING", "contactName": "Conformance Billing",
			"email": in.Email, "phone": in.Phone},
		status: http.StatusCreated,
	})
	s.profile = p
	customerID, profileID := s.customer.ID, p.ProfileID
	s.records["profile"] = s.ledger.add(fmt.Sprintf("profile %d of customer %d", p.ProfileID, s.customer.ID), "",
		func() error { return s.client.Customers.DeleteProfile(s.cleanupCtx(), customerID, profileID) })
	if p.ProfileID < 1 || p.CustomerID != s.customer.ID || p.ProfileType != "BILLING" || p.ContactName != in.ContactName ||
		p.Email != in.Email || p.Phone != in.Phone {
		t.Errorf("created profile %s does not carry what was sent", p.Raw)
	}
}

// ---- Configuration flow (4.1) ----

func (s *scenario) cpqInit(t *testing.T) {
	need(t, s.customer != nil && s.cpqID != 0, "the customer and a configurator")
	mark := s.rec.mark()
	res, err := s.client.CPQ.Init(s.ctx(t), s.cpqID, s.customer.ID)
	check(t, err, "init session")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCPQInit), wire{
		path: s.path("/v2/cpq/%d/customer/%d/init", s.cpqID, s.customer.ID), emptyBody: true, status: http.StatusOK,
	})
	if res.SessionID == "" || len(res.TOFList) == 0 {
		t.Fatalf("init answered %s; want a sessionId and a non-empty tofList (spec #2)", res.Raw)
	}
	for _, tof := range res.TOFList {
		if tof.ID < 1 {
			t.Errorf("tofList entry with id %d (spec #2: each has an id)", tof.ID)
		}
	}
	s.sessionID = res.SessionID
	s.tofID = 0
	s.quote = &apiclient.Quote{TOFList: res.TOFList}
}

// validProducts asks #9 for the products of each TOF of the session until it
// finds one with a MAIN product that takes an ADDON, and a default MAIN for #4.
func (s *scenario) validProducts(t *testing.T) {
	need(t, s.sessionID != "" && s.quote != nil, "a configuration session")
	var seen []string
	for i, tof := range s.quote.TOFList {
		mark := s.rec.mark()
		products, err := s.client.CPQ.ValidProducts(s.ctx(t), s.sessionID, s.cpqID, tof.ID)
		check(t, err, fmt.Sprintf("valid products of TOF %d", tof.ID))
		if i == 0 {
			s.expectWire(t, s.sent(t, mark, apiclient.EndpointCPQValidProducts), wire{
				path: s.path("/v2/cpq/%d/tof/%d/validproducts", s.cpqID, tof.ID), sessionID: s.sessionID, status: http.StatusOK,
			})
		}
		for _, p := range products {
			if p.ProductID < 1 || p.TOFProductID < 1 || (p.Kind != "MAIN" && p.Kind != "ADDON") {
				t.Errorf("TOF %d product %s: want productId, tofProductId and kind MAIN or ADDON (A5 #9)", tof.ID, p.Raw)
			}
		}
		main, addon, deflt, ok := pickProducts(products)
		seen = append(seen, fmt.Sprintf("TOF %d: %d products", tof.ID, len(products)))
		if ok {
			s.tofID, s.main, s.addon, s.deflt = tof.ID, main, addon, deflt
			return
		}
	}
	t.Fatalf("no TOF of configurator %d has a MAIN product with an ADDON for it and a default MAIN product (%s)",
		s.cpqID, strings.Join(seen, "; "))
}

// pickProducts chooses a MAIN product with an ADDON whose parentProductIds
// name it, preferring one that is not the default, so that #4's cart
// (the default product) differs from #3's.
func pickProducts(products []apiclient.Product) (main, addon, deflt apiclient.Product, ok bool) {
	var foundDefault bool
	for _, p := range products {
		if p.Kind == "MAIN" && p.Default {
			deflt, foundDefault = p, true
			break
		}
	}
	if !foundDefault {
		return main, addon, deflt, false
	}
	for _, preferNonDefault := range []bool{true, false} {
		for _, m := range products {
			if m.Kind != "MAIN" || (preferNonDefault && m.Default) {
				continue
			}
			for _, a := range products {
				if a.Kind == "ADDON" && slices.Contains(a.ParentProductIDs, m.ProductID) {
					return m, a, deflt, true
				}
			}
		}
	}
	return main, addon, deflt, false
}

func findItem(root *apiclient.Item, nodeID int64) *apiclient.Item {
	if root == nil {
		return nil
	}
	if root.NodeID == nodeID {
		return root
	}
	for i := range root.Children {
		if found := findItem(&root.Children[i], nodeID); found != nil {
			return found
		}
	}
	return nil
}

// checkQuote checks the parts of a quote document (A4) every answer has.
func (s *scenario) checkQuote(t *testing.T, q *apiclient.Quote) {
	t.Helper()
	if q.QuoteID != s.quoteID || q.CPQID != s.cpqID || q.CustomerID != s.customer.ID {
		t.Errorf("quote %d of configurator %d, customer %d; want quote %d, configurator %d, customer %d (A4)",
			q.QuoteID, q.CPQID, q.CustomerID, s.quoteID, s.cpqID, s.customer.ID)
	}
	if q.Currency != "EUR" || q.Status == "" || len(q.AvailablePricelists) == 0 {
		t.Errorf("quote currency %q, status %q, %d price lists; want EUR, a status and price lists (A4)",
			q.Currency, q.Status, len(q.AvailablePricelists))
	}
	if !slices.ContainsFunc(q.TOFList, func(tof apiclient.TOF) bool { return tof.ID == s.tofID }) {
		t.Errorf("quote tofList %v lacks TOF %d (A4: all TOFs of its configurator)", q.TOFList, s.tofID)
	}
	for _, c := range q.Carts {
		if c.Root == nil || c.Root.Kind != "MAIN" || c.Root.NodeID < 1 || c.Quantity < 1 {
			t.Errorf("cart %d: root %+v, quantity %d; want a MAIN root item and a quantity >= 1 (A4)", c.BasketID, c.Root, c.Quantity)
		}
		if !slices.ContainsFunc(q.AvailablePricelists, func(p apiclient.Pricelist) bool { return p.PricelistID == c.PricelistID }) {
			t.Errorf("cart %d price list %d is not one of availablePricelists (A4)", c.BasketID, c.PricelistID)
		}
	}
}

func (s *scenario) addCart(t *testing.T) {
	need(t, s.tofID != 0, "a TOF with products")
	req := apiclient.AddCartRequest{ProductID: s.main.ProductID, TOFProductID: s.main.TOFProductID, CustomerID: s.customer.ID,
		CustomerQuoteID: customerQuoteID, Label: "Conformance head office"}
	mark := s.rec.mark()
	q, err := s.client.CPQ.AddCart(s.ctx(t), s.sessionID, s.cpqID, s.tofID, req)
	check(t, err, "add cart")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCPQAddCart), wire{
		path: s.path("/v2/cpq/%d/tof/%d/addcart", s.cpqID, s.tofID), sessionID: s.sessionID,
		body: map[string]any{"productId": s.main.ProductID, "tofProductId": s.main.TOFProductID, "customerId": s.customer.ID,
			"customerQuoteId": customerQuoteID, "label": "Conformance head office"},
		status: http.StatusOK,
	})
	if q.QuoteID < 1 || len(q.Carts) != 1 {
		t.Fatalf("add cart answered quote %d with %d carts; want a new quote with one cart (A5 #3)", q.QuoteID, len(q.Carts))
	}
	s.quote, s.quoteID = q, q.QuoteID
	c := q.Carts[0]
	s.basket1 = c.BasketID
	s.records["quote"] = s.ledger.add(fmt.Sprintf("quote %d", q.QuoteID), "kept: the v2 API has no call to delete a quote", nil)
	s.records["cart1"] = s.ledger.add(fmt.Sprintf("cart %d of quote %d", c.BasketID, q.QuoteID),
		"kept: the contract is generated from it", nil)
	s.checkQuote(t, q)
	if q.CustomerQuoteID != customerQuoteID || q.Contract != nil {
		t.Errorf("customerQuoteId %d, contract %v; want %d and no contract yet", q.CustomerQuoteID, q.Contract, customerQuoteID)
	}
	if c.Root == nil {
		t.Fatalf("cart %d has no root item", c.BasketID)
	}
	s.root1 = c.Root.NodeID
	if c.TOFID != s.tofID || c.Label != req.Label || c.Quantity != 1 || c.Root.ProductID != s.main.ProductID ||
		c.Root.TOFProductID != s.main.TOFProductID {
		t.Errorf("cart %+v: want TOF %d, label %q, quantity 1, root product %d (A5 #3)", c, s.tofID, req.Label, s.main.ProductID)
	}
}

func (s *scenario) addCartToQuote(t *testing.T) {
	need(t, s.quoteID != 0, "the quote")
	mark := s.rec.mark()
	q, err := s.client.CPQ.AddCartToQuote(s.ctx(t), s.sessionID, s.cpqID, s.tofID, s.quoteID)
	check(t, err, "add cart to quote")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCPQAddCartToQuote), wire{
		path:  s.path("/v2/cpq/%d/tof/%d/addcart", s.cpqID, s.tofID),
		query: url.Values{"quoteId": {fmt.Sprint(s.quoteID)}}, sessionID: s.sessionID,
		body: map[string]any{}, status: http.StatusOK,
	})
	s.checkQuote(t, q)
	if len(q.Carts) != 2 {
		t.Fatalf("quote has %d carts, want 2", len(q.Carts))
	}
	added := q.Carts[1]
	if added.BasketID == s.basket1 {
		added = q.Carts[0]
	}
	s.basket2 = added.BasketID
	quoteID, basketID, sessionID, cpqID := s.quoteID, added.BasketID, s.sessionID, s.cpqID
	s.records["cart2"] = s.ledger.add(fmt.Sprintf("cart %d of quote %d", added.BasketID, s.quoteID), "",
		func() error { return s.client.CPQ.RemoveCart(s.cleanupCtx(), sessionID, cpqID, quoteID, basketID) })
	if added.Root == nil || added.Root.ProductID != s.deflt.ProductID || added.TOFID != s.tofID {
		t.Errorf("the cart added to the quote: %+v; want the TOF's default product %d (A5 #4)", added, s.deflt.ProductID)
	}
	s.quote = q
}

func (s *scenario) addItem(t *testing.T) {
	need(t, s.root1 != 0, "the first cart")
	itemUniqueID := uuid.NewString()
	req := apiclient.AddItemRequest{OfferTypeID: s.tofID, ProductID: s.addon.ProductID, OfferTypeProductID: s.addon.TOFProductID,
		ItemUniqueID: itemUniqueID}
	mark := s.rec.mark()
	q, err := s.client.CPQ.AddItem(s.ctx(t), s.sessionID, s.cpqID, s.quoteID, s.basket1, s.root1, req)
	check(t, err, "add item")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCPQAddItem), wire{
		path:      s.path("/v2/cpq/%d/quote/%d/basket/%d/parent/%d/additemtocart", s.cpqID, s.quoteID, s.basket1, s.root1),
		sessionID: s.sessionID,
		body: map[string]any{"offerTypeId": s.tofID, "productId": s.addon.ProductID, "offerTypeProductId": s.addon.TOFProductID,
			"itemUniqueId": itemUniqueID},
		status: http.StatusOK,
	})
	s.checkQuote(t, q)
	c, ok := q.Cart(s.basket1)
	need(t, ok && c.Root != nil, "the first cart in the answer")
	for _, child := range c.Root.Children {
		if child.ItemUniqueID == itemUniqueID {
			s.addonNode = child.NodeID
			if child.ProductID != s.addon.ProductID || child.ParentID != s.root1 || child.Kind != "ADDON" {
				t.Errorf("added item %+v: want product %d, parent %d, kind ADDON (A4)", child, s.addon.ProductID, s.root1)
			}
		}
	}
	if s.addonNode == 0 {
		t.Fatalf("no child of item %d with itemUniqueId %s in the answer", s.root1, itemUniqueID)
	}
	quoteID, basketID, nodeID, parentID, sessionID, cpqID := s.quoteID, s.basket1, s.addonNode, s.root1, s.sessionID, s.cpqID
	s.records["item"] = s.ledger.add(fmt.Sprintf("item %d (product %d) in cart %d", s.addonNode, s.addon.ProductID, s.basket1), "",
		func() error {
			return s.client.CPQ.RemoveItem(s.cleanupCtx(), sessionID, cpqID, quoteID, basketID, nodeID, parentID)
		})
	s.quote = q
}

func (s *scenario) quantity(t *testing.T) {
	need(t, s.basket1 != 0, "the first cart")
	mark := s.rec.mark()
	q, err := s.client.CPQ.SetQuantity(s.ctx(t), s.sessionID, s.cpqID, s.quoteID, s.basket1, 3)
	check(t, err, "set quantity")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCPQQuantity), wire{
		path:      s.path("/v2/cpq/%d/quote/%d/basket/%d/quantity", s.cpqID, s.quoteID, s.basket1),
		sessionID: s.sessionID, body: map[string]any{"quantity": 3}, status: http.StatusOK,
	})
	s.checkQuote(t, q)
	if c, ok := q.Cart(s.basket1); !ok || c.Quantity != 3 {
		t.Errorf("cart %d after the quantity change: %+v, want quantity 3", s.basket1, c)
	}
	s.quote = q
}

func (s *scenario) tofList(t *testing.T) {
	need(t, s.quoteID != 0, "the quote")
	mark := s.rec.mark()
	q, err := s.client.CPQ.TOFList(s.ctx(t), s.cpqID, s.customer.ID, s.quoteID)
	check(t, err, "toflist")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCPQTOFList), wire{
		path: s.path("/v2/cpq/%d/customer/%d/quote/%d/toflist", s.cpqID, s.customer.ID, s.quoteID), status: http.StatusOK,
	})
	s.checkQuote(t, q)
	var baskets []int64
	for _, c := range q.Carts {
		baskets = append(baskets, c.BasketID)
	}
	if !slices.Contains(baskets, s.basket1) || !slices.Contains(baskets, s.basket2) || len(baskets) != 2 {
		t.Errorf("toflist quote has carts %v, want %d and %d (A4: the whole quote)", baskets, s.basket1, s.basket2)
	}
	if c, ok := q.Cart(s.basket1); !ok || findItem(c.Root, s.addonNode) == nil || c.Quantity != 3 {
		t.Errorf("toflist cart %d lacks item %d or quantity 3", s.basket1, s.addonNode)
	}
	s.quote = q
}

func (s *scenario) applicableDiscounts(t *testing.T) {
	need(t, s.quoteID != 0, "the quote")
	mark := s.rec.mark()
	discounts, err := s.client.CPQ.ApplicableDiscounts(s.ctx(t), s.sessionID, s.cpqID, s.quoteID)
	check(t, err, "applicable discounts")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCPQApplicableDiscounts), wire{
		path: s.path("/v2/cpq/%d/quote/%d/applicableDiscounts", s.cpqID, s.quoteID), sessionID: s.sessionID, status: http.StatusOK,
	})
	if len(discounts) == 0 {
		t.Fatal("no applicable discounts: the suite needs one to apply (#12)")
	}
	for _, d := range discounts {
		if d.DiscountID < 1 || d.Name == "" {
			t.Errorf("discount %s: want a discountId and a name (A5 #11)", d.Raw)
		}
		switch {
		case !d.Extra && s.discountID == 0:
			s.discountID = d.DiscountID
		case d.Extra && d.MaxValue > 0 && s.extraID == 0:
			s.extraID = d.DiscountID
			s.extraValue = math.Round(d.MaxValue/2*100) / 100
			if s.extraValue <= 0 {
				s.extraValue = d.MaxValue
			}
		}
	}
}

func (s *scenario) applyDiscounts(t *testing.T) {
	need(t, s.discountID != 0 || s.extraID != 0, "an applicable discount")
	req := apiclient.ApplyDiscountsRequest{}
	wantApplied, wantExtra := []any{}, []any{}
	if s.discountID != 0 {
		req.AppliedDiscounts = []int32{s.discountID}
		wantApplied = append(wantApplied, s.discountID)
	}
	if s.extraID != 0 {
		req.ExtraDiscountList = []apiclient.ExtraDiscountInput{{DiscountID: s.extraID, DiscountValue: s.extraValue}}
		wantExtra = append(wantExtra, map[string]any{"discountId": s.extraID, "discountValue": s.extraValue})
	}
	mark := s.rec.mark()
	q, err := s.client.CPQ.ApplyDiscounts(s.ctx(t), s.sessionID, s.cpqID, s.quoteID, req)
	check(t, err, "apply discounts")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCPQApplyDiscounts), wire{
		path: s.path("/v2/cpq/%d/quote/%d/applyDiscounts", s.cpqID, s.quoteID), sessionID: s.sessionID,
		body: map[string]any{"appliedDiscounts": wantApplied, "extraDiscountList": wantExtra}, status: http.StatusOK,
	})
	s.checkQuote(t, q)
	var applied []int32
	for _, d := range q.AppliedDiscounts {
		applied = append(applied, d.DiscountID)
	}
	if !slices.Equal(applied, req.AppliedDiscounts) {
		t.Errorf("applied discounts %v, want %v", applied, req.AppliedDiscounts)
	}
	if s.extraID != 0 && (len(q.ExtraDiscounts) != 1 || q.ExtraDiscounts[0].DiscountID != s.extraID ||
		q.ExtraDiscounts[0].DiscountValue != s.extraValue) {
		t.Errorf("extra discounts %+v, want discount %d with value %g", q.ExtraDiscounts, s.extraID, s.extraValue)
	}
	s.quote = q
}

func (s *scenario) reprice(t *testing.T) {
	need(t, s.root1 != 0, "the first cart")
	req := apiclient.RepriceRequest{ActivationPrice: 12.5, RecurringPrice: 9.99, BasketID: s.basket1, CartItemID: s.root1}
	mark := s.rec.mark()
	q, err := s.client.CPQ.Reprice(s.ctx(t), s.sessionID, s.cpqID, s.quoteID, req)
	check(t, err, "reprice")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCPQReprice), wire{
		path: s.path("/v2/cpq/%d/quote/%d/reprice", s.cpqID, s.quoteID), sessionID: s.sessionID,
		body:   map[string]any{"activationPrice": 12.5, "recurringPrice": 9.99, "basketId": s.basket1, "cartItemId": s.root1},
		status: http.StatusOK,
	})
	s.checkQuote(t, q)
	c, ok := q.Cart(s.basket1)
	need(t, ok, "the first cart in the answer")
	if it := findItem(c.Root, s.root1); it == nil || it.ActivationPrice != 12.5 || it.RecurringPrice != 9.99 || !it.Repriced {
		t.Errorf("repriced item %+v: want activation 12.5, recurring 9.99, repriced (A4, A5 #13)", it)
	}
	s.quote = q
}

func (s *scenario) packageGet(t *testing.T) {
	need(t, s.quoteID != 0, "the quote")
	mark := s.rec.mark()
	cfg, err := s.client.CPQ.PackageConfig(s.ctx(t), s.sessionID, s.cpqID, s.tofID, s.quoteID)
	check(t, err, "package configuration")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCPQPackageGet), wire{
		path: s.path("/v2/cpq/%d/tof/%d/package/%d", s.cpqID, s.tofID, s.quoteID), sessionID: s.sessionID, status: http.StatusOK,
	})
	if cfg.QuoteID != s.quoteID || cfg.TOFID != s.tofID {
		t.Errorf("package configuration of quote %d, TOF %d; want %d, %d (A5 #14)", cfg.QuoteID, cfg.TOFID, s.quoteID, s.tofID)
	}
	for _, p := range cfg.Packages {
		if !cfg.IsAssigned(p.PackageID) {
			s.packageID = p.PackageID
			return
		}
	}
	t.Fatalf("TOF %d offers no package that is not assigned yet (%s): the suite needs one for #15", s.tofID, cfg.Raw)
}

func (s *scenario) packageAdd(t *testing.T) {
	need(t, s.packageID != 0, "a package offer")
	need(t, len(s.ownerIDs) > 0, "a known sales user (owner ids of existing customers)")
	assignee := s.ownerIDs[0]
	req := apiclient.AddPackageRequest{CustomerID: s.customer.ID, CustomerQuoteID: customerQuoteID, PackageID: s.packageID,
		TOFID: s.tofID, QuoteID: s.quoteID, AssigneeUserID: assignee}
	mark := s.rec.mark()
	q, err := s.client.CPQ.AddPackage(s.ctx(t), s.sessionID, s.cpqID, req)
	check(t, err, "add package")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCPQPackageAdd), wire{
		path: s.path("/v2/cpq/%d/package", s.cpqID), sessionID: s.sessionID,
		body: map[string]any{"customerId": s.customer.ID, "customerQuoteId": customerQuoteID, "packageId": s.packageID,
			"tofId": s.tofID, "quoteId": s.quoteID, "assigneeUserId": assignee},
		status: http.StatusOK,
	})
	s.checkQuote(t, q)
	if !slices.ContainsFunc(q.Packages, func(p apiclient.QuotePackage) bool {
		return p.PackageID == s.packageID && p.TOFID == s.tofID && p.AssigneeUserID == assignee
	}) {
		t.Errorf("quote packages %+v lack package %d for TOF %d assigned to %d (A4)", q.Packages, s.packageID, s.tofID, assignee)
	}
	s.quote = q
}

func (s *scenario) changePricelist(t *testing.T) {
	need(t, s.quote != nil && s.basket1 != 0, "the quote")
	c, ok := s.quote.Cart(s.basket1)
	need(t, ok, "the first cart")
	target := c.PricelistID
	for _, p := range s.quote.AvailablePricelists {
		if p.PricelistID != c.PricelistID {
			target = p.PricelistID
			break
		}
	}
	mark := s.rec.mark()
	q, err := s.client.CPQ.ChangePricelist(s.ctx(t), s.sessionID, s.cpqID, s.quoteID,
		apiclient.ChangePricelistRequest{PricelistID: target, CartID: s.basket1})
	check(t, err, "change price list")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCPQChangePricelist), wire{
		path: s.path("/v2/cpq/%d/quote/%d/changePricelist", s.cpqID, s.quoteID), sessionID: s.sessionID,
		body: map[string]any{"pricelistId": target, "cartId": s.basket1}, status: http.StatusOK,
	})
	s.checkQuote(t, q)
	if c, ok := q.Cart(s.basket1); !ok || c.PricelistID != target {
		t.Errorf("cart %d price list after the change: %+v, want %d", s.basket1, c, target)
	}
	s.quote = q
}

func (s *scenario) customerUpdate(t *testing.T) {
	need(t, s.customer != nil, "the customer")
	current, err := s.client.Customers.Get(s.ctx(t), s.customer.ID)
	check(t, err, "get customer before the update")
	// Every field, as the portal's edit form sends it, with a new name and phone.
	in, addr := s.input, s.input.Address
	update := apiclient.CustomerUpdate{
		ID: s.customer.ID, Version: current.Version, Name: in.Name + " (updated)", TaxID: in.TaxID,
		Email: new(in.Email), Phone: new("+39 02 5550199"), Segment: in.Segment,
		Address: &apiclient.AddressUpdate{Street: new(addr.Street), City: new(addr.City), PostalCode: new(addr.PostalCode),
			Country: new(addr.Country)},
		Attributes: in.Attributes,
	}
	mark := s.rec.mark()
	c, err := s.client.Customers.Update(s.ctx(t), update)
	check(t, err, "update customer")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCustomerUpdate), wire{
		path: s.path("/v2/customer"),
		body: map[string]any{
			"id": s.customer.ID, "version": current.Version,
			"name": update.Name, "taxId": in.TaxID, "email": in.Email, "phone": *update.Phone, "segment": "BUSINESS",
			"address": map[string]any{"street": "Via della Conformità 1", "city": "Milano", "postalCode": "20121", "country": "IT"},
			"attributes": map[string]any{"createdBy": "conformance suite", "run": s.runID,
				"nested": map[string]any{"tags": []any{"a", "b"}, "level": 1}},
		},
		status: http.StatusOK,
	})
	if c.ID != s.customer.ID || c.Name != update.Name || c.Phone != *update.Phone || c.TaxID != in.TaxID || c.Version <= current.Version {
		t.Errorf("updated customer %s: want name %q, phone %q and a version above %d (A8)", c.Raw, update.Name, *update.Phone, current.Version)
	}
	if got := ownerIDsOf(c); len(s.ownerIDs) >= 2 && len(got) != 2 {
		t.Errorf("owners %v changed by a PUT without owners (A8: owners change only through their own calls)", got)
	}
	// A8: a stale version answers 409.
	_, err = s.client.Customers.Update(s.ctx(t), update)
	wantAPIError(t, err, apiclient.ErrConflict, http.StatusConflict, "CONFLICT")
	s.customer = c
	s.customerClear(t)
}

// customerClear empties the phone and the city of the suite's customer with a
// PUT naming only them (A8: "" clears an optional text field, an address
// object sets only the parts it names, absent fields keep their value) and
// reads the customer back.
func (s *scenario) customerClear(t *testing.T) {
	before := s.customer
	mark := s.rec.mark()
	cleared, err := s.client.Customers.Update(s.ctx(t), apiclient.CustomerUpdate{
		ID: before.ID, Version: before.Version, Phone: new(""), Address: &apiclient.AddressUpdate{City: new("")},
	})
	check(t, err, "clear the phone and the city")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCustomerUpdate), wire{
		path:   s.path("/v2/customer"),
		body:   map[string]any{"id": before.ID, "version": before.Version, "phone": "", "address": map[string]any{"city": ""}},
		status: http.StatusOK,
	})
	mark = s.rec.mark()
	readBack, err := s.client.Customers.Get(s.ctx(t), before.ID)
	check(t, err, "get customer after clearing")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCustomerGet), wire{path: s.path("/v2/customer/%d", before.ID), status: http.StatusOK})

	sortedCPQ := func(c *apiclient.Customer) []int32 { ids := slices.Clone(c.CPQIDs); slices.Sort(ids); return ids }
	for label, c := range map[string]*apiclient.Customer{"answer to the clearing PUT": cleared, "customer read back": readBack} {
		if c.Phone != "" || c.Address.City != "" {
			t.Errorf("%s: phone %q, city %q; want both empty (A8: \"\" clears an optional field)", label, c.Phone, c.Address.City)
		}
		if c.Name != before.Name || c.TaxID != before.TaxID || c.Email != before.Email || c.Segment != before.Segment ||
			c.Address.Street != before.Address.Street || c.Address.PostalCode != before.Address.PostalCode ||
			c.Address.Country != before.Address.Country || !slices.Equal(sortedCPQ(c), sortedCPQ(before)) || !slices.Equal(ownerIDsOf(c), ownerIDsOf(before)) {
			t.Errorf("%s %s: fields absent from the PUT changed; want them as in %s (A8: absent fields keep their value)",
				label, c.Raw, before.Raw)
		}
		equalJSON(t, label+": attributes", c.Attributes, before.Attributes)
		if c.Version <= before.Version {
			t.Errorf("%s: version %d, want above %d (A8)", label, c.Version, before.Version)
		}
	}
	if readBack.Version != cleared.Version {
		t.Errorf("version read back %d, the PUT answered %d", readBack.Version, cleared.Version)
	}
	s.customer = readBack
}

func (s *scenario) removeItem(t *testing.T) {
	need(t, s.addonNode != 0, "the added item")
	mark := s.rec.mark()
	err := s.client.CPQ.RemoveItem(s.ctx(t), s.sessionID, s.cpqID, s.quoteID, s.basket1, s.addonNode, s.root1)
	check(t, err, "remove item")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCPQRemoveItem), wire{
		path:      s.path("/v2/cpq/%d/quote/%d/basket/%d/node/%d/parent/%d", s.cpqID, s.quoteID, s.basket1, s.addonNode, s.root1),
		sessionID: s.sessionID, status: http.StatusNoContent,
	})
	s.ledger.done(s.records["item"], "removed")
	q, err := s.client.CPQ.TOFList(s.ctx(t), s.cpqID, s.customer.ID, s.quoteID)
	check(t, err, "toflist after removing the item")
	if c, ok := q.Cart(s.basket1); !ok || findItem(c.Root, s.addonNode) != nil || findItem(c.Root, s.root1) == nil {
		t.Errorf("after removing item %d, cart %d is %+v", s.addonNode, s.basket1, c)
	}
	s.quote = q
}

func (s *scenario) removeCart(t *testing.T) {
	need(t, s.basket2 != 0, "the second cart")
	mark := s.rec.mark()
	err := s.client.CPQ.RemoveCart(s.ctx(t), s.sessionID, s.cpqID, s.quoteID, s.basket2)
	check(t, err, "remove cart")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCPQRemoveCart), wire{
		path:      s.path("/v2/cpq/%d/quote/%d/basket/%d", s.cpqID, s.quoteID, s.basket2),
		sessionID: s.sessionID, status: http.StatusNoContent,
	})
	s.ledger.done(s.records["cart2"], "removed")
	q, err := s.client.CPQ.TOFList(s.ctx(t), s.cpqID, s.customer.ID, s.quoteID)
	check(t, err, "toflist after removing the cart")
	if _, still := q.Cart(s.basket2); still || len(q.Carts) != 1 {
		t.Errorf("after removing cart %d the quote has %d carts", s.basket2, len(q.Carts))
	}
	s.quote = q
}

// ---- Attachments (4.2) ----

const attachmentContentType = "application/octet-stream"

func (s *scenario) attachmentFileName() string { return "conformance-" + s.runID + ".bin" }

func (s *scenario) attachmentUpload(t *testing.T) {
	need(t, s.quoteID != 0, "the quote")
	// A small generated file: text, every byte value and random bytes, so a
	// transfer that alters bytes or stops short shows.
	var data bytes.Buffer
	fmt.Fprintf(&data, "conformance attachment of run %s, quote %d\n", s.runID, s.quoteID)
	for i := range 256 {
		data.WriteByte(byte(i))
	}
	random := make([]byte, 2048)
	_, _ = rand.Read(random)
	data.Write(random)
	s.fileData = data.Bytes()
	sum := sha256.Sum256(s.fileData)

	mark := s.rec.mark()
	a, err := s.client.Attachments.Upload(s.ctx(t), s.quoteID, apiclient.AttachmentTypeOther, s.attachmentFileName(),
		attachmentContentType, int64(len(s.fileData)), bytes.NewReader(s.fileData))
	check(t, err, "upload attachment")
	ex := s.sent(t, mark, apiclient.EndpointAttachmentUpload)
	if mt, _, _ := mime.ParseMediaType(firstHeader(ex.header, "Content-Type")); mt != "multipart/form-data" {
		t.Errorf("upload Content-Type %q, want multipart/form-data (A6)", firstHeader(ex.header, "Content-Type"))
	}
	if got := ex.url.EscapedPath(); got != s.path("/v2/attachment/file/quote/%d/attachmentType/OTHER", s.quoteID) {
		t.Errorf("upload path %s", got)
	}
	if ex.status != http.StatusCreated || len(ex.url.Query()) != 0 {
		t.Errorf("upload answered %d with query %q, want 201 and no query (A6)", ex.status, ex.url.RawQuery)
	}
	checkMultipart(t, ex, s.attachmentFileName(), s.fileData)

	s.attachmentID = a.AttachmentID
	attachmentID, quoteID := a.AttachmentID, s.quoteID
	s.records["attachment"] = s.ledger.add(fmt.Sprintf("attachment %d of quote %d", a.AttachmentID, s.quoteID), "",
		func() error { return s.client.Attachments.Delete(s.cleanupCtx(), attachmentID, quoteID) })
	if a.AttachmentID < 1 || a.QuoteID != s.quoteID || a.AttachmentType != apiclient.AttachmentTypeOther ||
		a.FileName != s.attachmentFileName() || a.ContentType != attachmentContentType || a.Size != int64(len(s.fileData)) ||
		a.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("upload answered %s; want the attachment with its name, type, size %d and sha256 %x (A6)", a.Raw, len(s.fileData), sum)
	}
}

// checkMultipart parses the recorded upload body: one part named "file" with
// the file name, its Content-Type and the bytes (A6).
func checkMultipart(t *testing.T, ex *exchange, fileName string, data []byte) {
	t.Helper()
	_, params, err := mime.ParseMediaType(firstHeader(ex.header, "Content-Type"))
	if err != nil || params["boundary"] == "" {
		t.Fatalf("upload Content-Type %q has no boundary", firstHeader(ex.header, "Content-Type"))
	}
	mr := multipart.NewReader(bytes.NewReader(ex.sentBody()), params["boundary"])
	parts := 0
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the upload body is not multipart/form-data: %v", err)
		}
		parts++
		got, err := io.ReadAll(part)
		if err != nil {
			t.Fatalf("reading the upload part: %v", err)
		}
		if part.FormName() != "file" || part.FileName() != fileName || part.Header.Get("Content-Type") != attachmentContentType ||
			!bytes.Equal(got, data) {
			t.Errorf("upload part %q, file name %q, Content-Type %q, %d bytes; want \"file\", %q, %q and the %d bytes of the file (A6)",
				part.FormName(), part.FileName(), part.Header.Get("Content-Type"), len(got), fileName, attachmentContentType, len(data))
		}
	}
	if parts != 1 {
		t.Errorf("the upload has %d parts, want exactly one (A6)", parts)
	}
}

func firstHeader(h http.Header, name string) string {
	v, _ := headerValue(h, name)
	return v
}

func (s *scenario) attachmentDownload(t *testing.T) {
	need(t, s.attachmentID != 0, "the attachment")
	mark := s.rec.mark()
	d, err := s.client.Attachments.Download(s.ctx(t), s.attachmentID, s.quoteID)
	check(t, err, "download attachment")
	got, err := io.ReadAll(d.Body)
	_ = d.Close()
	check(t, err, "reading the download")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointAttachmentDownload), wire{
		path: s.path("/v2/attachment/%d/quote/%d", s.attachmentID, s.quoteID), status: http.StatusOK,
	})
	if !bytes.Equal(got, s.fileData) {
		t.Errorf("downloaded %d bytes that differ from the %d uploaded", len(got), len(s.fileData))
	}
	if d.ContentType != attachmentContentType || d.FileName != s.attachmentFileName() ||
		(d.ContentLength != -1 && d.ContentLength != int64(len(s.fileData))) {
		t.Errorf("download Content-Type %q, file name %q, length %d; want %q, %q, %d (A6)",
			d.ContentType, d.FileName, d.ContentLength, attachmentContentType, s.attachmentFileName(), len(s.fileData))
	}
	// A6: the quote document lists the attachments.
	q, err := s.client.CPQ.TOFList(s.ctx(t), s.cpqID, s.customer.ID, s.quoteID)
	check(t, err, "toflist with the attachment")
	if !slices.ContainsFunc(q.Attachments, func(a apiclient.Attachment) bool { return a.AttachmentID == s.attachmentID }) {
		t.Errorf("the quote document lists attachments %+v, not %d (A6)", q.Attachments, s.attachmentID)
	}
}

func (s *scenario) attachmentDelete(t *testing.T) {
	need(t, s.attachmentID != 0, "the attachment")
	mark := s.rec.mark()
	err := s.client.Attachments.Delete(s.ctx(t), s.attachmentID, s.quoteID)
	check(t, err, "delete attachment")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointAttachmentDelete), wire{
		path: s.path("/v2/attachment/%d/quote/%d", s.attachmentID, s.quoteID), status: http.StatusNoContent,
	})
	s.ledger.done(s.records["attachment"], "deleted")
	_, err = s.client.Attachments.Download(s.ctx(t), s.attachmentID, s.quoteID)
	wantAPIError(t, err, apiclient.ErrNotFound, http.StatusNotFound, "NOT_FOUND")
}

// ---- Contracts, signature, archive, audits (4.2 to 4.4) ----

func (s *scenario) contractGenerate(t *testing.T) {
	need(t, s.quoteID != 0, "the quote")
	mark := s.rec.mark()
	res, err := s.client.Contracts.Generate(s.ctx(t), s.quoteID)
	check(t, err, "generate contract")
	defer res.Close()
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointContractGenerate), wire{
		path: s.path("/v2/contract/%d/generate", s.quoteID), emptyBody: true,
		accept: "application/json, application/pdf", status: http.StatusCreated,
	})
	if !res.Created {
		t.Error("a first generation answered 200, want 201 (A7)")
	}
	switch {
	case res.PDF != nil:
		pdf, err := io.ReadAll(res.PDF.Body)
		check(t, err, "reading the generated PDF")
		if !bytes.HasPrefix(pdf, []byte("%PDF")) {
			t.Errorf("generate answered application/pdf that does not start with %%PDF: %.40q", pdf)
		}
	case res.Contract != nil:
		c := res.Contract
		if c.QuoteID != s.quoteID || c.CustomerID != s.customer.ID || c.CPQID != s.cpqID || c.Status != "GENERATED" {
			t.Errorf("generated contract %s: want quote %d, customer %d, configurator %d, status GENERATED (A7)",
				c.Raw, s.quoteID, s.customer.ID, s.cpqID)
		}
	default:
		t.Fatal("generate answered neither a contract document nor a PDF")
	}
	s.contractID, s.contractNumber = res.ContractID, res.ContractNumber
	if s.contractID == 0 || s.contractNumber == "" {
		// A PDF answer may lack the headers: the quote document names the contract.
		q, err := s.client.CPQ.TOFList(s.ctx(t), s.cpqID, s.customer.ID, s.quoteID)
		check(t, err, "toflist for the contract")
		need(t, q.Contract != nil, "the quote's contract reference")
		s.contractID, s.contractNumber = q.Contract.ContractID, q.Contract.ContractNumber
	}
	if s.contractID < 1 || s.contractNumber == "" {
		t.Fatalf("contract id %d, number %q: want both", s.contractID, s.contractNumber)
	}
	s.records["contract"] = s.ledger.add(fmt.Sprintf("contract %d (%s) of quote %d", s.contractID, s.contractNumber, s.quoteID),
		"kept: the v2 API has no call to delete a contract", nil)

	// A7: generating again answers 200 with the same contract.
	mark = s.rec.mark()
	again, err := s.client.Contracts.Generate(s.ctx(t), s.quoteID)
	check(t, err, "generate the contract again")
	defer again.Close()
	if ex := s.sent(t, mark, apiclient.EndpointContractGenerate); ex.status != http.StatusOK || again.Created {
		t.Errorf("generating again answered %d (created %v), want 200 (A7)", ex.status, again.Created)
	}
	if again.ContractID != 0 && again.ContractID != s.contractID {
		t.Errorf("generating again answered contract %d, want %d (A7)", again.ContractID, s.contractID)
	}
}

func (s *scenario) contractGet(t *testing.T) {
	need(t, s.contractID != 0, "the contract")
	mark := s.rec.mark()
	c, err := s.client.Contracts.Get(s.ctx(t), s.contractID)
	check(t, err, "get contract")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointContractGet), wire{
		path: s.path("/v2/contract/%d", s.contractID), accept: "application/json", status: http.StatusOK,
	})
	if c.ContractID != s.contractID || c.ContractNumber != s.contractNumber || c.QuoteID != s.quoteID ||
		c.CustomerID != s.customer.ID || c.Customer.ID != s.customer.ID || c.Customer.TaxID != s.customer.TaxID ||
		c.Status != "GENERATED" || c.Archive.Archived {
		t.Errorf("contract %s: want %d %s of quote %d, customer %d, GENERATED, not archived (A7)",
			c.Raw, s.contractID, s.contractNumber, s.quoteID, s.customer.ID)
	}

	// A7: the same endpoint answers the PDF to Accept: application/pdf.
	mark = s.rec.mark()
	d, err := s.client.Contracts.DownloadPDF(s.ctx(t), s.contractID)
	check(t, err, "download contract PDF")
	pdf, err := io.ReadAll(d.Body)
	_ = d.Close()
	check(t, err, "reading the contract PDF")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointContractGet), wire{
		path: s.path("/v2/contract/%d", s.contractID), accept: "application/pdf", status: http.StatusOK,
	})
	if !bytes.HasPrefix(pdf, []byte("%PDF")) || d.ContentType != "application/pdf" {
		t.Errorf("contract PDF: Content-Type %q, starts with %.20q; want application/pdf and %%PDF", d.ContentType, pdf)
	}
	if want := "contract-" + s.contractNumber + ".pdf"; d.FileName != want {
		t.Errorf("contract PDF file name %q, want %q (A7)", d.FileName, want)
	}
	if sum := sha256.Sum256(pdf); c.PDF.SHA256 != "" && c.PDF.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("contract PDF sha256 %x, the contract document says %s (A7)", sum, c.PDF.SHA256)
	}
}

func (s *scenario) contractGetByNumber(t *testing.T) {
	need(t, s.contractNumber != "", "the contract number")
	mark := s.rec.mark()
	c, err := s.client.Contracts.GetByNumber(s.ctx(t), s.contractNumber)
	check(t, err, "get contract by number")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointContractGetByNumber), wire{
		path: s.path("/v2/contract/bycontractnumber/%s", url.PathEscape(s.contractNumber)), status: http.StatusOK,
	})
	if c.ContractID != s.contractID || c.ContractNumber != s.contractNumber {
		t.Errorf("contract by number %q: %d %q, want %d", s.contractNumber, c.ContractID, c.ContractNumber, s.contractID)
	}
}

func (s *scenario) signatureCreate(t *testing.T) {
	need(t, s.contractID != 0, "the contract")
	in := apiclient.SignatureInput{ContractID: s.contractID, Email: "signer+" + s.runID + "@example.com",
		SignerName: "Conformance Signer", Message: "Please sign (conformance run " + s.runID + ")"}
	mark := s.rec.mark()
	sr, err := s.client.Signatures.Create(s.ctx(t), in)
	check(t, err, "request signature")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointSignatureCreate), wire{
		path:   s.path("/v2/signature"),
		body:   map[string]any{"contractId": s.contractID, "email": in.Email, "signerName": in.SignerName, "message": in.Message},
		status: http.StatusCreated,
	})
	contractID := s.contractID
	s.records["signature"] = s.ledger.add(fmt.Sprintf("signature request %s on contract %d", sr.SignatureRequestID, s.contractID), "",
		func() error { return s.client.Signatures.Delete(s.cleanupCtx(), contractID) })
	if sr.SignatureRequestID == "" || sr.Status != "SENT" || sr.Email != in.Email || sr.SignerName != in.SignerName {
		t.Errorf("signature request %s: want an id, status SENT, the e-mail and signer (A7)", sr.Raw)
	}
	// A7: one active request per contract.
	_, err = s.client.Signatures.Create(s.ctx(t), in)
	wantAPIError(t, err, apiclient.ErrConflict, http.StatusConflict, "CONFLICT")
	c, err := s.client.Contracts.Get(s.ctx(t), s.contractID)
	check(t, err, "get contract with a signature request")
	if active, ok := c.ActiveSignatureRequest(); !ok || active.Email != in.Email || c.Status != "SIGNATURE_REQUESTED" {
		t.Errorf("contract %s: want status SIGNATURE_REQUESTED and the active request to %s (A7)", c.Raw, in.Email)
	}
}

func (s *scenario) signatureDelete(t *testing.T) {
	need(t, s.records["signature"] != nil, "the signature request")
	mark := s.rec.mark()
	err := s.client.Signatures.Delete(s.ctx(t), s.contractID)
	check(t, err, "remove signature request")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointSignatureDelete), wire{
		path: s.path("/v2/signature"), query: url.Values{"contractId": {fmt.Sprint(s.contractID)}}, status: http.StatusNoContent,
	})
	s.ledger.done(s.records["signature"], "removed")
	// A7: 404 when there is no active request.
	err = s.client.Signatures.Delete(s.ctx(t), s.contractID)
	wantAPIError(t, err, apiclient.ErrNotFound, http.StatusNotFound, "NOT_FOUND")
	c, err := s.client.Contracts.Get(s.ctx(t), s.contractID)
	check(t, err, "get contract after the removal")
	if _, active := c.ActiveSignatureRequest(); active ||
		!slices.ContainsFunc(c.SignatureRequests, func(r apiclient.SignatureRequest) bool { return r.Status == "REMOVED" }) {
		t.Errorf("contract %s: want the request REMOVED and none active (A7)", c.Raw)
	}
}

func (s *scenario) contractArchive(t *testing.T) {
	need(t, s.contractNumber != "", "the contract number")
	mark := s.rec.mark()
	a, err := s.client.Contracts.Archive(s.ctx(t), s.contractNumber)
	check(t, err, "archive contract")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointContractArchive), wire{
		path: s.path("/v2/contract/contractNumber/%s/archive", url.PathEscape(s.contractNumber)), status: http.StatusOK,
	})
	if a.ContractNumber != s.contractNumber || !a.Archived || a.ArchiveID == "" || a.ArchivedAt.IsZero() {
		t.Errorf("archive answered %s: want the number, archived, an archiveId and archivedAt (A7)", a.Raw)
	}
	if r := s.records["contract"]; r != nil {
		s.ledger.done(r, "kept and archived: the v2 API has no call to delete a contract")
	}
	// A7: archiving again answers the same archive.
	again, err := s.client.Contracts.Archive(s.ctx(t), s.contractNumber)
	check(t, err, "archive contract again")
	if again.ArchiveID != a.ArchiveID {
		t.Errorf("archiving again answered archive %q, want %q (A7: idempotent)", again.ArchiveID, a.ArchiveID)
	}
}

func (s *scenario) archivePayload(t *testing.T) {
	need(t, s.contractNumber != "", "the contract number")
	mark := s.rec.mark()
	p, err := s.client.Contracts.DigitalArchivePayload(s.ctx(t), s.contractNumber)
	check(t, err, "digital archive payload")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointContractDigitalArchivePayload), wire{
		path: s.path("/v2/contract/digitalarchivepayload/%s", url.PathEscape(s.contractNumber)), status: http.StatusOK,
	})
	var payload map[string]any
	if err := json.Unmarshal(p.Raw, &payload); err != nil || len(payload) == 0 {
		t.Fatalf("archive payload %.300s: want a non-empty JSON object (A7)", p.Raw)
	}
	number, _ := json.Marshal(s.contractNumber)
	if !bytes.Contains(p.Raw, number) {
		t.Errorf("archive payload does not name contract %s (A7: contract, customer, quote, ...)", s.contractNumber)
	}
}

func (s *scenario) profileDelete(t *testing.T) {
	need(t, s.profile != nil, "the profile")
	mark := s.rec.mark()
	err := s.client.Customers.DeleteProfile(s.ctx(t), s.customer.ID, s.profile.ProfileID)
	check(t, err, "delete profile")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointCustomerProfileDelete), wire{
		path:   s.path("/v2/customer/customerprofile"),
		query:  url.Values{"customerId": {fmt.Sprint(s.customer.ID)}, "profileId": {fmt.Sprint(s.profile.ProfileID)}},
		status: http.StatusNoContent,
	})
	s.ledger.done(s.records["profile"], "deleted")
	c, err := s.client.Customers.Get(s.ctx(t), s.customer.ID)
	check(t, err, "get customer after deleting the profile")
	if slices.ContainsFunc(c.Profiles, func(p apiclient.Profile) bool { return p.ProfileID == s.profile.ProfileID }) {
		t.Errorf("customer %d still has profile %d", s.customer.ID, s.profile.ProfileID)
	}
}

func (s *scenario) validationAudit(t *testing.T) {
	need(t, s.quoteID != 0, "the quote")
	mark := s.rec.mark()
	a, err := s.client.Contracts.ValidationAudit(s.ctx(t), s.quoteID)
	check(t, err, "validation audit")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointContractValidationAudit), wire{
		path: s.path("/v2/contract/getjsonvalidationaudit/%d", s.quoteID), status: http.StatusOK,
	})
	if a.QuoteID != s.quoteID || a.CustomerID != s.customer.ID || len(a.Entries) == 0 {
		t.Fatalf("audit of quote %d, customer %d with %d entries; want quote %d, customer %d (A7)",
			a.QuoteID, a.CustomerID, len(a.Entries), s.quoteID, s.customer.ID)
	}
	actions := map[string]bool{}
	for _, e := range a.Entries {
		if e.Action == "" || e.At.IsZero() {
			t.Errorf("audit entry %+v: want an action and a time (A7)", e)
		}
		actions[e.Action] = true
	}
	// Every action of A7 happened to this quote in the steps before.
	var missing []string
	for _, want := range []string{"QUOTE_CREATED", "CART_ADDED", "CART_REMOVED", "ITEM_ADDED", "ITEM_REMOVED", "QUANTITY_CHANGED",
		"DISCOUNTS_APPLIED", "REPRICED", "PACKAGE_ADDED", "PRICELIST_CHANGED", "ATTACHMENT_ADDED", "ATTACHMENT_DELETED",
		"CONTRACT_GENERATED", "SIGNATURE_REQUESTED", "SIGNATURE_REMOVED", "CONTRACT_ARCHIVED", "CUSTOMER_UPDATED"} {
		if !actions[want] {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		t.Errorf("the audit lacks actions %v of the steps the suite made (A7)", missing)
	}
}

func (s *scenario) validationAuditPDF(t *testing.T) {
	need(t, s.quoteID != 0, "the quote")
	mark := s.rec.mark()
	d, err := s.client.Contracts.ValidationAuditPDF(s.ctx(t), s.quoteID)
	check(t, err, "validation audit PDF")
	pdf, err := io.ReadAll(d.Body)
	_ = d.Close()
	check(t, err, "reading the audit PDF")
	s.expectWire(t, s.sent(t, mark, apiclient.EndpointContractValidationAuditPDF), wire{
		path: s.path("/v2/contract/downloadvalidationauditpdf/%d", s.quoteID), accept: "application/pdf", status: http.StatusOK,
	})
	if !bytes.HasPrefix(pdf, []byte("%PDF")) {
		t.Errorf("audit PDF starts with %.20q, want %%PDF", pdf)
	}
}

// ---- helpers ----

// cleanupCtx answers a context for cleanups, which run after the test's
// context has ended.
func (s *scenario) cleanupCtx() context.Context {
	return apiclient.WithToken(context.Background(), s.target.token)
}

// newRunID answers a lower-case id unique to this run, used in names, e-mail
// addresses and search queries.
func newRunID(t *testing.T) string {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("random run id: %v", err)
	}
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// newTaxID answers a random tax id of the A8 form ^[A-Z]{2}[A-Z0-9]{8,14}$.
func newTaxID(t *testing.T) string {
	n, err := rand.Int(rand.Reader, big.NewInt(1e11))
	if err != nil {
		t.Fatalf("random tax id: %v", err)
	}
	return fmt.Sprintf("IT%011d", n.Int64())
}

// logSummary logs the target, the endpoints the scenario called and the data
// it created.
func (s *scenario) logSummary(t *testing.T, called map[string]int, requests int) {
	total := len(apiclient.Endpoints())
	n := 0
	for _, ep := range apiclient.Endpoints() {
		if called[ep.Name] > 0 {
			n++
		}
	}
	simView := "not available (an external target is checked from the client's side only)"
	if s.target.sim != nil {
		simView = fmt.Sprintf("%d requests compared with what the simulator received", s.simChecks)
	}
	cleanups := ""
	if extra := s.rec.mark() - requests; extra > 0 {
		cleanups = fmt.Sprintf(", then %d cleanup requests", extra)
	}
	t.Logf("conformance summary\n  target: %s\n  endpoints called through the client: %d/%d (%d requests in all%s)\n"+
		"  simulator view: %s\n  data created (run %s):%s",
		s.target.describe(), n, total, requests, cleanups, simView, s.runID, s.ledger.summary())
}
