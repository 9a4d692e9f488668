package v2sim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestFaultStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.sim.SetFault("customers.get", Fault{Status: http.StatusServiceUnavailable, Times: 2})
	e.do("GET", "/v2/customer/1", nil).wantError(t, http.StatusServiceUnavailable, "UNAVAILABLE")
	e.do("GET", "/v2/customer/2", nil).wantError(t, http.StatusServiceUnavailable, "UNAVAILABLE")
	e.do("GET", "/v2/customer/1", nil).wantStatus(t, http.StatusOK) // Times used up
	e.do("GET", "/v2/cpq/list", nil).wantStatus(t, http.StatusOK)   // other endpoints unaffected

	// A faulty answer does not change state.
	e.sim.SetFault("customers.update", Fault{Status: http.StatusInternalServerError})
	e.do("PUT", "/v2/customer", `{"id": 5, "name": "Changed"}`).wantError(t, http.StatusInternalServerError, codeInternal)
	var c tCustomer
	e.do("GET", "/v2/customer/5", nil).wantStatus(t, http.StatusOK).decode(t, &c)
	if c.Name == "Changed" {
		t.Error("a faulted update changed the customer")
	}
	e.sim.ClearFaults()
	e.do("PUT", "/v2/customer", `{"id": 5, "name": "Changed"}`).wantStatus(t, http.StatusOK)

	// "*" applies to every endpoint; a zero Fault removes it.
	e.sim.SetFault("*", Fault{Status: http.StatusBadGateway})
	e.do("GET", "/v2/cpq/list", nil).wantError(t, http.StatusBadGateway, "BAD_GATEWAY")
	e.sim.SetFault("*", Fault{})
	e.do("GET", "/v2/cpq/list", nil).wantStatus(t, http.StatusOK)
}

func TestFaultBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.sim.SetFault("cpq.list", Fault{Malformed: true, Times: 1})
	r := e.do("GET", "/v2/cpq/list", nil).wantStatus(t, http.StatusOK)
	if r.header.Get("Content-Type") != "application/json" || json.Valid(r.body) {
		t.Errorf("malformed fault answered %q %s", r.header.Get("Content-Type"), r.body)
	}
	e.sim.SetFault("cpq.list", Fault{WrongContentType: true, Status: http.StatusBadGateway, Times: 1})
	r = e.do("GET", "/v2/cpq/list", nil).wantStatus(t, http.StatusBadGateway)
	if !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || !strings.Contains(string(r.body), "<html>") {
		t.Errorf("wrong content type fault answered %q %s", r.header.Get("Content-Type"), r.body)
	}

	// Truncated: the declared length is never delivered.
	e.sim.SetFault("cpq.list", Fault{Truncated: true, Times: 1})
	req, _ := http.NewRequest("GET", e.srv.URL+"/v2/cpq/list", nil)
	req.Header.Set("Authorization", "Bearer x")
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("reading a truncated body: err = %v, want unexpected EOF", err)
	}
	e.do("GET", "/v2/cpq/list", nil).wantStatus(t, http.StatusOK)
}

func TestFaultHangAndDelay(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	get := func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/v2/cpq/list", nil)
		req.Header.Set("Authorization", "Bearer x")
		resp, err := e.srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	for _, f := range []Fault{{Hang: true}, {Delay: time.Hour}} {
		e.sim.SetFault("cpq.list", f)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err := get(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("fault %+v: err = %v, want the client's deadline", f, err)
		}
	}
	// A short delay alone still runs the endpoint.
	e.sim.SetFault("cpq.list", Fault{Delay: time.Millisecond})
	var cpqs []struct{ ID int32 }
	e.do("GET", "/v2/cpq/list", nil).wantStatus(t, http.StatusOK).decode(t, &cpqs)
	if len(cpqs) != 4 {
		t.Errorf("delayed answer = %v", cpqs)
	}
}

func TestRandomFaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Faults: Faults{ErrorRate: 1}})
	for range 3 {
		e.do("GET", "/v2/customer/1", nil).wantError(t, http.StatusInternalServerError, codeInternal)
	}
	m := newEnv(t, Options{Faults: Faults{MalformedRate: 1}})
	if r := m.do("GET", "/v2/customer/1", nil).wantStatus(t, http.StatusOK); json.Valid(r.body) {
		t.Errorf("malformed rate 1 answered valid JSON %s", r.body)
	}
	// A per-endpoint fault wins over random ones, and clearing it brings them back.
	e.sim.SetFault("customers.get", Fault{Delay: time.Millisecond})
	e.do("GET", "/v2/customer/1", nil).wantStatus(t, http.StatusOK)
	e.sim.ClearFaults()
	e.do("GET", "/v2/customer/1", nil).wantError(t, http.StatusInternalServerError, codeInternal)
	// Rates between 0 and 1 mix answers, deterministically from the seed.
	mixed := newEnv(t, Options{Seed: 3, Faults: Faults{ErrorRate: 0.5}})
	statuses := map[int]int{}
	for range 40 {
		statuses[mixed.do("GET", "/v2/cpq/list", nil).status]++
	}
	if statuses[200] == 0 || statuses[500] == 0 {
		t.Errorf("error rate 0.5 gave %v", statuses)
	}
}

func TestAdminAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Admin: true})
	admin := func(method, p, body string) response {
		t.Helper()
		r := e.do(method, p, body, withoutHeader("Authorization"))
		return r
	}
	admin("POST", "/_sim/faults", `{"endpoint": "cpq.list", "fault": {"status": 502, "times": 1}}`).wantStatus(t, http.StatusNoContent)
	admin("POST", "/_sim/faults", `{"endpoint": "customers.get", "fault": {"delay": "1ms", "malformed": true}}`).wantStatus(t, http.StatusNoContent)
	var faults map[string]struct {
		Status    int
		Delay     string
		Malformed bool
	}
	admin("GET", "/_sim/faults", "").wantStatus(t, 200).decode(t, &faults)
	if faults["cpq.list"].Status != 502 || faults["customers.get"].Delay != "1ms" || !faults["customers.get"].Malformed {
		t.Errorf("faults = %+v", faults)
	}
	e.do("GET", "/v2/cpq/list", nil).wantError(t, http.StatusBadGateway, "BAD_GATEWAY")
	e.do("GET", "/v2/cpq/list", nil).wantStatus(t, http.StatusOK)
	if r := e.do("GET", "/v2/customer/1", nil); json.Valid(r.body) {
		t.Error("admin-set malformed fault not applied")
	}
	admin("POST", "/_sim/faults", `{"endpoint": "no.such", "fault": {"status": 500}}`).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	admin("POST", "/_sim/faults", `{"endpoint": "cpq.list", "fault": {"delay": "soon"}}`).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	admin("POST", "/_sim/faults", `{"endpoint": "cpq.list"`).wantError(t, http.StatusBadRequest, codeBadRequest)
	admin("DELETE", "/_sim/faults", "").wantStatus(t, http.StatusNoContent)
	e.do("GET", "/v2/customer/1", nil).wantStatus(t, http.StatusOK)

	var reqs []RecordedRequest
	admin("GET", "/_sim/requests?endpoint=customers.get", "").wantStatus(t, 200).decode(t, &reqs)
	if len(reqs) != 2 || reqs[1].Status != 200 || reqs[1].Header.Get("Authorization") != "Bearer test-token" {
		t.Errorf("recorded customers.get requests = %+v", reqs)
	}
	admin("POST", "/_sim/reset-requests", "").wantStatus(t, http.StatusNoContent)
	admin("GET", "/_sim/requests", "").wantStatus(t, 200).decode(t, &reqs)
	if len(reqs) != 0 {
		t.Errorf("after reset: %d requests (admin calls are not recorded)", len(reqs))
	}
	var names []string
	admin("GET", "/_sim/endpoints", "").wantStatus(t, 200).decode(t, &names)
	if len(names) != 38 {
		t.Errorf("%d endpoint names", len(names))
	}
	admin("GET", "/_sim/other", "").wantError(t, http.StatusNotFound, codeNotFound)
}

func TestFaultByClientEndpointName(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Admin: true})
	e.sim.SetFault("contracts.getbynumber", Fault{Status: http.StatusServiceUnavailable, Times: 1})
	e.do("GET", "/v2/contract/bycontractnumber/C-2026-000001", nil).wantError(t, http.StatusServiceUnavailable, "UNAVAILABLE")
	e.do("POST", "/_sim/faults", `{"endpoint": "customers.owner.add", "fault": {"status": 500, "times": 1}}`, withoutHeader("Authorization")).wantStatus(t, http.StatusNoContent)
	e.do("POST", "/v2/customer/3/owner/1010", nil).wantError(t, http.StatusInternalServerError, codeInternal)
	if got := e.sim.Requests(); got[len(got)-1].Endpoint != "customers.owners.add" {
		t.Errorf("recorded endpoint %q", got[len(got)-1].Endpoint)
	}
}
