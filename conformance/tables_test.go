package conformance

import (
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/v2sim"
)

// specEndpoints is the suite's own transcription of the 38 endpoints of
// shared/spec/v2-api.md sections 4.1 to 4.5 (paths without the parameter
// types), with the query parameters of docs/v2-assumptions.md A5, A7, A8 and
// the X-SessionId rule of R4 and section 5. It is written from the spec, not
// from the client, so a mistake in apiclient.Endpoints() shows in
// TestEndpointTable; the recorder names requests with it.
func specEndpoints() []apiclient.Endpoint {
	const g, p, u, d = http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete
	// R4: calls 3 to 9 and 11 to 16 carry X-SessionId; section 5: list, init
	// and toflist are made without it; sections 4.2 to 4.5 do not use it.
	req, without, unused := apiclient.SessionRequired, apiclient.SessionForbidden, apiclient.SessionNotUsed
	return []apiclient.Endpoint{
		{Name: apiclient.EndpointCPQList, Section: "4.1", Number: 1, Method: g, Path: "/v2/cpq/list", Session: without},
		{Name: apiclient.EndpointCPQInit, Section: "4.1", Number: 2, Method: p, Path: "/v2/cpq/{cpqId}/customer/{customerId}/init", Session: without},
		{Name: apiclient.EndpointCPQAddCart, Section: "4.1", Number: 3, Method: p, Path: "/v2/cpq/{cpqId}/tof/{tofId}/addcart", Session: req},
		{Name: apiclient.EndpointCPQAddCartToQuote, Section: "4.1", Number: 4, Method: p, Path: "/v2/cpq/{cpqId}/tof/{tofId}/addcart",
			Query: []string{"quoteId"}, Session: req},
		{Name: apiclient.EndpointCPQAddItem, Section: "4.1", Number: 5, Method: p,
			Path: "/v2/cpq/{cpqId}/quote/{quoteId}/basket/{basketId}/parent/{parentId}/additemtocart", Session: req},
		{Name: apiclient.EndpointCPQRemoveItem, Section: "4.1", Number: 6, Method: d,
			Path: "/v2/cpq/{cpqId}/quote/{quoteId}/basket/{basketId}/node/{nodeId}/parent/{parentId}", Session: req},
		{Name: apiclient.EndpointCPQRemoveCart, Section: "4.1", Number: 7, Method: d, Path: "/v2/cpq/{cpqId}/quote/{quoteId}/basket/{basketId}", Session: req},
		{Name: apiclient.EndpointCPQQuantity, Section: "4.1", Number: 8, Method: u, Path: "/v2/cpq/{cpqId}/quote/{quoteId}/basket/{basketId}/quantity", Session: req},
		{Name: apiclient.EndpointCPQValidProducts, Section: "4.1", Number: 9, Method: g, Path: "/v2/cpq/{cpqId}/tof/{tofId}/validproducts", Session: req},
		{Name: apiclient.EndpointCPQTOFList, Section: "4.1", Number: 10, Method: g,
			Path: "/v2/cpq/{cpqId}/customer/{customerId}/quote/{quoteId}/toflist", Session: without},
		{Name: apiclient.EndpointCPQApplicableDiscounts, Section: "4.1", Number: 11, Method: g, Path: "/v2/cpq/{cpqId}/quote/{quoteId}/applicableDiscounts", Session: req},
		{Name: apiclient.EndpointCPQApplyDiscounts, Section: "4.1", Number: 12, Method: u, Path: "/v2/cpq/{cpqId}/quote/{quoteId}/applyDiscounts", Session: req},
		{Name: apiclient.EndpointCPQReprice, Section: "4.1", Number: 13, Method: u, Path: "/v2/cpq/{cpqId}/quote/{quoteId}/reprice", Session: req},
		{Name: apiclient.EndpointCPQPackageGet, Section: "4.1", Number: 14, Method: g, Path: "/v2/cpq/{cpqId}/tof/{tofId}/package/{quoteId}", Session: req},
		{Name: apiclient.EndpointCPQPackageAdd, Section: "4.1", Number: 15, Method: p, Path: "/v2/cpq/{cpqId}/package", Session: req},
		{Name: apiclient.EndpointCPQChangePricelist, Section: "4.1", Number: 16, Method: u, Path: "/v2/cpq/{cpqId}/quote/{quoteId}/changePricelist", Session: req},

		{Name: apiclient.EndpointAttachmentUpload, Section: "4.2", Method: p,
			Path: "/v2/attachment/file/quote/{quoteId}/attachmentType/{attachmentType}", Session: unused},
		{Name: apiclient.EndpointAttachmentDelete, Section: "4.2", Method: d, Path: "/v2/attachment/{attachmentid}/quote/{quoteId}", Session: unused},
		{Name: apiclient.EndpointAttachmentDownload, Section: "4.2", Method: g, Path: "/v2/attachment/{attachmentid}/quote/{quoteId}", Session: unused},
		{Name: apiclient.EndpointContractGenerate, Section: "4.2", Method: p, Path: "/v2/contract/{quoteId}/generate", Session: unused},

		{Name: apiclient.EndpointSignatureCreate, Section: "4.3", Method: p, Path: "/v2/signature", Session: unused},
		{Name: apiclient.EndpointSignatureDelete, Section: "4.3", Method: d, Path: "/v2/signature", Query: []string{"contractId"}, Session: unused},

		{Name: apiclient.EndpointContractGet, Section: "4.4", Method: g, Path: "/v2/contract/{contractId}", Session: unused},
		{Name: apiclient.EndpointContractGetByNumber, Section: "4.4", Method: g, Path: "/v2/contract/bycontractnumber/{contractnumber}", Session: unused},
		{Name: apiclient.EndpointContractArchive, Section: "4.4", Method: g, Path: "/v2/contract/contractNumber/{contractNumber}/archive", Session: unused},
		{Name: apiclient.EndpointContractDigitalArchivePayload, Section: "4.4", Method: g,
			Path: "/v2/contract/digitalarchivepayload/{contractNumber}", Session: unused},
		{Name: apiclient.EndpointContractValidationAudit, Section: "4.4", Method: g, Path: "/v2/contract/getjsonvalidationaudit/{quoteId}", Session: unused},
		{Name: apiclient.EndpointContractValidationAuditPDF, Section: "4.4", Method: g,
			Path: "/v2/contract/downloadvalidationauditpdf/{quoteId}", Session: unused},

		{Name: apiclient.EndpointCustomerGet, Section: "4.5", Method: g, Path: "/v2/customer/{id}", Session: unused},
		{Name: apiclient.EndpointCustomerList, Section: "4.5", Method: g, Path: "/v2/customer/", Session: unused},
		{Name: apiclient.EndpointCustomerSearch, Section: "4.5", Method: g, Path: "/v2/customer/onlinesearch/{cpqId}", Query: []string{"query"}, Session: unused},
		{Name: apiclient.EndpointCustomerCreate, Section: "4.5", Method: p, Path: "/v2/customer", Session: unused},
		{Name: apiclient.EndpointCustomerUpdate, Section: "4.5", Method: u, Path: "/v2/customer", Session: unused},
		{Name: apiclient.EndpointCustomerOwnersUpdate, Section: "4.5", Method: u, Path: "/v2/customer/{id}/owners", Session: unused},
		{Name: apiclient.EndpointCustomerOwnerAdd, Section: "4.5", Method: p, Path: "/v2/customer/{id}/owner/{ownerId}", Session: unused},
		{Name: apiclient.EndpointCustomerOwnerChange, Section: "4.5", Method: u, Path: "/v2/customer/{id}/owner/change", Session: unused},
		{Name: apiclient.EndpointCustomerProfileCreate, Section: "4.5", Method: p, Path: "/v2/customer/customerprofile", Session: unused},
		{Name: apiclient.EndpointCustomerProfileDelete, Section: "4.5", Method: d, Path: "/v2/customer/customerprofile",
			Query: []string{"customerId", "profileId"}, Session: unused},
	}
}

// TestEndpointTable checks the client's endpoint table against the suite's
// transcription of the spec, and the suite's own instrument: the recorder's
// matcher names every endpoint back from a request path built from its
// template.
func TestEndpointTable(t *testing.T) {
	t.Parallel()
	endpoints := specEndpoints()
	if len(endpoints) != 38 {
		t.Fatalf("the suite's table has %d endpoints, the spec (sections 4.1 to 4.5) has 38", len(endpoints))
	}
	client := apiclient.Endpoints()
	if len(client) != len(endpoints) {
		t.Errorf("apiclient.Endpoints() has %d endpoints, the spec has %d", len(client), len(endpoints))
	}
	for i := range min(len(client), len(endpoints)) {
		if !reflect.DeepEqual(client[i], endpoints[i]) {
			t.Errorf("apiclient.Endpoints()[%d] = %+v, the spec says %+v", i, client[i], endpoints[i])
		}
	}
	matchers := newEndpointMatchers()
	seen := map[string]bool{}
	for _, ep := range endpoints {
		if seen[ep.Name] {
			t.Errorf("endpoint name %s appears twice", ep.Name)
		}
		seen[ep.Name] = true
		path := ep.Path
		for strings.Contains(path, "{") {
			open := strings.IndexByte(path, '{')
			end := strings.IndexByte(path, '}')
			path = path[:open] + "7" + path[end+1:]
		}
		query := url.Values{}
		for _, q := range ep.Query {
			query.Set(q, "7")
		}
		if got := matchEndpoint(matchers, ep.Method, path, query); got != ep.Name {
			t.Errorf("%s %s?%s matches %q, want %q", ep.Method, path, query.Encode(), got, ep.Name)
		}
	}
	// A contract number with an escaped "/" stays one segment.
	if got := matchEndpoint(matchers, "GET", "/v2/contract/bycontractnumber/A%2F..%2Fx", nil); got != apiclient.EndpointContractGetByNumber {
		t.Errorf("an escaped slash in a contract number matches %q", got)
	}
	if got := matchEndpoint(matchers, "GET", "/v2/contract/bycontractnumber/A/x", nil); got != "" {
		t.Errorf("an unescaped slash in a contract number matches %q, want no endpoint", got)
	}
}

// TestEndpointNameMapping keeps simEndpointNames a one-to-one map between
// the client's 38 endpoint names and the simulator's.
func TestEndpointNameMapping(t *testing.T) {
	t.Parallel()
	sim := v2sim.New(v2sim.Options{AcceptAnyToken: true, Customers: 1})
	t.Cleanup(func() { _ = sim.Close() })
	simNames := sim.EndpointNames()
	if len(simNames) != 38 {
		t.Errorf("the simulator serves %d endpoints, want 38", len(simNames))
	}
	var clientNames []string
	for _, ep := range specEndpoints() {
		clientNames = append(clientNames, ep.Name)
	}
	slices.Sort(clientNames)
	var mapped, targets []string
	for name, simName := range simEndpointNames {
		mapped = append(mapped, name)
		targets = append(targets, simName)
	}
	slices.Sort(mapped)
	slices.Sort(targets)
	slices.Sort(simNames)
	if !slices.Equal(mapped, clientNames) {
		t.Errorf("simEndpointNames covers client endpoints %q, want %q", mapped, clientNames)
	}
	if !slices.Equal(targets, simNames) {
		t.Errorf("simEndpointNames maps to %q, the simulator's names are %q", targets, simNames)
	}
}
