package v2sim

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// restrictedEnv is a simulator with RestrictToOwners and verified JWTs, and a bearer option per demo user.
type restrictedEnv struct {
	*env
	as map[string]reqOpt // login -> Authorization header of a token for that user
}

func newRestrictedEnv(t *testing.T, restrict bool) restrictedEnv {
	t.Helper()
	iss := newTestIssuer(t)
	iss.ready.Store(true)
	e := newEnv(t, Options{IssuerURL: iss.srv.URL, RestrictToOwners: restrict})
	now := e.clock.Now()
	as := map[string]reqOpt{}
	for login, role := range map[string]string{"sales": "sales", "teamlead": "team-lead", "backoffice": "backoffice", "nobody": "sales"} {
		token := signJWT(t, iss.key, map[string]any{"iss": iss.srv.URL, "sub": "demo-" + login, "aud": "portal",
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "preferred_username": login, "roles": []string{role}})
		as[login] = withHeader("Authorization", "Bearer "+token)
	}
	return restrictedEnv{env: e, as: as}
}

type tOwnedCustomer struct {
	ID     int32
	Name   string
	CPQIDs []int32
	Owners []struct{ OwnerID int64 }
}

func (c tOwnedCustomer) ownedBy(ownerID int64) bool {
	return slices.ContainsFunc(c.Owners, func(o struct{ OwnerID int64 }) bool { return o.OwnerID == ownerID })
}

// customersOf lists the customers the user's GET /v2/customer/ answers, and the ETag.
func (e restrictedEnv) customersOf(login string) ([]tOwnedCustomer, string) {
	e.t.Helper()
	var list []tOwnedCustomer
	r := e.do("GET", "/v2/customer/", nil, e.as[login]).wantStatus(e.t, http.StatusOK)
	r.decode(e.t, &list)
	return list, r.header.Get("ETag")
}

// firstOwnedBy answers a customer with configurator 1 owned by ownerID alone.
func firstOwnedBy(t *testing.T, all []tOwnedCustomer, ownerID int64) tOwnedCustomer {
	t.Helper()
	for _, c := range all {
		if len(c.Owners) == 1 && c.ownedBy(ownerID) && slices.Contains(c.CPQIDs, 1) {
			return c
		}
	}
	t.Fatalf("no seeded customer with configurator 1 is owned by %d alone", ownerID)
	return tOwnedCustomer{}
}

const (
	teamLeadOwner = 1001 // Giulia Bianchi, login teamlead
	salesOwner    = 1010 // Sam Sales, login sales
)

func TestRestrictToOwnersLists(t *testing.T) {
	t.Parallel()
	e := newRestrictedEnv(t, true)
	all, allTag := e.customersOf("backoffice")
	if len(all) != DefaultCustomers {
		t.Fatalf("back office (unrestricted) sees %d customers, want all %d", len(all), DefaultCustomers)
	}
	for _, tc := range []struct {
		login   string
		ownerID int64
	}{{"sales", salesOwner}, {"teamlead", teamLeadOwner}, {"nobody", 0}} {
		mine, tag := e.customersOf(tc.login)
		want := 0
		for _, c := range all {
			if c.ownedBy(tc.ownerID) {
				want++
			}
		}
		if len(mine) != want || (tc.ownerID != 0 && want < 3) {
			t.Errorf("%s sees %d customers, owns %d of %d (the seed must give a demo user a few)", tc.login, len(mine), want, len(all))
		}
		for _, c := range mine {
			if !c.ownedBy(tc.ownerID) {
				t.Errorf("%s sees customer %d owned by %+v", tc.login, c.ID, c.Owners)
			}
		}
		if tag == allTag || tag == "" {
			t.Errorf("%s's list has ETag %q, the full list %q: a restricted list needs its own", tc.login, tag, allTag)
		}
		e.do("GET", "/v2/customer/", nil, e.as[tc.login], withHeader("If-None-Match", tag)).wantStatus(t, http.StatusNotModified)
	}
	if salesList, _ := e.customersOf("sales"); len(salesList) > 0 {
		if teamList, _ := e.customersOf("teamlead"); len(teamList) > 0 && salesList[0].ID == teamList[0].ID {
			t.Errorf("sales and the team lead own the same first customer %d", salesList[0].ID)
		}
	}

	// The online search leaves others' customers out too.
	var found []tOwnedCustomer
	e.do("GET", "/v2/customer/onlinesearch/1", nil, e.as["sales"]).wantStatus(t, http.StatusOK).decode(t, &found)
	if len(found) == 0 {
		t.Fatal("sales finds none of their customers of configurator 1")
	}
	for _, c := range found {
		if !c.ownedBy(salesOwner) {
			t.Errorf("online search shows sales customer %d owned by %+v", c.ID, c.Owners)
		}
	}
}

func TestRestrictToOwnersRefusesOthersCustomersQuotesAndContracts(t *testing.T) {
	t.Parallel()
	e := newRestrictedEnv(t, true)
	all, _ := e.customersOf("backoffice")
	salesCustomer := firstOwnedBy(t, all, salesOwner)
	leadCustomer := firstOwnedBy(t, all, teamLeadOwner)
	sales, lead, backoffice := e.as["sales"], e.as["teamlead"], e.as["backoffice"]
	forbidden := func(method, p string, body any, opts ...reqOpt) {
		t.Helper()
		e.do(method, p, body, opts...).wantError(t, http.StatusForbidden, codeForbidden)
	}

	// Sales makes a quote and a contract for their customer.
	sid := e.session(1, salesCustomer.ID, sales)
	var q tQuote
	e.do("POST", "/v2/cpq/1/tof/11/addcart", map[string]any{"productId": 102, "tofProductId": 1102, "customerId": salesCustomer.ID},
		sales, withSession(sid)).wantStatus(t, http.StatusOK).decode(t, &q)
	var contract struct {
		ContractID     int32
		ContractNumber string
	}
	e.do("POST", path("/v2/contract/%d/generate", q.QuoteID), nil, sales).wantStatus(t, http.StatusCreated).decode(t, &contract)
	e.do("GET", path("/v2/contract/%d", contract.ContractID), nil, sales).wantStatus(t, http.StatusOK)

	// The team lead may not see any of it; unknown ids still answer 404.
	forbidden("GET", path("/v2/customer/%d", salesCustomer.ID), nil, lead)
	e.do("GET", "/v2/customer/99999", nil, lead).wantError(t, http.StatusNotFound, codeNotFound)
	forbidden("PUT", "/v2/customer", map[string]any{"id": salesCustomer.ID, "name": "Taken over"}, lead)
	forbidden("POST", "/v2/customer/customerprofile", map[string]any{"customerId": salesCustomer.ID, "profileType": "BILLING"}, lead)
	forbidden("PUT", path("/v2/customer/%d/owner/change", salesCustomer.ID), map[string]any{"currentOwnerId": salesOwner, "newOwnerId": teamLeadOwner}, lead)
	forbidden("POST", path("/v2/cpq/1/customer/%d/init", salesCustomer.ID), nil, lead)
	forbidden("GET", path("/v2/cpq/1/customer/%d/quote/%d/toflist", salesCustomer.ID, q.QuoteID), nil, lead)
	forbidden("PUT", path("/v2/cpq/1/quote/%d/basket/%d/quantity", q.QuoteID, q.Carts[0].BasketID), `{"quantity":2}`, lead, withSession(sid))
	forbidden("POST", path("/v2/contract/%d/generate", q.QuoteID), nil, lead)
	forbidden("GET", path("/v2/contract/%d", contract.ContractID), nil, lead)
	forbidden("GET", "/v2/contract/bycontractnumber/"+contract.ContractNumber, nil, lead)
	forbidden("GET", "/v2/contract/contractNumber/"+contract.ContractNumber+"/archive", nil, lead)
	forbidden("GET", "/v2/contract/digitalarchivepayload/"+contract.ContractNumber, nil, lead)
	forbidden("GET", path("/v2/contract/getjsonvalidationaudit/%d", q.QuoteID), nil, lead)
	forbidden("GET", path("/v2/contract/downloadvalidationauditpdf/%d", q.QuoteID), nil, lead)
	forbidden("POST", "/v2/signature", map[string]any{"contractId": contract.ContractID, "email": "x@example.com", "signerName": "X"}, lead)
	forbidden("DELETE", path("/v2/signature?contractId=%d", contract.ContractID), nil, lead)
	forbidden("GET", path("/v2/attachment/1/quote/%d", q.QuoteID), nil, lead)
	e.do("GET", path("/v2/contract/getjsonvalidationaudit/%d", q.QuoteID), nil, sales).wantStatus(t, http.StatusOK)

	// The team lead works on their own customer; the back office sees both.
	leadSession := e.session(1, leadCustomer.ID, lead)
	var leadQuote tQuote
	e.do("POST", "/v2/cpq/1/tof/11/addcart", map[string]any{"productId": 102, "tofProductId": 1102, "customerId": leadCustomer.ID},
		lead, withSession(leadSession)).wantStatus(t, http.StatusOK).decode(t, &leadQuote)
	forbidden("GET", path("/v2/cpq/1/customer/%d/quote/%d/toflist", leadCustomer.ID, leadQuote.QuoteID), nil, sales)
	e.do("GET", path("/v2/cpq/1/customer/%d/quote/%d/toflist", leadCustomer.ID, leadQuote.QuoteID), nil, backoffice).wantStatus(t, http.StatusOK)
	e.do("GET", path("/v2/contract/%d", contract.ContractID), nil, backoffice).wantStatus(t, http.StatusOK)

	// A customer a restricted user creates is theirs.
	var created tOwnedCustomer
	e.do("POST", "/v2/customer", map[string]any{"name": "Lead Created S.r.l.", "taxId": "IT99887766554", "segment": "BUSINESS"}, lead).
		wantStatus(t, http.StatusCreated).decode(t, &created)
	if len(created.Owners) != 1 || !created.ownedBy(teamLeadOwner) {
		t.Errorf("the team lead's new customer has owners %+v, want the team lead", created.Owners)
	}
	forbidden("GET", path("/v2/customer/%d", created.ID), nil, sales)
}

func TestRestrictToOwnersOwnerChangeMovesAccess(t *testing.T) {
	t.Parallel()
	e := newRestrictedEnv(t, true)
	all, _ := e.customersOf("backoffice")
	c := firstOwnedBy(t, all, salesOwner)
	sales, lead := e.as["sales"], e.as["teamlead"]
	sid, q := e.session(1, c.ID, sales), tQuote{}
	e.do("POST", "/v2/cpq/1/tof/11/addcart", map[string]any{"productId": 102, "tofProductId": 1102, "customerId": c.ID},
		sales, withSession(sid)).wantStatus(t, http.StatusOK).decode(t, &q)
	toflist := path("/v2/cpq/1/customer/%d/quote/%d/toflist", c.ID, q.QuoteID)
	e.do("GET", toflist, nil, lead).wantError(t, http.StatusForbidden, codeForbidden)

	// Sales hands the customer to the team lead: the customer, its quote and the running session go with it.
	e.do("PUT", path("/v2/customer/%d/owner/change", c.ID), map[string]any{"currentOwnerId": salesOwner, "newOwnerId": teamLeadOwner}, sales).
		wantStatus(t, http.StatusOK)
	e.do("GET", path("/v2/customer/%d", c.ID), nil, sales).wantError(t, http.StatusForbidden, codeForbidden)
	e.do("GET", toflist, nil, sales).wantError(t, http.StatusForbidden, codeForbidden)
	e.do("PUT", path("/v2/cpq/1/quote/%d/basket/%d/quantity", q.QuoteID, q.Carts[0].BasketID), `{"quantity":2}`, sales, withSession(sid)).
		wantError(t, http.StatusForbidden, codeForbidden)
	e.do("GET", path("/v2/customer/%d", c.ID), nil, lead).wantStatus(t, http.StatusOK)
	e.do("GET", toflist, nil, lead).wantStatus(t, http.StatusOK)
	if mine, _ := e.customersOf("sales"); slices.ContainsFunc(mine, func(x tOwnedCustomer) bool { return x.ID == c.ID }) {
		t.Errorf("sales still lists customer %d after handing it over", c.ID)
	}
	if mine, _ := e.customersOf("teamlead"); !slices.ContainsFunc(mine, func(x tOwnedCustomer) bool { return x.ID == c.ID }) {
		t.Errorf("the team lead does not list customer %d they now own", c.ID)
	}
}

func TestWithoutRestrictionEveryoneSeesEverything(t *testing.T) {
	t.Parallel()
	e := newRestrictedEnv(t, false)
	all, tag := e.customersOf("backoffice")
	mine, leadTag := e.customersOf("teamlead")
	if len(mine) != len(all) || tag != leadTag {
		t.Errorf("without RestrictToOwners the team lead sees %d customers (ETag %s), the back office %d (%s)", len(mine), leadTag, len(all), tag)
	}
	c := firstOwnedBy(t, all, salesOwner)
	e.do("GET", path("/v2/customer/%d", c.ID), nil, e.as["teamlead"]).wantStatus(t, http.StatusOK)
	var created tOwnedCustomer
	e.do("POST", "/v2/customer", map[string]any{"name": "Nobody's S.r.l.", "taxId": "IT99887766554", "segment": "BUSINESS"}, e.as["teamlead"]).
		wantStatus(t, http.StatusCreated).decode(t, &created)
	if len(created.Owners) != 0 {
		t.Errorf("without RestrictToOwners a new customer has owners %+v, want none (A8)", created.Owners)
	}
}
