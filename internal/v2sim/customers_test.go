package v2sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

type tCustomer struct {
	ID                                         int32
	Name, TaxID, Email, Phone, Segment, Status string
	Address                                    struct{ Street, City, PostalCode, Country string }
	Owners                                     []struct {
		OwnerID     int64
		Name, Email string
	}
	Profiles []struct {
		ProfileID, CustomerID                  int32
		ProfileType, ContactName, Email, Phone string
	}
	CPQIDs     []int32
	Attributes json.RawMessage
	Version    int64
}

func TestSeededCustomers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Seed: 7})
	var list []tCustomer
	e.do("GET", "/v2/customer/", nil).wantStatus(t, 200).decode(t, &list)
	if len(list) != DefaultCustomers {
		t.Fatalf("%d customers, want %d", len(list), DefaultCustomers)
	}
	taxIDs := map[string]bool{}
	segments := map[string]int{}
	for i, c := range list {
		if c.ID != int32(i+1) {
			t.Errorf("customer %d has id %d", i, c.ID)
		}
		if taxIDs[c.TaxID] {
			t.Errorf("duplicate tax id %s", c.TaxID)
		}
		taxIDs[c.TaxID] = true
		segments[c.Segment]++
		if len(c.Owners) < 1 || len(c.Owners) > 2 || len(c.Profiles) > 2 || len(c.CPQIDs) == 0 || c.Version < 1 {
			t.Errorf("customer %d: owners %d, profiles %d, cpqIds %v, version %d", c.ID, len(c.Owners), len(c.Profiles), c.CPQIDs, c.Version)
		}
		var attrs struct {
			CreditRating string
			Billing      *struct{ IBAN, Terms string }
			Tags         []string
		}
		if err := json.Unmarshal(c.Attributes, &attrs); err != nil || attrs.CreditRating == "" || attrs.Billing == nil || attrs.Tags == nil {
			t.Errorf("customer %d attributes %s: %v", c.ID, c.Attributes, err)
		}
	}
	if segments["BUSINESS"] < len(list)/2 {
		t.Errorf("segments = %v", segments)
	}
	// Every seeded customer passes the rules a client's update must pass, so saving it unchanged works.
	e.sim.mu.Lock()
	for _, c := range e.sim.customers {
		if err := e.sim.validateCustomer(c); err != nil {
			t.Errorf("seeded customer %d (%s) fails validation: %v", c.ID, c.Name, err)
		}
	}
	e.sim.mu.Unlock()
	// The same seed gives the same data.
	again := newEnv(t, Options{Seed: 7})
	a := e.do("GET", "/v2/customer/", nil)
	b := again.do("GET", "/v2/customer/", nil)
	if string(a.body) != string(b.body) || a.header.Get("ETag") != b.header.Get("ETag") {
		t.Error("the same seed gave different customers")
	}
	other := newEnv(t, Options{Seed: 8}).do("GET", "/v2/customer/", nil)
	if string(other.body) == string(a.body) {
		t.Error("another seed gave the same customers")
	}
}

func TestCustomerListETag(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Customers: 120})
	first := e.do("GET", "/v2/customer/", nil).wantStatus(t, 200)
	etag := first.header.Get("ETag")
	if !strings.HasPrefix(etag, `"`) || strings.HasPrefix(etag, "W/") {
		t.Fatalf("ETag = %q, want a strong ETag", etag)
	}
	r := e.do("GET", "/v2/customer/", nil, withHeader("If-None-Match", etag))
	if r.status != http.StatusNotModified || len(r.body) != 0 {
		t.Fatalf("If-None-Match: status %d, body %d bytes", r.status, len(r.body))
	}
	e.do("GET", "/v2/customer/", nil, withHeader("If-None-Match", `"other", `+etag)).wantStatus(t, http.StatusNotModified)
	e.do("GET", "/v2/customer/", nil, withHeader("If-None-Match", `"other"`)).wantStatus(t, http.StatusOK)

	// Any change of any customer changes the ETag.
	for _, change := range []func(){
		func() { e.do("PUT", "/v2/customer/50/owners", `{"ownerIds": [1003, 1004]}`).wantStatus(t, 200) },
		func() { e.do("PUT", "/v2/customer", `{"id": 77, "phone": "+39 02 1234 5678"}`).wantStatus(t, 200) },
		func() {
			e.do("POST", "/v2/customer/customerprofile", `{"customerId": 3, "profileType": "LEGAL", "contactName": "Ada"}`).wantStatus(t, 201)
		},
	} {
		change()
		r := e.do("GET", "/v2/customer/", nil, withHeader("If-None-Match", etag)).wantStatus(t, http.StatusOK)
		if r.header.Get("ETag") == etag {
			t.Fatal("ETag did not change after a customer changed")
		}
		etag = r.header.Get("ETag")
	}
	// An update that changes nothing keeps the ETag.
	e.do("PUT", "/v2/customer", `{"id": 77, "phone": "+39 02 1234 5678"}`).wantStatus(t, 200)
	e.do("GET", "/v2/customer/", nil, withHeader("If-None-Match", etag)).wantStatus(t, http.StatusNotModified)
}

func validCustomerBody() map[string]any {
	return map[string]any{
		"name": "Officine Meccaniche Bianchi S.r.l.", "taxId": "IT09876543210", "email": "info@omb.it",
		"phone": "+39 02 5555 1234", "segment": "BUSINESS",
		"address":    map[string]any{"street": "Via Torino 1", "city": "Milano", "postalCode": "20123", "country": "IT"},
		"cpqIds":     []int{1, 3},
		"attributes": map[string]any{"creditRating": "A", "billing": map[string]any{"terms": "NET60"}, "tags": []string{"new"}},
	}
}

func TestCreateCustomer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	var c tCustomer
	e.do("POST", "/v2/customer", validCustomerBody()).wantStatus(t, http.StatusCreated).decode(t, &c)
	if c.ID != DefaultCustomers+1 || c.Version != 1 || c.Status != "ACTIVE" || len(c.Owners) != 0 || len(c.Profiles) != 0 ||
		c.Address.City != "Milano" || len(c.CPQIDs) != 2 || !strings.Contains(string(c.Attributes), `"terms":"NET60"`) {
		t.Fatalf("created = %+v", c)
	}
	var got tCustomer
	e.do("GET", path("/v2/customer/%d", c.ID), nil).wantStatus(t, 200).decode(t, &got)
	if got.Name != c.Name || got.TaxID != c.TaxID {
		t.Errorf("read back %+v", got)
	}
	// Found by the online search of its configurators only.
	var found []tCustomer
	e.do("GET", "/v2/customer/onlinesearch/3?query=meccaniche%20BIANCHI", nil).wantStatus(t, 200).decode(t, &found)
	if len(found) != 1 || found[0].ID != c.ID {
		t.Errorf("online search on cpq 3 = %+v", found)
	}
	e.do("GET", "/v2/customer/onlinesearch/2?query=IT09876543210", nil).wantStatus(t, 200).decode(t, &found)
	if len(found) != 0 {
		t.Errorf("online search on cpq 2 found %+v", found)
	}
	// Without cpqIds a customer is offered by every configurator (docs/v2-assumptions.md A8).
	body := validCustomerBody()
	delete(body, "cpqIds")
	body["taxId"] = "DE123456789"
	e.do("POST", "/v2/customer", body).wantStatus(t, http.StatusCreated).decode(t, &c)
	if len(c.CPQIDs) != 4 {
		t.Errorf("cpqIds without input = %v", c.CPQIDs)
	}

	// Duplicate tax id: 409 with a fieldError on taxId.
	dup := e.do("POST", "/v2/customer", validCustomerBody()).wantError(t, http.StatusConflict, codeConflict)
	if !dup.hasFieldError("taxId") {
		t.Errorf("duplicate: fieldErrors %+v", dup.FieldErrors)
	}
	// Validation: every bad field is named at once.
	bad := map[string]any{"name": "", "taxId": "it123", "email": "not-an-email", "phone": "call me", "segment": "VIP",
		"address": map[string]any{"country": "Italy"}, "cpqIds": []int{1, 9, 1}}
	got422 := e.do("POST", "/v2/customer", bad).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	for _, f := range []string{"name", "taxId", "email", "phone", "segment", "address.country", "cpqIds[1]", "cpqIds[2]"} {
		if !got422.hasFieldError(f) {
			t.Errorf("fieldErrors %+v do not name %s", got422.FieldErrors, f)
		}
	}
	missing := e.do("POST", "/v2/customer", `{}`).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	for _, f := range []string{"name", "taxId", "segment"} {
		if !missing.hasFieldError(f) {
			t.Errorf("empty body: fieldErrors %+v do not name %s", missing.FieldErrors, f)
		}
	}
	e.do("POST", "/v2/customer", `{"name": "X", "taxId": "IT12345678901", "segment": "BUSINESS", "name": 5}`).wantError(t, http.StatusBadRequest, codeBadRequest)
	e.do("POST", "/v2/customer", `{"name": "X", "taxId": "IT12345678901", "segment": "BUSINESS", "attributes": [1]}`).wantError(t, http.StatusBadRequest, codeBadRequest)
	e.do("POST", "/v2/customer", `{"name": "X", "taxId": "IT12345678901", "segment": "BUSINESS", "cpqIds": ["1"]}`).wantError(t, http.StatusBadRequest, codeBadRequest)
}

func TestUpdateCustomerAndAudit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	// Customer 1 has a seeded quote; give it a second one.
	_, q := e.newQuote(1)
	var before tCustomer
	e.do("GET", "/v2/customer/1", nil).wantStatus(t, 200).decode(t, &before)

	var after tCustomer
	e.do("PUT", "/v2/customer", map[string]any{"id": 1, "version": before.Version, "name": "Renamed S.p.A.",
		"address": map[string]any{"city": "Torino"}}).wantStatus(t, 200).decode(t, &after)
	if after.Name != "Renamed S.p.A." || after.Address.City != "Torino" || after.Address.Street != before.Address.Street ||
		after.TaxID != before.TaxID || after.Version != before.Version+1 || len(after.Owners) != len(before.Owners) {
		t.Fatalf("after update %+v (before %+v)", after, before)
	}
	// A stale version is a conflict; no version means last writer wins.
	e.do("PUT", "/v2/customer", map[string]any{"id": 1, "version": before.Version, "name": "Stale"}).wantError(t, http.StatusConflict, codeConflict)
	e.do("PUT", "/v2/customer", map[string]any{"id": 1, "email": "bad"}).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	e.do("PUT", "/v2/customer", map[string]any{"name": "no id"}).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	var other tCustomer
	e.do("GET", "/v2/customer/2", nil).wantStatus(t, 200).decode(t, &other)
	dup := e.do("PUT", "/v2/customer", map[string]any{"id": 1, "taxId": other.TaxID}).wantError(t, http.StatusConflict, codeConflict)
	if !dup.hasFieldError("taxId") {
		t.Errorf("duplicate tax id on update: %+v", dup.FieldErrors)
	}

	// Both quotes of customer 1 record the change with before and after of each field.
	for _, quoteID := range []int64{900001, q.QuoteID} {
		var audit struct {
			QuoteID    int64
			CustomerID int32
			Entries    []struct {
				EntryID                int64
				Actor, Action, Summary string
				Changes                []struct{ Field, Before, After string }
			}
		}
		e.do("GET", path("/v2/contract/getjsonvalidationaudit/%d", quoteID), nil).wantStatus(t, 200).decode(t, &audit)
		if audit.QuoteID != quoteID || audit.CustomerID != 1 {
			t.Fatalf("audit header %+v", audit)
		}
		last := audit.Entries[len(audit.Entries)-1]
		if last.Action != "CUSTOMER_UPDATED" || last.Actor != anonymousActor {
			t.Fatalf("quote %d: last entry %+v", quoteID, last)
		}
		changes := map[string][2]string{}
		for _, c := range last.Changes {
			changes[c.Field] = [2]string{c.Before, c.After}
		}
		if changes["name"] != [2]string{before.Name, "Renamed S.p.A."} || changes["address.city"] != [2]string{before.Address.City, "Torino"} || len(changes) != 2 {
			t.Errorf("quote %d: changes %+v", quoteID, last.Changes)
		}
	}
	// A customer without quotes can be updated too.
	e.do("PUT", "/v2/customer", map[string]any{"id": 40, "segment": "PUBLIC"}).wantStatus(t, 200)
}

// PUT changes only what the body names (docs/v2-assumptions.md A8): absent or null keeps, "" clears an
// optional text field, "" on a required field is a 422, an address object sets only the parts it names.
func TestUpdateCustomerClearsAndKeeps(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	var created tCustomer
	e.do("POST", "/v2/customer", validCustomerBody()).wantStatus(t, http.StatusCreated).decode(t, &created)
	get := func() tCustomer {
		t.Helper()
		var c tCustomer
		e.do("GET", path("/v2/customer/%d", created.ID), nil).wantStatus(t, 200).decode(t, &c)
		return c
	}

	// Clear the phone and the city; everything else is absent and kept.
	var after tCustomer
	e.do("PUT", "/v2/customer", map[string]any{"id": created.ID, "phone": "", "address": map[string]any{"city": ""}}).
		wantStatus(t, 200).decode(t, &after)
	want := created
	want.Phone, want.Address.City, want.Version = "", "", created.Version+1
	for label, c := range map[string]tCustomer{"answer": after, "read back": get()} {
		if c.Name != want.Name || c.TaxID != want.TaxID || c.Email != want.Email || c.Phone != "" || c.Segment != want.Segment ||
			c.Address != want.Address || c.Version != want.Version || len(c.CPQIDs) != 2 || string(c.Attributes) != string(created.Attributes) {
			t.Errorf("%s after clearing phone and city: %+v, want %+v", label, c, want)
		}
	}

	// null is absent, and an empty address object names no part: nothing changes, not even the version.
	e.do("PUT", "/v2/customer", `{"id": `+path("%d", created.ID)+`, "name": null, "email": null, "phone": null, "address": {}}`).
		wantStatus(t, 200).decode(t, &after)
	e.do("PUT", "/v2/customer", `{"id": `+path("%d", created.ID)+`, "address": null}`).wantStatus(t, 200).decode(t, &after)
	if after.Email != want.Email || after.Address != want.Address || after.Version != want.Version {
		t.Errorf("after null fields and an empty address: %+v, want %+v", after, want)
	}

	// A value of spaces counts as "": the e-mail and the remaining address parts are cleared.
	e.do("PUT", "/v2/customer", map[string]any{"id": created.ID, "email": "   ",
		"address": map[string]any{"street": "", "postalCode": "", "country": ""}}).wantStatus(t, 200).decode(t, &after)
	if c := get(); c.Email != "" || c.Address != (tCustomer{}).Address || c.Name != created.Name || c.Version != want.Version+1 {
		t.Errorf("after clearing the e-mail and the address: %+v", c)
	}

	// A cleared field can be given a value again, and that value is checked as before.
	e.do("PUT", "/v2/customer", map[string]any{"id": created.ID, "phone": "+39 011 555 0101", "address": map[string]any{"city": "Torino"}}).
		wantStatus(t, 200).decode(t, &after)
	if after.Phone != "+39 011 555 0101" || after.Address.City != "Torino" || after.Address.Street != "" {
		t.Errorf("after setting phone and city again: %+v", after)
	}
	bad := e.do("PUT", "/v2/customer", map[string]any{"id": created.ID, "phone": "call me", "address": map[string]any{"country": "Italy"}}).
		wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	if !bad.hasFieldError("phone") || !bad.hasFieldError("address.country") {
		t.Errorf("invalid values: fieldErrors %+v", bad.FieldErrors)
	}

	// Required fields cannot be cleared: "" (or spaces) is a 422 naming the field, and nothing is stored.
	before := get()
	for _, body := range []map[string]any{
		{"name": ""}, {"name": "  "}, {"taxId": ""}, {"segment": ""},
	} {
		var field string
		for k := range body {
			field = k
		}
		body["id"] = created.ID
		got := e.do("PUT", "/v2/customer", body).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
		if !got.hasFieldError(field) || len(got.FieldErrors) != 1 {
			t.Errorf("PUT %v: fieldErrors %+v, want one on %s", body, got.FieldErrors, field)
		}
	}
	if c := get(); c.Name != before.Name || c.TaxID != before.TaxID || c.Segment != before.Segment || c.Version != before.Version {
		t.Errorf("a refused update changed the customer: %+v, was %+v", c, before)
	}

	// attributes: an object replaces them whole, null empties them.
	e.do("PUT", "/v2/customer", map[string]any{"id": created.ID, "attributes": map[string]any{"tier": "gold"}}).wantStatus(t, 200).decode(t, &after)
	if string(after.Attributes) != `{"tier":"gold"}` {
		t.Errorf("attributes replaced: %s", after.Attributes)
	}
	e.do("PUT", "/v2/customer", map[string]any{"id": created.ID, "attributes": nil}).wantStatus(t, 200).decode(t, &after)
	if string(after.Attributes) != `{}` {
		t.Errorf("attributes after null: %s", after.Attributes)
	}
}

// On POST an optional text field sent as "" is the same as leaving it out (A8).
func TestCreateCustomerEmptyOptionalFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	body := validCustomerBody()
	body["email"], body["phone"] = "", " "
	body["address"] = map[string]any{"street": "", "city": "Milano", "postalCode": "", "country": ""}
	var c tCustomer
	e.do("POST", "/v2/customer", body).wantStatus(t, http.StatusCreated).decode(t, &c)
	if c.Email != "" || c.Phone != "" || c.Address.City != "Milano" || c.Address.Street != "" || c.Address.Country != "" {
		t.Errorf("created %+v", c)
	}
}

func TestOwnersAndProfiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	var c tCustomer
	e.do("PUT", "/v2/customer/9/owners", `{"ownerIds": [1001, 1002]}`).wantStatus(t, 200).decode(t, &c)
	if len(c.Owners) != 2 || c.Owners[0].OwnerID != 1001 || c.Owners[0].Name != "Giulia Bianchi" || c.Owners[1].OwnerID != 1002 {
		t.Fatalf("owners = %+v", c.Owners)
	}
	for _, body := range []string{`{"ownerIds": []}`, `{"ownerIds": [1001, 1001]}`, `{"ownerIds": [42]}`, `{}`} {
		e.do("PUT", "/v2/customer/9/owners", body).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	}
	e.do("PUT", "/v2/customer/9/owners", `{"ownerIds": [1,2,3,4,5,6,7,8,9,10,11]}`).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)

	e.do("POST", "/v2/customer/9/owner/1005", nil).wantStatus(t, 200).decode(t, &c)
	if len(c.Owners) != 3 || c.Owners[2].OwnerID != 1005 {
		t.Fatalf("after add: %+v", c.Owners)
	}
	e.do("POST", "/v2/customer/9/owner/1005", nil).wantError(t, http.StatusConflict, codeConflict)
	e.do("POST", "/v2/customer/9/owner/77", nil).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	e.do("POST", "/v2/customer/9/owner/1006", `{}`).wantError(t, http.StatusBadRequest, codeBadRequest)

	e.do("PUT", "/v2/customer/9/owner/change", `{"currentOwnerId": 1002, "newOwnerId": 1007}`).wantStatus(t, 200).decode(t, &c)
	if c.Owners[1].OwnerID != 1007 || len(c.Owners) != 3 {
		t.Fatalf("after change: %+v", c.Owners)
	}
	e.do("PUT", "/v2/customer/9/owner/change", `{"currentOwnerId": 1002, "newOwnerId": 1008}`).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	e.do("PUT", "/v2/customer/9/owner/change", `{"currentOwnerId": 1001, "newOwnerId": 1005}`).wantError(t, http.StatusConflict, codeConflict)
	e.do("PUT", "/v2/customer/9/owner/change", `{"currentOwnerId": 1001, "newOwnerId": 4242}`).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	e.do("PUT", "/v2/customer/99999/owner/change", `{"currentOwnerId": 1001, "newOwnerId": 1002}`).wantError(t, http.StatusNotFound, codeNotFound)

	var p struct {
		ProfileID, CustomerID                  int32
		ProfileType, ContactName, Email, Phone string
	}
	e.do("POST", "/v2/customer/customerprofile", `{"customerId": 9, "profileType": "BILLING", "contactName": "Ada Lovelace", "email": "ada@example.com", "phone": "+44 20 7946 0000"}`).
		wantStatus(t, http.StatusCreated).decode(t, &p)
	if p.ProfileID == 0 || p.CustomerID != 9 || p.ProfileType != "BILLING" || p.ContactName != "Ada Lovelace" {
		t.Fatalf("profile = %+v", p)
	}
	e.do("GET", "/v2/customer/9", nil).wantStatus(t, 200).decode(t, &c)
	if len(c.Profiles) == 0 || c.Profiles[len(c.Profiles)-1].ProfileID != p.ProfileID {
		t.Fatalf("profiles = %+v", c.Profiles)
	}
	bad := e.do("POST", "/v2/customer/customerprofile", `{"customerId": 9, "profileType": "HOME", "email": "x"}`).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	if !bad.hasFieldError("profileType") || !bad.hasFieldError("email") {
		t.Errorf("profile fieldErrors %+v", bad.FieldErrors)
	}
	e.do("POST", "/v2/customer/customerprofile", `{"customerId": 99999, "profileType": "LEGAL"}`).wantError(t, http.StatusNotFound, codeNotFound)

	e.do("DELETE", path("/v2/customer/customerprofile?customerId=9&profileId=%d", p.ProfileID), nil).wantStatus(t, http.StatusNoContent)
	e.do("DELETE", path("/v2/customer/customerprofile?customerId=9&profileId=%d", p.ProfileID), nil).wantError(t, http.StatusNotFound, codeNotFound)
	e.do("DELETE", "/v2/customer/customerprofile?customerId=9", nil).wantError(t, http.StatusBadRequest, codeBadRequest)
	e.do("DELETE", "/v2/customer/customerprofile?customerId=9&profileId=x", nil).wantError(t, http.StatusBadRequest, codeBadRequest)
	e.do("GET", "/v2/customer/9", nil).wantStatus(t, 200).decode(t, &c)
	for _, pr := range c.Profiles {
		if pr.ProfileID == p.ProfileID {
			t.Error("deleted profile still listed")
		}
	}
}

func TestOnlineSearch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Customers: 500})
	var all []tCustomer
	e.do("GET", "/v2/customer/onlinesearch/1", nil).wantStatus(t, 200).decode(t, &all)
	if len(all) != onlineSearchLimit {
		t.Fatalf("no query: %d customers, want the first %d", len(all), onlineSearchLimit)
	}
	for _, c := range all {
		if !containsInt32(c.CPQIDs, 1) {
			t.Errorf("customer %d is not associated with configurator 1: %v", c.ID, c.CPQIDs)
		}
	}
	target := all[7]
	for _, query := range []string{strings.ToUpper(target.TaxID[2:9]), strings.ToLower(target.Name), target.Email} {
		var found []tCustomer
		e.do("GET", "/v2/customer/onlinesearch/1?query="+urlQueryEscape(query), nil).wantStatus(t, 200).decode(t, &found)
		hit := false
		for _, c := range found {
			hit = hit || c.ID == target.ID
		}
		if !hit {
			t.Errorf("query %q did not find customer %d", query, target.ID)
		}
	}
	var none []tCustomer
	e.do("GET", "/v2/customer/onlinesearch/1?query=zzzz-no-such-customer", nil).wantStatus(t, 200).decode(t, &none)
	if none == nil || len(none) != 0 {
		t.Errorf("no match should answer [], got %v", none)
	}
	e.do("GET", "/v2/customer/onlinesearch/9", nil).wantError(t, http.StatusNotFound, codeNotFound)
}

func containsInt32(xs []int32, v int32) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

func urlQueryEscape(s string) string {
	r := strings.NewReplacer(" ", "%20", "&", "%26", "+", "%2B", "'", "%27", "@", "%40")
	return r.Replace(s)
}

// TestLargeCustomerList checks 100,000 customers fit the client's 64 MiB bound (A9) and are served from cache.
func TestLargeCustomerList(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 100,000 customers")
	}
	t.Parallel()
	e := newEnv(t, Options{Customers: MaxCustomers})
	r := e.do("GET", "/v2/customer/", nil).wantStatus(t, 200)
	if len(r.body) >= 64<<20 {
		t.Fatalf("list is %d bytes, over the client's 64 MiB bound", len(r.body))
	}
	if r.header.Get("Content-Length") == "" {
		t.Error("list has no Content-Length")
	}
	var list []struct{ ID int32 }
	r.decode(t, &list)
	if len(list) != MaxCustomers || list[MaxCustomers-1].ID != MaxCustomers {
		t.Fatalf("%d customers", len(list))
	}
	t.Logf("100,000 customers: %d bytes (%d per customer)", len(r.body), len(r.body)/MaxCustomers)
	e.do("GET", "/v2/customer/", nil, withHeader("If-None-Match", r.header.Get("ETag"))).wantStatus(t, http.StatusNotModified)
}

func BenchmarkCustomerList100k(b *testing.B) {
	sim := New(Options{Customers: MaxCustomers, TempDir: b.TempDir()})
	defer sim.Close()
	req, _ := http.NewRequest("GET", "/v2/customer/", nil)
	req.Header.Set("Authorization", "Bearer x")
	w := &discardWriter{header: http.Header{}}
	sim.ServeHTTP(w, req) // build the cache
	b.ResetTimer()
	for range b.N {
		w.header = http.Header{}
		sim.ServeHTTP(w, req)
	}
	b.SetBytes(w.n / int64(b.N+1))
}

type discardWriter struct {
	header http.Header
	n      int64
}

func (d *discardWriter) Header() http.Header { return d.header }
func (d *discardWriter) WriteHeader(int)     {}
func (d *discardWriter) Write(p []byte) (int, error) {
	d.n += int64(len(p))
	return len(p), nil
}
