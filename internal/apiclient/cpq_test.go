package apiclient

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/google/uuid"
)

// Call 1.
func TestCPQList(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("GET /v2/cpq/list", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodGet, false)
		testAccept(t, r, "application/json")
		testQuery(t, r, nil)
		testNoBody(t, r)
		writeJSON(w, 200, `[{"id": 1, "name": "Business Mobile", "owner": "sales"}, {"id": 2, "name": "Fixed Line"}]`)
	})
	got, err := client.CPQ.List(authCtx(t))
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(got) != 2 || got[0].ID != 1 || got[0].Name != "Business Mobile" || got[1].ID != 2 || got[1].Name != "Fixed Line" {
		t.Errorf("List = %+v", got)
	}
	if string(got[0].Raw) != `{"id": 1, "name": "Business Mobile", "owner": "sales"}` {
		t.Errorf("Raw = %s", got[0].Raw)
	}
}

// Call 2.
func TestCPQInit(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("POST /v2/cpq/1/customer/17/init", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPost, false)
		testAccept(t, r, "application/json")
		testNoBody(t, r)
		writeJSON(w, 200, `{"sessionId": "`+testSessionID+`", "tofList": [{"id": 11, "name": "Mobile plans", "description": "SIM"},
			{"id": 12, "name": "Devices"}], "expiresAt": "2026-11-21T10:30:00Z"}`)
	})
	got, err := client.CPQ.Init(authCtx(t), 1, 17)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	if got.SessionID != testSessionID || len(got.TOFList) != 2 || got.TOFList[0].ID != 11 || got.TOFList[1].Name != "Devices" ||
		got.ExpiresAt.Minute() != 30 {
		t.Errorf("Init = %+v", got)
	}
}

// Call 3.
func TestCPQAddCart(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("POST /v2/cpq/1/tof/11/addcart", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPost, true)
		testQuery(t, r, nil)
		testJSONBody(t, r, `{"productId": 101, "tofProductId": 1101, "customerId": 17, "customerQuoteId": 0, "label": "Head office"}`)
		writeJSON(w, 200, quoteJSON)
	})
	got, err := client.CPQ.AddCart(authCtx(t), testSessionID, 1, 11, AddCartRequest{
		ProductID: 101, TOFProductID: 1101, CustomerID: 17, Label: "Head office",
	})
	if err != nil {
		t.Fatalf("AddCart: %v", err)
	}
	checkQuote(t, got)
}

// Call 4.
func TestCPQAddCartToQuote(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("POST /v2/cpq/1/tof/11/addcart", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPost, true)
		testQuery(t, r, map[string]string{"quoteId": "900001"})
		body, _ := io.ReadAll(r.Body)
		if string(body) != "{}" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("body = %q, Content-Type %q; want exactly {} as JSON", body, r.Header.Get("Content-Type"))
		}
		writeJSON(w, 200, quoteJSON)
	})
	got, err := client.CPQ.AddCartToQuote(authCtx(t), testSessionID, 1, 11, 900001)
	if err != nil {
		t.Fatalf("AddCartToQuote: %v", err)
	}
	checkQuote(t, got)
}

// Call 5.
func TestCPQAddItem(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	var sentIDs []string
	f.handle("POST /v2/cpq/1/quote/900001/basket/700001/parent/800001/additemtocart", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPost, true)
		if r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("Content-Type = %q", r.Header.Get("Content-Type"))
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Fatalf("body: %v", err)
		}
		if len(body) != 4 || body["offerTypeId"] != 11.0 || body["productId"] != 201.0 || body["offerTypeProductId"] != 1201.0 {
			t.Errorf("body = %v", body)
		}
		id, _ := body["itemUniqueId"].(string)
		sentIDs = append(sentIDs, id)
		writeJSON(w, 200, quoteJSON)
	})
	ctx := authCtx(t)
	req := AddItemRequest{OfferTypeID: 11, ProductID: 201, OfferTypeProductID: 1201}
	got, err := client.CPQ.AddItem(ctx, testSessionID, 1, 900001, 700001, 800001, req)
	if err != nil {
		t.Fatalf("AddItem: %v", err)
	}
	checkQuote(t, got)
	req.ItemUniqueID = "0b7f1f8e-3c2a-4d55-9d1e-2f6a1b3c4d5e"
	if _, err := client.CPQ.AddItem(ctx, testSessionID, 1, 900001, 700001, 800001, req); err != nil {
		t.Fatalf("AddItem with id: %v", err)
	}
	if len(sentIDs) != 2 {
		t.Fatalf("sent %d requests, want 2", len(sentIDs))
	}
	if _, err := uuid.Parse(sentIDs[0]); err != nil {
		t.Errorf("generated itemUniqueId %q is not a UUID", sentIDs[0])
	}
	if sentIDs[1] != req.ItemUniqueID {
		t.Errorf("itemUniqueId = %q, want the caller's %q", sentIDs[1], req.ItemUniqueID)
	}
}

// Call 6.
func TestCPQRemoveItem(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("DELETE /v2/cpq/1/quote/900001/basket/700001/node/800002/parent/800001", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodDelete, true)
		testNoBody(t, r)
		w.WriteHeader(http.StatusNoContent)
	})
	if err := client.CPQ.RemoveItem(authCtx(t), testSessionID, 1, 900001, 700001, 800002, 800001); err != nil {
		t.Fatalf("RemoveItem: %v", err)
	}
}

// Call 7: any 2xx is success, including one with a body.
func TestCPQRemoveCart(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("DELETE /v2/cpq/1/quote/900001/basket/700001", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodDelete, true)
		testNoBody(t, r)
		writeJSON(w, 200, quoteJSON)
	})
	if err := client.CPQ.RemoveCart(authCtx(t), testSessionID, 1, 900001, 700001); err != nil {
		t.Fatalf("RemoveCart: %v", err)
	}
}

// Call 8.
func TestCPQSetQuantity(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("PUT /v2/cpq/1/quote/900001/basket/700001/quantity", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPut, true)
		testJSONBody(t, r, `{"quantity": 2}`)
		writeJSON(w, 200, quoteJSON)
	})
	got, err := client.CPQ.SetQuantity(authCtx(t), testSessionID, 1, 900001, 700001, 2)
	if err != nil {
		t.Fatalf("SetQuantity: %v", err)
	}
	checkQuote(t, got)
}

// Call 9.
func TestCPQValidProducts(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("GET /v2/cpq/1/tof/11/validproducts", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodGet, true)
		testNoBody(t, r)
		writeJSON(w, 200, `[
		  {"productId": 101, "tofProductId": 1101, "name": "Business Mobile 50GB", "description": "50 GB", "kind": "MAIN",
		   "default": true, "activationPrice": 49.0, "recurringPrice": 29.9, "parentProductIds": []},
		  {"productId": 201, "tofProductId": 1201, "name": "Roaming EU", "kind": "ADDON", "default": false,
		   "activationPrice": 0, "recurringPrice": 5.0, "parentProductIds": [101, 102], "sku": "R-EU"}]`)
	})
	got, err := client.CPQ.ValidProducts(authCtx(t), testSessionID, 1, 11)
	if err != nil {
		t.Fatalf("ValidProducts: %v", err)
	}
	if len(got) != 2 || !got[0].Default || got[0].Kind != "MAIN" || got[0].RecurringPrice != 29.9 ||
		got[1].Kind != "ADDON" || len(got[1].ParentProductIDs) != 2 || got[1].ParentProductIDs[1] != 102 || got[1].Description != "" {
		t.Errorf("ValidProducts = %+v", got)
	}
}

// Call 10: no X-SessionId.
func TestCPQTOFList(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("GET /v2/cpq/1/customer/17/quote/900001/toflist", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodGet, false)
		testNoBody(t, r)
		writeJSON(w, 200, quoteJSON)
	})
	got, err := client.CPQ.TOFList(authCtx(t), 1, 17, 900001)
	if err != nil {
		t.Fatalf("TOFList: %v", err)
	}
	checkQuote(t, got)
}

// Call 11.
func TestCPQApplicableDiscounts(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("GET /v2/cpq/1/quote/900001/applicableDiscounts", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodGet, true)
		testNoBody(t, r)
		writeJSON(w, 200, `[{"discountId": 1, "name": "Loyalty 10%", "percent": 10, "appliesTo": "RECURRING", "extra": false},
			{"discountId": 9, "name": "Negotiated discount", "appliesTo": "BOTH", "extra": true, "maxValue": 20}]`)
	})
	got, err := client.CPQ.ApplicableDiscounts(authCtx(t), testSessionID, 1, 900001)
	if err != nil {
		t.Fatalf("ApplicableDiscounts: %v", err)
	}
	if len(got) != 2 || got[0].Extra || got[0].Percent != 10 || !got[1].Extra || got[1].MaxValue != 20 || got[1].AppliesTo != "BOTH" {
		t.Errorf("ApplicableDiscounts = %+v", got)
	}
}

// Call 12, including empty lists sent as [].
func TestCPQApplyDiscounts(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	want := []string{
		`{"appliedDiscounts": [1, 2], "extraDiscountList": [{"discountId": 9, "discountValue": 4.5}]}`,
		`{"appliedDiscounts": [], "extraDiscountList": []}`,
	}
	n := 0
	f.handle("PUT /v2/cpq/1/quote/900001/applyDiscounts", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPut, true)
		testJSONBody(t, r, want[n])
		n++
		writeJSON(w, 200, quoteJSON)
	})
	ctx := authCtx(t)
	got, err := client.CPQ.ApplyDiscounts(ctx, testSessionID, 1, 900001, ApplyDiscountsRequest{
		AppliedDiscounts:  []int32{1, 2},
		ExtraDiscountList: []ExtraDiscountInput{{DiscountID: 9, DiscountValue: 4.5}},
	})
	if err != nil {
		t.Fatalf("ApplyDiscounts: %v", err)
	}
	checkQuote(t, got)
	if _, err := client.CPQ.ApplyDiscounts(ctx, testSessionID, 1, 900001, ApplyDiscountsRequest{}); err != nil {
		t.Fatalf("ApplyDiscounts (empty): %v", err)
	}
	if n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// Call 13.
func TestCPQReprice(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("PUT /v2/cpq/1/quote/900001/reprice", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPut, true)
		testJSONBody(t, r, `{"activationPrice": 0, "recurringPrice": 4.25, "basketId": 700001, "cartItemId": 800002}`)
		writeJSON(w, 200, quoteJSON)
	})
	got, err := client.CPQ.Reprice(authCtx(t), testSessionID, 1, 900001, RepriceRequest{
		RecurringPrice: 4.25, BasketID: 700001, CartItemID: 800002,
	})
	if err != nil {
		t.Fatalf("Reprice: %v", err)
	}
	checkQuote(t, got)
}

// Call 14.
func TestCPQPackageConfig(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("GET /v2/cpq/1/tof/11/package/900001", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodGet, true)
		testNoBody(t, r)
		writeJSON(w, 200, `{"quoteId": 900001, "tofId": 11, "packages": [
			{"packageId": 31, "name": "Business Bundle", "description": "Calls and data", "recurringPrice": 15.0},
			{"packageId": 32, "name": "Security Pack", "recurringPrice": 3.5}], "assigned": [31]}`)
	})
	got, err := client.CPQ.PackageConfig(authCtx(t), testSessionID, 1, 11, 900001)
	if err != nil {
		t.Fatalf("PackageConfig: %v", err)
	}
	if got.QuoteID != 900001 || got.TOFID != 11 || len(got.Packages) != 2 || got.Packages[1].RecurringPrice != 3.5 ||
		!got.IsAssigned(31) || got.IsAssigned(32) {
		t.Errorf("PackageConfig = %+v", got)
	}
}

// Call 15.
func TestCPQAddPackage(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("POST /v2/cpq/1/package", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPost, true)
		testJSONBody(t, r, `{"customerId": 17, "customerQuoteId": 4711, "packageId": 31, "tofId": 11, "quoteId": 900001, "assigneeUserId": 1001}`)
		writeJSON(w, 200, quoteJSON)
	})
	got, err := client.CPQ.AddPackage(authCtx(t), testSessionID, 1, AddPackageRequest{
		CustomerID: 17, CustomerQuoteID: 4711, PackageID: 31, TOFID: 11, QuoteID: 900001, AssigneeUserID: 1001,
	})
	if err != nil {
		t.Fatalf("AddPackage: %v", err)
	}
	checkQuote(t, got)
}

// Call 16.
func TestCPQChangePricelist(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("PUT /v2/cpq/1/quote/900001/changePricelist", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPut, true)
		testJSONBody(t, r, `{"pricelistId": 2, "cartId": 700001}`)
		writeJSON(w, 200, quoteJSON)
	})
	got, err := client.CPQ.ChangePricelist(authCtx(t), testSessionID, 1, 900001, ChangePricelistRequest{PricelistID: 2, CartID: 700001})
	if err != nil {
		t.Fatalf("ChangePricelist: %v", err)
	}
	checkQuote(t, got)
}
