package v2sim

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestEndpointNames(t *testing.T) {
	t.Parallel()
	sim := New(Options{Customers: 1, TempDir: t.TempDir()})
	defer sim.Close()
	want := []string{"cpq.list", "cpq.init", "cpq.addcart", "cpq.addcart_existing", "cpq.additem", "cpq.removeitem", "cpq.removecart",
		"cpq.quantity", "cpq.validproducts", "cpq.toflist", "cpq.discounts", "cpq.applydiscounts", "cpq.reprice", "cpq.package.get",
		"cpq.package.add", "cpq.pricelist", "attachments.upload", "attachments.delete", "attachments.download", "contracts.generate",
		"signature.request", "signature.remove", "contracts.get", "contracts.bynumber", "contracts.archive", "contracts.archivepayload",
		"contracts.audit", "contracts.auditpdf", "customers.get", "customers.list", "customers.onlinesearch", "customers.create",
		"customers.update", "customers.owners.replace", "customers.owners.add", "customers.owners.change", "customers.profile.create",
		"customers.profile.delete"}
	got := sim.EndpointNames()
	if !slices.Equal(got, want) {
		t.Errorf("EndpointNames =\n%v\nwant\n%v", got, want)
	}
	if sum := sim.Summary(); sum.Endpoints != 38 || sum.Customers != 1 || sum.Configurators != 4 || sum.Owners != 10 {
		t.Errorf("Summary = %+v", sum)
	}
}

// TestRequestLogRecordsEveryEndpoint drives all 38 endpoints and checks each is recorded under its name with
// what the client sent.
func TestRequestLogRecordsEveryEndpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	sid, q := e.newQuote(30)
	b := q.Carts[0].BasketID
	root := q.Carts[0].Root.NodeID
	base := path("/v2/cpq/1/quote/%d", q.QuoteID)
	var doc tQuote
	e.do("POST", path("/v2/cpq/1/tof/12/addcart?quoteId=%d", q.QuoteID), `{}`, withSession(sid)).wantStatus(t, 200)
	e.do("POST", path("%s/basket/%d/parent/%d/additemtocart", base, b, root), `{"offerTypeId":11,"productId":106,"offerTypeProductId":1106,"itemUniqueId":"5b1f3c1e-0d2a-4e3b-9c4d-5e6f7a8b9c0d"}`, withSession(sid)).wantStatus(t, 200).decode(t, &doc)
	e.do("DELETE", path("%s/basket/%d/node/%d/parent/%d", base, b, doc.Carts[0].Root.Children[0].NodeID, root), nil, withSession(sid)).wantStatus(t, 204)
	e.do("PUT", path("%s/basket/%d/quantity", base, b), `{"quantity":2}`, withSession(sid)).wantStatus(t, 200)
	e.do("GET", "/v2/cpq/1/tof/11/validproducts", nil, withSession(sid)).wantStatus(t, 200)
	e.do("GET", path("/v2/cpq/1/customer/30/quote/%d/toflist", q.QuoteID), nil).wantStatus(t, 200)
	e.do("GET", base+"/applicableDiscounts", nil, withSession(sid)).wantStatus(t, 200)
	e.do("PUT", base+"/applyDiscounts", `{"appliedDiscounts":[2],"extraDiscountList":[]}`, withSession(sid)).wantStatus(t, 200)
	e.do("PUT", base+"/reprice", path(`{"activationPrice":1,"recurringPrice":2,"basketId":%d,"cartItemId":%d}`, b, root), withSession(sid)).wantStatus(t, 200)
	e.do("GET", path("/v2/cpq/1/tof/11/package/%d", q.QuoteID), nil, withSession(sid)).wantStatus(t, 200)
	e.do("POST", "/v2/cpq/1/package", path(`{"customerId":30,"customerQuoteId":0,"packageId":31,"tofId":11,"quoteId":%d,"assigneeUserId":1001}`, q.QuoteID), withSession(sid)).wantStatus(t, 200)
	e.do("PUT", base+"/changePricelist", path(`{"pricelistId":2,"cartId":%d}`, b), withSession(sid)).wantStatus(t, 200)
	e.do("GET", "/v2/cpq/list", nil).wantStatus(t, 200)
	var a tAttachment
	e.upload(q.QuoteID, "PRIVACY_CONSENT", "consent.pdf", "application/pdf", []byte("%PDF-1.4 consent")).wantStatus(t, 201).decode(t, &a)
	e.do("GET", path("/v2/attachment/%d/quote/%d", a.AttachmentID, q.QuoteID), nil).wantStatus(t, 200)
	e.do("DELETE", path("/v2/attachment/%d/quote/%d", a.AttachmentID, q.QuoteID), nil).wantStatus(t, 204)
	var c tContract
	e.do("POST", path("/v2/contract/%d/generate", q.QuoteID), nil).wantStatus(t, 201).decode(t, &c)
	e.do("POST", "/v2/signature", path(`{"contractId":%d,"email":"a@b.it","signerName":"A","message":""}`, c.ContractID)).wantStatus(t, 201)
	e.do("DELETE", path("/v2/signature?contractId=%d", c.ContractID), nil).wantStatus(t, 204)
	e.do("GET", path("/v2/contract/%d", c.ContractID), nil).wantStatus(t, 200)
	e.do("GET", "/v2/contract/bycontractnumber/"+c.ContractNumber, nil).wantStatus(t, 200)
	e.do("GET", "/v2/contract/contractNumber/"+c.ContractNumber+"/archive", nil).wantStatus(t, 200)
	e.do("GET", "/v2/contract/digitalarchivepayload/"+c.ContractNumber, nil).wantStatus(t, 200)
	e.do("GET", path("/v2/contract/getjsonvalidationaudit/%d", q.QuoteID), nil).wantStatus(t, 200)
	e.do("GET", path("/v2/contract/downloadvalidationauditpdf/%d", q.QuoteID), nil).wantStatus(t, 200)
	e.do("GET", "/v2/customer/30", nil).wantStatus(t, 200)
	e.do("GET", "/v2/customer/", nil).wantStatus(t, 200)
	e.do("GET", "/v2/customer/onlinesearch/1?query=a", nil).wantStatus(t, 200)
	var created tCustomer
	e.do("POST", "/v2/customer", validCustomerBody()).wantStatus(t, 201).decode(t, &created)
	e.do("PUT", "/v2/customer", path(`{"id":%d,"name":"Renamed"}`, created.ID)).wantStatus(t, 200)
	e.do("PUT", path("/v2/customer/%d/owners", created.ID), `{"ownerIds":[1001]}`).wantStatus(t, 200)
	e.do("POST", path("/v2/customer/%d/owner/1002", created.ID), nil).wantStatus(t, 200)
	e.do("PUT", path("/v2/customer/%d/owner/change", created.ID), `{"currentOwnerId":1002,"newOwnerId":1003}`).wantStatus(t, 200)
	var p struct{ ProfileID int32 }
	e.do("POST", "/v2/customer/customerprofile", path(`{"customerId":%d,"profileType":"TECHNICAL"}`, created.ID)).wantStatus(t, 201).decode(t, &p)
	e.do("DELETE", path("/v2/customer/customerprofile?customerId=%d&profileId=%d", created.ID, p.ProfileID), nil).wantStatus(t, 204)
	e.do("DELETE", path("%s/basket/%d", base, b), nil, withSession(sid)).wantStatus(t, 204)

	reqs := e.sim.Requests()
	seen := map[string]RecordedRequest{}
	for _, r := range reqs {
		if r.Endpoint == "" {
			t.Errorf("request %s %s has no endpoint name", r.Method, r.RequestURI)
		}
		seen[r.Endpoint] = r
	}
	for _, name := range e.sim.EndpointNames() {
		if _, ok := seen[name]; !ok {
			t.Errorf("endpoint %s was not recorded", name)
		}
	}
	qty := seen["cpq.quantity"]
	if qty.Method != "PUT" || qty.Body != `{"quantity":2}` || qty.Status != 200 || qty.Header.Get(sessionHeader) != sid ||
		qty.Header.Get("Content-Type") != "application/json" || qty.Header.Get("Authorization") != "Bearer test-token" ||
		qty.EscapedPath != path("%s/basket/%d/quantity", base, b) {
		t.Errorf("recorded quantity call %+v", qty)
	}
	if ex := seen["cpq.addcart_existing"]; ex.RequestURI != path("/v2/cpq/1/tof/12/addcart?quoteId=%d", q.QuoteID) || ex.EscapedPath != "/v2/cpq/1/tof/12/addcart" {
		t.Errorf("recorded call 4 %+v", ex)
	}
	if up := seen["attachments.upload"]; up.Body != "" || up.Status != 201 {
		t.Errorf("uploads are recorded without their body: %+v", up)
	}
	if rm := seen["signature.remove"]; rm.Status != http.StatusNoContent || !strings.Contains(rm.RequestURI, "contractId=") {
		t.Errorf("recorded signature removal %+v", rm)
	}
	e.sim.ResetRequests()
	if n := len(e.sim.Requests()); n != 0 {
		t.Errorf("%d requests after reset", n)
	}
}

func TestRequestLogBodyExcerptAndBound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	big := strings.Repeat("x", 10<<10)
	body := `{"name": "Big Attributes S.r.l.", "taxId": "IT55555555555", "segment": "BUSINESS", "attributes": {"notes": "` + big + `"}}`
	var c tCustomer
	e.do("POST", "/v2/customer", body).wantStatus(t, 201).decode(t, &c)
	if !strings.Contains(string(c.Attributes), big) {
		t.Fatal("the handler did not get the whole body")
	}
	reqs := e.sim.Requests()
	if got := reqs[len(reqs)-1].Body; len(got) != bodyExcerptMax || got != body[:bodyExcerptMax] {
		t.Errorf("excerpt is %d bytes, want the first %d", len(got), bodyExcerptMax)
	}

	l := newRequestLog(3)
	for i := range 5 {
		l.add(RecordedRequest{Status: i})
	}
	got := l.snapshot()
	if len(got) != 3 || got[0].Status != 2 || got[2].Status != 4 {
		t.Errorf("ring = %+v, want the last 3 in order", got)
	}
}
