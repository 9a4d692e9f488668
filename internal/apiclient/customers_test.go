package apiclient

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
)

func TestCustomersGet(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("GET /v2/customer/17", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodGet, false)
		testAccept(t, r, "application/json")
		testNoBody(t, r)
		writeJSON(w, 200, customerJSON)
	})
	got, err := client.Customers.Get(authCtx(t), 17)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	checkCustomer(t, got)
}

func TestCustomersList(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	const etag = `"v42"`
	f.handle("GET /v2/customer/", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodGet, false)
		testNoBody(t, r)
		if r.Header.Get("If-None-Match") == etag {
			w.Header().Set("ETag", etag)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if got, ok := r.Header["If-None-Match"]; ok {
			t.Errorf("If-None-Match = %q sent without an etag", got)
		}
		w.Header().Set("ETag", etag)
		writeJSON(w, 200, `[`+customerJSON+`, {"id": 18, "name": "Bianchi SRL", "taxId": "IT09876543210", "segment": "BUSINESS"}]`)
	})
	ctx := authCtx(t)
	customers, newETag, notModified, err := client.Customers.List(ctx, "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if notModified || newETag != etag || len(customers) != 2 {
		t.Fatalf("List = %d customers, etag %q, notModified %v", len(customers), newETag, notModified)
	}
	checkCustomerFields(t, &customers[0])
	if customers[0].Raw != nil {
		t.Errorf("listed customer keeps Raw (%d bytes); the list leaves it nil", len(customers[0].Raw))
	}
	if customers[1].ID != 18 || customers[1].Name != "Bianchi SRL" || customers[1].Owners != nil {
		t.Errorf("second customer = %+v", customers[1])
	}

	customers, newETag, notModified, err = client.Customers.List(ctx, etag)
	if err != nil {
		t.Fatalf("List with etag: %v", err)
	}
	if !notModified || newETag != etag || customers != nil {
		t.Errorf("List with etag = %v, %q, notModified %v; want 304 handling", customers, newETag, notModified)
	}
}

// The list is decoded as a stream: 100,000 customers written by the server
// as it goes arrive one by one at the callback.
func TestCustomersListEachLarge(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	const n = 100_000
	f.handle("GET /v2/customer/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("ETag", `"big"`)
		bw := bufio.NewWriter(w)
		bw.WriteString("[")
		for i := 1; i <= n; i++ {
			if i > 1 {
				bw.WriteString(",")
			}
			fmt.Fprintf(bw, `{"id":%d,"name":"Customer %d","taxId":"IT%011d","segment":"BUSINESS","owners":[{"ownerId":1001}],"cpqIds":[1]}`, i, i, i)
		}
		bw.WriteString("]")
		bw.Flush()
	})
	count, sum := 0, int64(0)
	etag, notModified, err := client.Customers.ListEach(authCtx(t), "", func(c *Customer) error {
		count++
		sum += int64(c.ID)
		if c.Name != fmt.Sprintf("Customer %d", c.ID) || len(c.Owners) != 1 {
			return fmt.Errorf("customer %d decoded as %+v", c.ID, c)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("ListEach: %v", err)
	}
	if count != n || sum != n*(n+1)/2 || etag != `"big"` || notModified {
		t.Errorf("ListEach: %d customers (id sum %d), etag %q, notModified %v", count, sum, etag, notModified)
	}

	// The callback's error stops the decoding and comes back as is.
	stop := errors.New("cache full")
	seen := 0
	_, _, err = client.Customers.ListEach(authCtx(t), "", func(*Customer) error {
		seen++
		if seen == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || errors.Is(err, ErrMalformedResponse) || seen != 3 {
		t.Errorf("ListEach with failing callback: err %v after %d customers", err, seen)
	}
}

func TestCustomersSearch(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	calls := 0
	f.handle("GET /v2/customer/onlinesearch/1", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodGet, false)
		testNoBody(t, r)
		if calls == 0 {
			testQuery(t, r, map[string]string{"query": "rossi & co/ü"})
		} else {
			testQuery(t, r, nil)
		}
		calls++
		writeJSON(w, 200, `[`+customerJSON+`]`)
	})
	got, err := client.Customers.Search(authCtx(t), 1, "rossi & co/ü")
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	if len(got) != 1 {
		t.Fatalf("Search = %d customers", len(got))
	}
	checkCustomer(t, &got[0])
	if _, err := client.Customers.Search(authCtx(t), 1, ""); err != nil {
		t.Fatalf("Search without query: %v", err)
	}
}

func TestCustomersCreate(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("POST /v2/customer", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPost, false)
		testJSONBody(t, r, `{"name": "Rossi Costruzioni S.p.A.", "taxId": "IT01234567890", "email": "amministrazione@rossi.example",
			"segment": "BUSINESS", "address": {"street": "Via Roma 1", "city": "Milano", "postalCode": "20121", "country": "IT"},
			"cpqIds": [1, 2], "attributes": {"vip": true}}`)
		writeJSON(w, http.StatusCreated, customerJSON)
	})
	got, err := client.Customers.Create(authCtx(t), CustomerInput{
		Name: "Rossi Costruzioni S.p.A.", TaxID: "IT01234567890", Email: "amministrazione@rossi.example", Segment: "BUSINESS",
		Address:    &Address{Street: "Via Roma 1", City: "Milano", PostalCode: "20121", Country: "IT"},
		CPQIDs:     []int32{1, 2},
		Attributes: json.RawMessage(`{"vip": true}`),
	})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	checkCustomer(t, got)
}

func TestCustomersUpdate(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("PUT /v2/customer", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPut, false)
		testJSONBody(t, r, `{"id": 17, "version": 3, "name": "Rossi Costruzioni S.p.A.", "taxId": "IT01234567890",
			"email": "amministrazione@rossi.example", "phone": "+39 02 1234567", "segment": "BUSINESS",
			"address": {"street": "Via Roma 1", "city": "Milano", "postalCode": "20121", "country": "IT"},
			"cpqIds": [1, 2], "attributes": {"vip": true}}`)
		writeJSON(w, 200, customerJSON)
	})
	got, err := client.Customers.Update(authCtx(t), CustomerUpdate{
		ID: 17, Version: 3, Name: "Rossi Costruzioni S.p.A.", TaxID: "IT01234567890",
		Email: new("amministrazione@rossi.example"), Phone: new("+39 02 1234567"), Segment: "BUSINESS",
		Address: &AddressUpdate{Street: new("Via Roma 1"), City: new("Milano"), PostalCode: new("20121"), Country: new("IT")},
		CPQIDs:  []int32{1, 2}, Attributes: json.RawMessage(`{"vip": true}`),
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	checkCustomer(t, got)
}

// An update names only what it changes (A8): fields left at their zero value
// are not sent (the service keeps them); a pointer to "" is sent as "" (the
// service clears the field).
func TestCustomersUpdateKeepsAndClears(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		in   CustomerUpdate
		want string
	}{
		"only the id and a new name": {
			in:   CustomerUpdate{ID: 17, Name: "Rossi S.r.l."},
			want: `{"id": 17, "name": "Rossi S.r.l."}`,
		},
		"empty required fields are left out, not sent empty": {
			in:   CustomerUpdate{ID: 17, Name: "", TaxID: "", Segment: "", Phone: new("+39 02 1234567")},
			want: `{"id": 17, "phone": "+39 02 1234567"}`,
		},
		"clear the phone and the city, keep the rest of the address": {
			in:   CustomerUpdate{ID: 17, Version: 4, Phone: new(""), Address: &AddressUpdate{City: new(""), Street: new("Via Po 2")}},
			want: `{"id": 17, "version": 4, "phone": "", "address": {"street": "Via Po 2", "city": ""}}`,
		},
		"clear every optional text field": {
			in: CustomerUpdate{ID: 17, Email: new(""), Phone: new(""),
				Address: &AddressUpdate{Street: new(""), City: new(""), PostalCode: new(""), Country: new("")}},
			want: `{"id": 17, "email": "", "phone": "", "address": {"street": "", "city": "", "postalCode": "", "country": ""}}`,
		},
		"an empty address changes nothing": {
			in:   CustomerUpdate{ID: 17, Address: &AddressUpdate{}},
			want: `{"id": 17, "address": {}}`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			client, f := setup(t)
			f.handle("PUT /v2/customer", func(w http.ResponseWriter, r *http.Request) {
				testCommon(t, r, http.MethodPut, false)
				testJSONBody(t, r, tc.want)
				writeJSON(w, 200, customerJSON)
			})
			if _, err := client.Customers.Update(authCtx(t), tc.in); err != nil {
				t.Fatalf("Update: %v", err)
			}
		})
	}
}

func TestCustomersSetOwners(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("PUT /v2/customer/17/owners", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPut, false)
		testJSONBody(t, r, `{"ownerIds": [1001, 1002]}`)
		writeJSON(w, 200, customerJSON)
	})
	got, err := client.Customers.SetOwners(authCtx(t), 17, []int64{1001, 1002})
	if err != nil {
		t.Fatalf("SetOwners: %v", err)
	}
	checkCustomer(t, got)
}

func TestCustomersAddOwner(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("POST /v2/customer/17/owner/1002", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPost, false)
		testNoBody(t, r)
		writeJSON(w, 200, customerJSON)
	})
	got, err := client.Customers.AddOwner(authCtx(t), 17, 1002)
	if err != nil {
		t.Fatalf("AddOwner: %v", err)
	}
	checkCustomer(t, got)
}

func TestCustomersChangeOwner(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("PUT /v2/customer/17/owner/change", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPut, false)
		testJSONBody(t, r, `{"currentOwnerId": 1001, "newOwnerId": 1003}`)
		writeJSON(w, 200, customerJSON)
	})
	got, err := client.Customers.ChangeOwner(authCtx(t), 17, 1001, 1003)
	if err != nil {
		t.Fatalf("ChangeOwner: %v", err)
	}
	checkCustomer(t, got)
}

func TestCustomersCreateProfile(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("POST /v2/customer/customerprofile", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPost, false)
		testJSONBody(t, r, `{"customerId": 17, "profileType": "BILLING", "contactName": "Anna Bianchi",
			"email": "billing@rossi.example", "phone": "+39 02 7654321"}`)
		writeJSON(w, http.StatusCreated, `{"profileId": 3, "customerId": 17, "profileType": "BILLING", "contactName": "Anna Bianchi",
			"email": "billing@rossi.example", "phone": "+39 02 7654321", "createdAt": "2026-01-02T03:04:05Z", "channel": "web"}`)
	})
	got, err := client.Customers.CreateProfile(authCtx(t), ProfileInput{
		CustomerID: 17, ProfileType: "BILLING", ContactName: "Anna Bianchi", Email: "billing@rossi.example", Phone: "+39 02 7654321",
	})
	if err != nil {
		t.Fatalf("CreateProfile: %v", err)
	}
	if got.ProfileID != 3 || got.CustomerID != 17 || got.ProfileType != "BILLING" || got.CreatedAt.Day() != 2 || len(got.Raw) == 0 {
		t.Errorf("CreateProfile = %+v", got)
	}
}

func TestCustomersDeleteProfile(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("DELETE /v2/customer/customerprofile", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodDelete, false)
		testQuery(t, r, map[string]string{"customerId": "17", "profileId": "3"})
		testNoBody(t, r)
		w.WriteHeader(http.StatusNoContent)
	})
	if err := client.Customers.DeleteProfile(authCtx(t), 17, 3); err != nil {
		t.Fatalf("DeleteProfile: %v", err)
	}
}
