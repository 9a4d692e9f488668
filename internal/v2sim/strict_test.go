package v2sim

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestAuthenticationRequired(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	for _, auth := range []string{"", "Basic dXNlcjpwYXNz", "Bearer", "Bearer    ", "Token abc"} {
		opt := withHeader("Authorization", auth)
		if auth == "" {
			opt = withoutHeader("Authorization")
		}
		for _, p := range []string{"/v2/cpq/list", "/v2/customer/1", "/v2/contract/1"} {
			r := e.do("GET", p, nil, opt)
			r.wantError(t, http.StatusUnauthorized, codeUnauthorized)
			if got := r.header.Get("WWW-Authenticate"); got != "Bearer" {
				t.Errorf("Authorization %q on %s: WWW-Authenticate = %q, want Bearer", auth, p, got)
			}
		}
	}
	// The scheme is case-insensitive.
	e.do("GET", "/v2/cpq/list", nil, withHeader("Authorization", "bearer abc")).wantStatus(t, http.StatusOK)
}

// sessionCalls are calls 3 to 9 and 11 to 16 on a quote, each well-formed, so only X-SessionId decides.
func sessionCalls(q tQuote) []struct{ name, method, path, body string } {
	b := q.Carts[0].BasketID
	root := q.Carts[0].Root.NodeID
	base := path("/v2/cpq/1/quote/%d", q.QuoteID)
	return []struct{ name, method, path, body string }{
		{"3 addcart", "POST", "/v2/cpq/1/tof/11/addcart", `{"productId":102,"tofProductId":1102,"customerId":7,"customerQuoteId":0,"label":""}`},
		{"4 addcart existing", "POST", path("/v2/cpq/1/tof/12/addcart?quoteId=%d", q.QuoteID), `{}`},
		{"5 additem", "POST", path("%s/basket/%d/parent/%d/additemtocart", base, b, root), `{"offerTypeId":11,"productId":104,"offerTypeProductId":1104,"itemUniqueId":"0b7e4a0c-92f4-4a7c-bb55-0d8f7c3e0a11"}`},
		{"6 removeitem", "DELETE", path("%s/basket/%d/node/%d/parent/%d", base, b, root+1, root), ""},
		{"7 removecart", "DELETE", path("%s/basket/%d", base, b), ""},
		{"8 quantity", "PUT", path("%s/basket/%d/quantity", base, b), `{"quantity":2}`},
		{"9 validproducts", "GET", "/v2/cpq/1/tof/11/validproducts", ""},
		{"11 discounts", "GET", base + "/applicableDiscounts", ""},
		{"12 applydiscounts", "PUT", base + "/applyDiscounts", `{"appliedDiscounts":[1],"extraDiscountList":[]}`},
		{"13 reprice", "PUT", base + "/reprice", path(`{"activationPrice":1,"recurringPrice":2,"basketId":%d,"cartItemId":%d}`, b, root)},
		{"14 package get", "GET", path("/v2/cpq/1/tof/11/package/%d", q.QuoteID), ""},
		{"15 package add", "POST", "/v2/cpq/1/package", path(`{"customerId":7,"customerQuoteId":0,"packageId":31,"tofId":11,"quoteId":%d,"assigneeUserId":1001}`, q.QuoteID)},
		{"16 pricelist", "PUT", base + "/changePricelist", path(`{"pricelistId":2,"cartId":%d}`, b)},
	}
}

func (e *env) call(method, p, body string, opts ...reqOpt) response {
	e.t.Helper()
	if body == "" {
		return e.do(method, p, nil, opts...)
	}
	return e.do(method, p, body, opts...)
}

func TestSessionRuleR4(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{SessionTTL: 30 * time.Minute})
	sid, q := e.newQuote(7)
	otherCPQ := e.session(2, 7)
	calls := sessionCalls(q)

	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			e.call(c.method, c.path, c.body).wantError(t, http.StatusBadRequest, codeSessionRequired)
			e.call(c.method, c.path, c.body, withSession("")).wantError(t, http.StatusBadRequest, codeSessionRequired)
			e.call(c.method, c.path, c.body, withSession("no-such-session")).wantError(t, http.StatusBadRequest, codeSessionInvalid)
			msg := e.call(c.method, c.path, c.body, withSession(otherCPQ)).wantError(t, http.StatusBadRequest, codeSessionInvalid).Message
			if !strings.Contains(msg, "configurator 2") {
				t.Errorf("message %q does not name the session's configurator", msg)
			}
		})
	}

	// Calls 1, 2 and 10 are made without the header, even with a valid session.
	for _, c := range []struct{ method, path string }{
		{"GET", "/v2/cpq/list"},
		{"POST", "/v2/cpq/1/customer/7/init"},
		{"GET", path("/v2/cpq/1/customer/7/quote/%d/toflist", q.QuoteID)},
	} {
		e.do(c.method, c.path, nil, withSession(sid)).wantError(t, http.StatusBadRequest, codeSessionNotAllowed)
		e.do(c.method, c.path, nil, withSession("")).wantError(t, http.StatusBadRequest, codeSessionNotAllowed)
	}
	// Sections 4.2 to 4.5 neither require nor reject it.
	e.do("GET", "/v2/customer/7", nil, withSession("anything")).wantStatus(t, http.StatusOK)
	e.do("GET", path("/v2/contract/getjsonvalidationaudit/%d", q.QuoteID), nil).wantStatus(t, http.StatusOK)

	// The session lives 30 minutes without use; each use extends it.
	validProducts := "/v2/cpq/1/tof/11/validproducts"
	e.clock.Advance(29 * time.Minute)
	e.do("GET", validProducts, nil, withSession(sid)).wantStatus(t, http.StatusOK)
	e.clock.Advance(29 * time.Minute)
	e.do("GET", validProducts, nil, withSession(sid)).wantStatus(t, http.StatusOK)
	e.clock.Advance(31 * time.Minute)
	msg := e.do("GET", validProducts, nil, withSession(sid)).wantError(t, http.StatusBadRequest, codeSessionInvalid).Message
	if !strings.Contains(msg, "expired") {
		t.Errorf("expired session message = %q", msg)
	}
	// Every call of the table answers SESSION_INVALID with the expired session.
	for _, c := range calls {
		e.call(c.method, c.path, c.body, withSession(sid)).wantError(t, http.StatusBadRequest, codeSessionInvalid)
	}
	// A new session works again and can be used for the existing quote.
	fresh := e.session(1, 7)
	e.do("GET", path("/v2/cpq/1/quote/%d/applicableDiscounts", q.QuoteID), nil, withSession(fresh)).wantStatus(t, http.StatusOK)
}

func TestBadPathParameters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	for _, bad := range []string{"abc", "0", "-1", "+1", "01", "1.5", "1e3", "0x10", "2147483648", "%201", "1%20"} {
		e.do("POST", "/v2/cpq/"+bad+"/customer/1/init", nil).wantError(t, http.StatusBadRequest, codeBadPathParameter)
		e.do("POST", "/v2/cpq/1/customer/"+bad+"/init", nil).wantError(t, http.StatusBadRequest, codeBadPathParameter)
		e.do("GET", "/v2/customer/"+bad, nil).wantError(t, http.StatusBadRequest, codeBadPathParameter)
		e.do("GET", "/v2/contract/"+bad, nil).wantError(t, http.StatusBadRequest, codeBadPathParameter)
		e.do("GET", "/v2/attachment/"+bad+"/quote/900001", nil).wantError(t, http.StatusBadRequest, codeBadPathParameter)
	}
	// Long parameters take 64-bit values: int32 overflow is fine, int64 overflow is not.
	e.do("GET", "/v2/cpq/1/customer/1/quote/2147483648/toflist", nil).wantError(t, http.StatusNotFound, codeNotFound)
	e.do("GET", "/v2/cpq/1/customer/1/quote/9223372036854775807/toflist", nil).wantError(t, http.StatusNotFound, codeNotFound)
	e.do("GET", "/v2/cpq/1/customer/1/quote/9223372036854775808/toflist", nil).wantError(t, http.StatusBadRequest, codeBadPathParameter)
	e.do("GET", "/v2/contract/getjsonvalidationaudit/-5", nil).wantError(t, http.StatusBadRequest, codeBadPathParameter)
	// The spec types onlinesearch's cpqId as long.
	e.do("GET", "/v2/customer/onlinesearch/4294967296", nil).wantError(t, http.StatusNotFound, codeNotFound)
	e.do("GET", "/v2/customer/onlinesearch/x", nil).wantError(t, http.StatusBadRequest, codeBadPathParameter)
	// Untyped parameters of calls 11 to 16 are ids too.
	sid := e.session(1, 1)
	e.do("GET", "/v2/cpq/1/quote/abc/applicableDiscounts", nil, withSession(sid)).wantError(t, http.StatusBadRequest, codeBadPathParameter)
}

func TestBodiesAndContentTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	sid, q := e.newQuote(3)
	quantity := path("/v2/cpq/1/quote/%d/basket/%d/quantity", q.QuoteID, q.Carts[0].BasketID)

	// 415 without application/json; parameters are fine.
	e.do("PUT", quantity, []byte(`{"quantity":2}`), withSession(sid)).wantError(t, http.StatusUnsupportedMediaType, codeUnsupportedMedia)
	e.do("PUT", quantity, []byte(`{"quantity":2}`), withSession(sid), withHeader("Content-Type", "text/plain")).wantError(t, http.StatusUnsupportedMediaType, codeUnsupportedMedia)
	e.do("PUT", quantity, `{"quantity":2}`, withSession(sid), withHeader("Content-Type", "application/json; charset=utf-8")).wantStatus(t, http.StatusOK)

	for _, tc := range []struct {
		body   string
		status int
		code   string
		field  string
	}{
		{`{"quantity": "2"}`, 400, codeBadRequest, ""},
		{`{"quantity": 2.5}`, 400, codeBadRequest, ""},
		{`{"quantity": 99999999999999999999}`, 400, codeBadRequest, ""},
		{`[2]`, 400, codeBadRequest, ""},
		{`null`, 400, codeBadRequest, ""},
		{`{"quantity": 2`, 400, codeBadRequest, ""},
		{`{"quantity": 2} {"x": 1}`, 400, codeBadRequest, ""},
		{`   `, 400, codeBadRequest, ""},
		{`{}`, 422, codeValidationFailed, "quantity"},
		{`{"quantity": 0}`, 422, codeValidationFailed, "quantity"},
		{`{"quantity": 10000}`, 422, codeValidationFailed, "quantity"},
		{`{"quantity": 9999, "unknownField": {"ignored": true}}`, 200, "", ""},
	} {
		r := e.do("PUT", quantity, tc.body, withSession(sid))
		if tc.status == 200 {
			r.wantStatus(t, 200)
			continue
		}
		got := r.wantError(t, tc.status, tc.code)
		if tc.field != "" && !got.hasFieldError(tc.field) {
			t.Errorf("body %s: fieldErrors %+v do not name %s", tc.body, got.FieldErrors, tc.field)
		}
		if tc.status == 422 && len(got.FieldErrors) == 0 {
			t.Errorf("body %s: 422 without fieldErrors", tc.body)
		}
	}

	// Init takes an empty body; GET and DELETE calls take none.
	e.do("POST", "/v2/cpq/1/customer/3/init", `{}`).wantError(t, http.StatusBadRequest, codeBadRequest)
	e.do("POST", "/v2/cpq/1/customer/3/init", []byte("x"), withHeader("Content-Type", "text/plain")).wantError(t, http.StatusBadRequest, codeBadRequest)
	e.do("POST", "/v2/cpq/1/customer/3/init", nil, withHeader("Content-Type", "application/json")).wantStatus(t, http.StatusOK)
	e.do("GET", "/v2/cpq/list", `{"a":1}`).wantError(t, http.StatusBadRequest, codeBadRequest)
	e.do("POST", path("/v2/contract/%d/generate", q.QuoteID), `{}`).wantError(t, http.StatusBadRequest, codeBadRequest)
	// Call 4 wants its empty JSON object.
	e.do("POST", path("/v2/cpq/1/tof/12/addcart?quoteId=%d", q.QuoteID), nil, withSession(sid)).wantError(t, http.StatusBadRequest, codeBadRequest)
	e.do("POST", path("/v2/cpq/1/tof/12/addcart?quoteId=%d", q.QuoteID), []byte(`{}`), withSession(sid)).wantError(t, http.StatusUnsupportedMediaType, codeUnsupportedMedia)
	e.do("POST", "/v2/cpq/1/tof/12/addcart?quoteId=abc", `{}`, withSession(sid)).wantError(t, http.StatusBadRequest, codeBadRequest)
	var q2 tQuote
	e.do("POST", path("/v2/cpq/1/tof/12/addcart?quoteId=%d", q.QuoteID), `{}`, withSession(sid)).wantStatus(t, 200).decode(t, &q2)
	if len(q2.Carts) != 2 || q2.Carts[1].Root.ProductID != 112 || q2.Carts[1].TOFID != 12 {
		t.Errorf("call 4 should add the default product 112 of TOF 12: %+v", q2.Carts)
	}
}

func TestUnknownIDsAnswer404(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	sid, q := e.newQuote(4)
	b := q.Carts[0].BasketID
	for _, c := range []struct {
		method, path, body string
		session            bool
	}{
		{"POST", "/v2/cpq/9/customer/4/init", "", false},
		{"POST", "/v2/cpq/1/customer/99999/init", "", false},
		{"GET", "/v2/cpq/1/tof/99/validproducts", "", true},
		{"GET", "/v2/cpq/1/tof/21/validproducts", "", true}, // TOF of another configurator
		{"GET", "/v2/cpq/1/quote/999999/applicableDiscounts", "", true},
		{"GET", "/v2/cpq/1/quote/900002/applicableDiscounts", "", true}, // quote of configurator 2
		{"PUT", path("/v2/cpq/1/quote/%d/basket/1/quantity", q.QuoteID), `{"quantity":1}`, true},
		{"DELETE", path("/v2/cpq/1/quote/%d/basket/%d/node/1/parent/%d", q.QuoteID, b, q.Carts[0].Root.NodeID), "", true},
		{"PUT", path("/v2/cpq/1/quote/%d/reprice", q.QuoteID), path(`{"activationPrice":1,"recurringPrice":1,"basketId":%d,"cartItemId":5}`, b), true},
		{"PUT", path("/v2/cpq/1/quote/%d/changePricelist", q.QuoteID), `{"pricelistId":1,"cartId":3}`, true},
		{"GET", path("/v2/cpq/1/customer/5/quote/%d/toflist", q.QuoteID), "", false}, // another customer's
		{"GET", path("/v2/cpq/2/customer/4/quote/%d/toflist", q.QuoteID), "", false}, // another configurator
		{"GET", "/v2/customer/99999", "", false},
		{"GET", "/v2/contract/999", "", false},
		{"GET", "/v2/contract/bycontractnumber/C-2026-999999", "", false},
		{"GET", "/v2/attachment/1/quote/999999", "", false},
		{"GET", path("/v2/attachment/999/quote/%d", q.QuoteID), "", false},
		{"POST", "/v2/contract/999999/generate", "", false},
		{"GET", "/v2/contract/getjsonvalidationaudit/999999", "", false},
		{"DELETE", "/v2/signature?contractId=999", "", false},
		{"PUT", "/v2/customer", `{"id":99999,"name":"x"}`, false},
	} {
		var opts []reqOpt
		if c.session {
			opts = append(opts, withSession(sid))
		}
		r := e.call(c.method, c.path, c.body, opts...)
		if r.status != http.StatusNotFound {
			t.Errorf("%s %s: status %d, want 404: %s", c.method, c.path, r.status, r.body)
			continue
		}
		r.wantError(t, http.StatusNotFound, codeNotFound)
	}
}

func TestUnknownRoutesAnswerJSONErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.do("GET", "/v2/nothing", nil).wantError(t, http.StatusNotFound, codeNotFound)
	e.do("GET", "/", nil).wantError(t, http.StatusNotFound, codeNotFound)
	// A strict API does not redirect to the cleaned or slash-terminated path.
	r := e.do("GET", "/v2/customer", nil)
	r.wantError(t, http.StatusNotFound, codeNotFound)
	if r.header.Get("Location") != "" {
		t.Errorf("unexpected redirect to %s", r.header.Get("Location"))
	}
	e.do("GET", "/v2//customer/1", nil).wantError(t, http.StatusNotFound, codeNotFound)
	r = e.do("DELETE", "/v2/cpq/list", nil)
	r.wantError(t, http.StatusMethodNotAllowed, codeMethodNotAllowed)
	if !strings.Contains(r.header.Get("Allow"), "GET") {
		t.Errorf("Allow = %q", r.header.Get("Allow"))
	}
	// Without Options.Admin the control API does not exist.
	e.do("GET", "/_sim/requests", nil).wantError(t, http.StatusNotFound, codeNotFound)
}

// TestEscapedContractNumberStaysOneSegment: a contract number with "/" and ".." arrives escaped as one path
// segment and is looked up as it is, never routed elsewhere.
func TestEscapedContractNumberStaysOneSegment(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	for _, tc := range []struct{ escaped, number string }{
		{"A%2F..%2Fx", "A/../x"},
		{"..%2F..%2Fcustomer%2F1", "../../customer/1"},
		{"%2E%2E", ".."},
		{"C-2026%3F000001", "C-2026?000001"},
		{"C%20one", "C one"},
	} {
		e.sim.ResetRequests()
		r := e.do("GET", "/v2/contract/bycontractnumber/"+tc.escaped, nil)
		got := r.wantError(t, http.StatusNotFound, codeNotFound)
		if !strings.Contains(got.Message, `"`+tc.number+`"`) {
			t.Errorf("%s: message %q does not name the number %q", tc.escaped, got.Message, tc.number)
		}
		reqs := e.sim.Requests()
		if len(reqs) != 1 || reqs[0].Endpoint != "contracts.bynumber" || reqs[0].RequestURI != "/v2/contract/bycontractnumber/"+tc.escaped {
			t.Errorf("%s: recorded %+v", tc.escaped, reqs)
		}
	}
	// The same holds for the archive and payload calls.
	got := e.do("GET", "/v2/contract/contractNumber/A%2F..%2F..%2Fx/archive", nil).wantError(t, http.StatusNotFound, codeNotFound)
	if !strings.Contains(got.Message, `"A/../../x"`) {
		t.Errorf("archive message %q", got.Message)
	}
	e.do("GET", "/v2/contract/digitalarchivepayload/A%2Fb", nil).wantError(t, http.StatusNotFound, codeNotFound)
	// And the seeded contract is found by its plain number.
	e.do("GET", "/v2/contract/bycontractnumber/C-2026-000001", nil).wantStatus(t, http.StatusOK)
}

func TestConfigurationValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	sid, q := e.newQuote(6)
	base := path("/v2/cpq/1/quote/%d", q.QuoteID)
	b := q.Carts[0].BasketID
	root := q.Carts[0].Root.NodeID

	want422 := func(method, p, body string, fields ...string) {
		t.Helper()
		got := e.do(method, p, body, withSession(sid)).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
		for _, f := range fields {
			if !got.hasFieldError(f) {
				t.Errorf("%s %s %s: fieldErrors %+v do not name %s", method, p, body, got.FieldErrors, f)
			}
		}
	}
	// Call 3: the product must be a MAIN product of the TOF, with its tofProductId, for the session's customer.
	want422("POST", "/v2/cpq/1/tof/11/addcart", `{"productId":104,"tofProductId":1104,"customerId":6}`, "productId")
	want422("POST", "/v2/cpq/1/tof/11/addcart", `{"productId":102,"tofProductId":1101,"customerId":6}`, "tofProductId")
	want422("POST", "/v2/cpq/1/tof/11/addcart", `{"productId":102,"tofProductId":1102,"customerId":7}`, "customerId")
	want422("POST", "/v2/cpq/1/tof/11/addcart", `{"productId":102,"tofProductId":1102,"customerId":6,"customerQuoteId":-1,"label":"`+strings.Repeat("x", 101)+`"}`, "customerQuoteId", "label")
	want422("POST", "/v2/cpq/1/tof/11/addcart", `{}`, "productId", "tofProductId", "customerId")
	// Call 5: add-on of the TOF, allowed under the parent, valid UUID, unique in the quote.
	item := func(offerType, productID, tofProductID int, uid string) string {
		return path(`{"offerTypeId":%d,"productId":%d,"offerTypeProductId":%d,"itemUniqueId":%q}`, offerType, productID, tofProductID, uid)
	}
	addItem := path("%s/basket/%d/parent/%d/additemtocart", base, b, root)
	want422("POST", addItem, item(12, 104, 1104, "3f0c9c1e-9a2b-4a53-8f0e-1d2c3b4a5f60"), "offerTypeId")
	want422("POST", addItem, item(11, 107, 1107, "3f0c9c1e-9a2b-4a53-8f0e-1d2c3b4a5f60"), "productId") // 107 goes under 106 only
	want422("POST", addItem, item(11, 101, 1101, "3f0c9c1e-9a2b-4a53-8f0e-1d2c3b4a5f60"), "productId") // a MAIN product
	want422("POST", addItem, item(11, 104, 1104, "not-a-uuid"), "itemUniqueId")
	var doc tQuote
	e.do("POST", addItem, item(11, 106, 1106, "3f0c9c1e-9a2b-4a53-8f0e-1d2c3b4a5f60"), withSession(sid)).wantStatus(t, 200).decode(t, &doc)
	e.do("POST", addItem, item(11, 104, 1104, "3f0c9c1e-9a2b-4a53-8f0e-1d2c3b4a5f60"), withSession(sid)).wantError(t, http.StatusConflict, codeConflict)
	insurance := doc.Carts[0].Root.Children[0].NodeID
	// Add-ons nest under add-ons: 107 under 106.
	e.do("POST", path("%s/basket/%d/parent/%d/additemtocart", base, b, insurance), item(11, 107, 1107, "9d7b2e44-1c3a-4f5e-8a6b-7c8d9e0f1a2b"), withSession(sid)).wantStatus(t, 200).decode(t, &doc)
	nested := doc.Carts[0].Root.Children[0].Children
	if len(nested) != 1 || nested[0].ProductID != 107 || nested[0].ParentID != insurance {
		t.Fatalf("nested add-on = %+v", nested)
	}
	// Call 6: direct children only; the root is removed with its cart.
	e.do("DELETE", path("%s/basket/%d/node/%d/parent/%d", base, b, nested[0].NodeID, root), nil, withSession(sid)).wantError(t, http.StatusNotFound, codeNotFound)
	e.do("DELETE", path("%s/basket/%d/node/%d/parent/%d", base, b, root, root), nil, withSession(sid)).wantError(t, http.StatusConflict, codeConflict)
	e.do("DELETE", path("%s/basket/%d/node/%d/parent/%d", base, b, insurance, root), nil, withSession(sid)).wantStatus(t, http.StatusNoContent)
	e.do("GET", path("/v2/cpq/1/customer/6/quote/%d/toflist", q.QuoteID), nil).wantStatus(t, 200).decode(t, &doc)
	if len(doc.Carts[0].Root.Children) != 0 {
		t.Errorf("removing an item should remove its sub-items: %+v", doc.Carts[0].Root.Children)
	}
	// The removed items' ids may be used again.
	e.do("POST", addItem, item(11, 104, 1104, "3f0c9c1e-9a2b-4a53-8f0e-1d2c3b4a5f60"), withSession(sid)).wantStatus(t, 200)

	// Call 12: regular ids in appliedDiscounts, extra ones with 0 < value <= maxValue, no duplicates, same configurator.
	want422("PUT", base+"/applyDiscounts", `{"appliedDiscounts":[9],"extraDiscountList":[]}`, "appliedDiscounts[0]")
	want422("PUT", base+"/applyDiscounts", `{"appliedDiscounts":[1,1],"extraDiscountList":[]}`, "appliedDiscounts[1]")
	want422("PUT", base+"/applyDiscounts", `{"appliedDiscounts":[11],"extraDiscountList":[]}`, "appliedDiscounts[0]")
	want422("PUT", base+"/applyDiscounts", `{"appliedDiscounts":[],"extraDiscountList":[{"discountId":9,"discountValue":20.5}]}`, "extraDiscountList[0].discountValue")
	want422("PUT", base+"/applyDiscounts", `{"appliedDiscounts":[],"extraDiscountList":[{"discountId":9,"discountValue":0}]}`, "extraDiscountList[0].discountValue")
	want422("PUT", base+"/applyDiscounts", `{"appliedDiscounts":[],"extraDiscountList":[{"discountId":1,"discountValue":5}]}`, "extraDiscountList[0].discountId")
	want422("PUT", base+"/applyDiscounts", `{"appliedDiscounts":[],"extraDiscountList":[{"discountId":9}]}`, "extraDiscountList[0].discountValue")
	// Call 13: prices 0 to 1,000,000 with at most two decimals.
	want422("PUT", base+"/reprice", path(`{"activationPrice":-1,"recurringPrice":1000000.01,"basketId":%d,"cartItemId":%d}`, b, root), "activationPrice", "recurringPrice")
	want422("PUT", base+"/reprice", path(`{"activationPrice":1.234,"recurringPrice":1,"basketId":%d,"cartItemId":%d}`, b, root), "activationPrice")
	want422("PUT", base+"/reprice", `{"activationPrice":1,"recurringPrice":1}`, "basketId", "cartItemId")
	// Call 15: package of the TOF, known assignee, the quote's customer; twice is a conflict.
	pkg := func(customerID, packageID, tofID, assignee int) string {
		return path(`{"customerId":%d,"customerQuoteId":0,"packageId":%d,"tofId":%d,"quoteId":%d,"assigneeUserId":%d}`, customerID, packageID, tofID, q.QuoteID, assignee)
	}
	want422("POST", "/v2/cpq/1/package", pkg(6, 33, 11, 1001), "packageId") // 33 belongs to TOF 12
	want422("POST", "/v2/cpq/1/package", pkg(6, 31, 21, 1001), "tofId")
	want422("POST", "/v2/cpq/1/package", pkg(5, 31, 11, 999), "customerId", "assigneeUserId")
	e.do("POST", "/v2/cpq/1/package", pkg(6, 31, 11, 1001), withSession(sid)).wantStatus(t, 200)
	e.do("POST", "/v2/cpq/1/package", pkg(6, 31, 11, 1002), withSession(sid)).wantError(t, http.StatusConflict, codeConflict)
	var packages struct {
		QuoteID  int64
		TOFID    int32
		Packages []struct{ PackageID int32 }
		Assigned []int32
	}
	e.do("GET", path("/v2/cpq/1/tof/11/package/%d", q.QuoteID), nil, withSession(sid)).wantStatus(t, 200).decode(t, &packages)
	if packages.QuoteID != q.QuoteID || len(packages.Packages) != 2 || len(packages.Assigned) != 1 || packages.Assigned[0] != 31 {
		t.Errorf("packages of TOF 11 = %+v", packages)
	}
	// Call 16: a price list of availablePricelists.
	want422("PUT", base+"/changePricelist", path(`{"pricelistId":3,"cartId":%d}`, b), "pricelistId")
	// Call 7 removes the cart.
	e.do("DELETE", path("%s/basket/%d", base, b), nil, withSession(sid)).wantStatus(t, http.StatusNoContent)
	e.do("DELETE", path("%s/basket/%d", base, b), nil, withSession(sid)).wantError(t, http.StatusNotFound, codeNotFound)
}

func TestCatalogCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	var cpqs []struct {
		ID   int32
		Name string
	}
	e.do("GET", "/v2/cpq/list", nil).wantStatus(t, 200).decode(t, &cpqs)
	if len(cpqs) != 4 || cpqs[0].Name != "Business Mobile" || cpqs[3].Name != "Energy for Business" {
		t.Fatalf("configurators = %+v", cpqs)
	}
	for _, cfg := range e.sim.cat.configurators {
		if n := len(cfg.TOFs); n < 2 || n > 3 {
			t.Errorf("configurator %d has %d TOFs", cfg.ID, n)
		}
		regular, extra := 0, 0
		for _, d := range cfg.Discounts {
			if d.Extra {
				extra++
			} else {
				regular++
			}
		}
		if regular != 3 || extra < 1 || extra > 2 {
			t.Errorf("configurator %d discounts: %d regular, %d extra", cfg.ID, regular, extra)
		}
		sid := e.session(cfg.ID, 1)
		for _, tf := range cfg.TOFs {
			var products []struct {
				ProductID, TOFProductID int32
				Kind                    string
				Default                 bool
				ActivationPrice         float64
				ParentProductIDs        []int32
			}
			e.do("GET", path("/v2/cpq/%d/tof/%d/validproducts", cfg.ID, tf.ID), nil, withSession(sid)).wantStatus(t, 200).decode(t, &products)
			mains, addons, defaults := 0, 0, 0
			ids := map[int32]bool{}
			for _, p := range products {
				ids[p.ProductID] = true
			}
			for _, p := range products {
				switch p.Kind {
				case "MAIN":
					mains++
					if p.Default {
						defaults++
					}
				case "ADDON":
					addons++
					if len(p.ParentProductIDs) == 0 {
						t.Errorf("add-on %d has no parents", p.ProductID)
					}
					for _, parent := range p.ParentProductIDs {
						if !ids[parent] {
							t.Errorf("add-on %d names parent %d outside TOF %d", p.ProductID, parent, tf.ID)
						}
					}
				}
			}
			if mains < 2 || mains > 4 || defaults != 1 || addons < 3 || addons > 6 {
				t.Errorf("TOF %d: %d MAIN (%d default), %d ADDON", tf.ID, mains, defaults, addons)
			}
			if len(tf.Packages) == 0 {
				t.Errorf("TOF %d has no packages", tf.ID)
			}
		}
	}
}

// TestCheckOrder pins the order of checks of docs/v2-assumptions.md A2 where one request breaks several rules.
func TestCheckOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	sid, q := e.newQuote(11)
	other := e.session(2, 11)
	quantity := path("/v2/cpq/1/quote/%d/basket/%d/quantity", q.QuoteID, q.Carts[0].BasketID)
	// No token beats everything.
	e.do("PUT", "/v2/cpq/x/quote/1/basket/1/quantity", `{`, withoutHeader("Authorization")).wantError(t, http.StatusUnauthorized, codeUnauthorized)
	// A missing X-SessionId beats a bad path parameter; a bad path parameter beats an unknown session.
	e.do("PUT", "/v2/cpq/x/quote/1/basket/1/quantity", `{`).wantError(t, http.StatusBadRequest, codeSessionRequired)
	e.do("PUT", "/v2/cpq/x/quote/1/basket/1/quantity", `{`, withSession("nope")).wantError(t, http.StatusBadRequest, codeBadPathParameter)
	// An invalid session beats a malformed body; a malformed body beats an unknown id.
	e.do("PUT", quantity, `{`, withSession(other)).wantError(t, http.StatusBadRequest, codeSessionInvalid)
	e.do("PUT", "/v2/cpq/1/quote/1/basket/1/quantity", `{`, withSession(sid)).wantError(t, http.StatusBadRequest, codeBadRequest)
	e.do("PUT", "/v2/cpq/1/quote/1/basket/1/quantity", []byte(`{"quantity":0}`), withSession(sid)).wantError(t, http.StatusUnsupportedMediaType, codeUnsupportedMedia)
	// An unknown id beats a bad value; a bad value beats a conflict.
	e.do("PUT", "/v2/cpq/1/quote/1/basket/1/quantity", `{"quantity":0}`, withSession(sid)).wantError(t, http.StatusNotFound, codeNotFound)
	e.do("PUT", path("/v2/cpq/1/quote/%d/reprice", q.QuoteID), `{"activationPrice":-1,"recurringPrice":1,"basketId":1,"cartItemId":1}`, withSession(sid)).wantError(t, http.StatusNotFound, codeNotFound)
	e.do("PUT", "/v2/customer", `{"id": 99999, "attributes": []}`).wantError(t, http.StatusBadRequest, codeBadRequest)
	var c tCustomer
	e.do("GET", "/v2/customer/11", nil).decode(t, &c)
	e.do("PUT", "/v2/customer", path(`{"id": 11, "version": %d, "email": "bad"}`, c.Version-1)).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	e.do("PUT", "/v2/customer", path(`{"id": 11, "version": %d, "email": "good@example.com"}`, c.Version-1)).wantError(t, http.StatusConflict, codeConflict)
}
