package v2sim

import (
	"net/http"
	"slices"
	"time"
)

// faultRequest is the body of POST /_sim/faults. Delay is a Go duration ("250ms", "2s").
type faultRequest struct {
	Endpoint string `json:"endpoint"`
	Fault    struct {
		Fault
		Delay string `json:"delay"`
	} `json:"fault"`
}

// faultView is how GET /_sim/faults shows a fault.
type faultView struct {
	Fault
	Delay string `json:"delay,omitempty"`
}

// adminHandler serves the control API under /_sim/ (Options.Admin, flag -admin) so browser tests and other
// processes can read the request log, set faults and answer signature requests as their signers (signer.go). It needs no token: it is a test tool on a loopback port.
func (s *Server) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_sim/requests", func(w http.ResponseWriter, r *http.Request) {
		reqs := s.Requests()
		if ep := r.URL.Query().Get("endpoint"); ep != "" {
			reqs = slices.DeleteFunc(reqs, func(rr RecordedRequest) bool { return rr.Endpoint != ep })
		}
		body, _ := marshalJSON(reqs)
		_ = writeJSON(w, http.StatusOK, body)
	})
	mux.HandleFunc("GET /_sim/archive-conflicts", func(w http.ResponseWriter, r *http.Request) {
		body, _ := marshalJSON(map[string]int{"archiveConflicts": s.ArchiveConflicts()})
		_ = writeJSON(w, http.StatusOK, body)
	})
	mux.HandleFunc("POST /_sim/reset-requests", func(w http.ResponseWriter, r *http.Request) {
		s.ResetRequests()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /_sim/endpoints", func(w http.ResponseWriter, r *http.Request) {
		body, _ := marshalJSON(s.EndpointNames())
		_ = writeJSON(w, http.StatusOK, body)
	})
	mux.HandleFunc("GET /_sim/faults", func(w http.ResponseWriter, r *http.Request) {
		s.faults.mu.Lock()
		out := map[string]faultView{}
		for name, f := range s.faults.byEndpoint {
			v := faultView{Fault: *f}
			if f.Delay > 0 {
				v.Delay = f.Delay.String()
			}
			out[name] = v
		}
		s.faults.mu.Unlock()
		body, _ := marshalJSON(out)
		_ = writeJSON(w, http.StatusOK, body)
	})
	mux.HandleFunc("POST /_sim/faults", func(w http.ResponseWriter, r *http.Request) {
		var in faultRequest
		if err := decodeJSON(r, &in); err != nil {
			s.renderError(w, r, err)
			return
		}
		var v validator
		in.Endpoint = canonicalEndpoint(in.Endpoint)
		v.check(in.Endpoint == faultAll || slices.Contains(s.EndpointNames(), in.Endpoint), "endpoint", "must be an endpoint name (GET /_sim/endpoints) or *")
		f := in.Fault.Fault
		if in.Fault.Delay != "" {
			d, err := time.ParseDuration(in.Fault.Delay)
			v.check(err == nil && d >= 0, "fault.delay", "must be a duration such as 250ms or 2s")
			f.Delay = d
		}
		v.check(f.Status == 0 || (f.Status >= 100 && f.Status <= 599), "fault.status", "must be an HTTP status")
		v.check(f.Times >= 0, "fault.times", "must be >= 0")
		if err := v.err(); err != nil {
			s.renderError(w, r, err)
			return
		}
		s.SetFault(in.Endpoint, f)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("DELETE /_sim/faults", func(w http.ResponseWriter, r *http.Request) {
		s.ClearFaults()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /_sim/signatures", s.adminSignatures)
	mux.HandleFunc("POST /_sim/signatures/answer", s.adminAnswer)
	mux.HandleFunc("POST /_sim/customers/name", s.adminRenameCustomer)
	mux.HandleFunc("/_sim/", func(w http.ResponseWriter, r *http.Request) {
		writeErrorBody(w, r, errNotFound("no simulator control endpoint %s %s", r.Method, r.URL.Path))
	})
	return mux
}

// adminRenameCustomer stores a customer's name as another client of the v2 API may have written
// it (POST /_sim/customers/name, body {"id", "name"}), for browser tests of names the portal
// itself refuses at input (a name ending in U+202E RIGHT-TO-LEFT OVERRIDE, issue 38): 204, 404
// for an unknown customer, 422 for an empty name. The change counts as any other (new version).
func (s *Server) adminRenameCustomer(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	if err := decodeJSON(r, &in); err != nil {
		s.renderError(w, r, err)
		return
	}
	if in.Name == "" {
		s.renderError(w, r, errValidation("name", "is required"))
		return
	}
	s.mu.Lock()
	c := s.customerByID(in.ID)
	if c != nil {
		c.Name = in.Name
		s.touchCustomer(c)
	}
	s.mu.Unlock()
	if c == nil {
		s.renderError(w, r, errNotFound("customer %d not found", in.ID))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
