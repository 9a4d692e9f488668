package v2sim

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// faultAll is the endpoint name that makes a fault apply to every endpoint.
const faultAll = "*"

// faultSet holds the random faults of Options.Faults and the per-endpoint faults of SetFault.
type faultSet struct {
	random Faults

	mu         sync.Mutex
	rng        *rand.Rand
	byEndpoint map[string]*Fault
}

func newFaultSet(random Faults, seed int64) *faultSet {
	return &faultSet{random: random, rng: rand.New(rand.NewPCG(uint64(seed), 0xfa017)), byEndpoint: map[string]*Fault{}}
}

// SetFault makes an endpoint (by name, see EndpointNames, or the internal/apiclient name of the same endpoint;
// "*" for all) misbehave until ClearFaults, or for the
// next f.Times requests. A zero Fault removes the endpoint's fault.
func (s *Server) SetFault(endpointName string, f Fault) {
	endpointName = canonicalEndpoint(endpointName)
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	if f == (Fault{}) {
		delete(s.faults.byEndpoint, endpointName)
		return
	}
	s.faults.byEndpoint[endpointName] = &f
}

// ClearFaults removes every fault set with SetFault (the random Options.Faults stay).
func (s *Server) ClearFaults() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.byEndpoint = map[string]*Fault{}
}

// pick answers the fault for this request: the endpoint's own, else the "*" one, else a random one.
func (fs *faultSet) pick(endpoint string) (Fault, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, key := range []string{endpoint, faultAll} {
		f, ok := fs.byEndpoint[key]
		if !ok {
			continue
		}
		chosen := *f
		if f.Times > 0 {
			f.Times--
			if f.Times == 0 {
				delete(fs.byEndpoint, key)
			}
		}
		return chosen, true
	}
	var f Fault
	f.Delay = fs.random.Latency
	if fs.random.ErrorRate > 0 && fs.rng.Float64() < fs.random.ErrorRate {
		f.Status = http.StatusInternalServerError
	} else if fs.random.MalformedRate > 0 && fs.rng.Float64() < fs.random.MalformedRate {
		f.Malformed = true
	}
	return f, f != (Fault{})
}

// apply performs the fault of the request, if any, and reports whether it answered the request.
func (fs *faultSet) apply(w http.ResponseWriter, r *http.Request, endpoint string) bool {
	f, ok := fs.pick(endpoint)
	if !ok {
		return false
	}
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return true
		}
	}
	status := f.Status
	if status == 0 {
		status = http.StatusOK
	}
	switch {
	case f.Hang:
		// Read the request body first: net/http notices a client that went away (and cancels
		// r.Context) only once the body has been consumed, so an unread body would hang forever.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
		return true
	case f.Truncated:
		truncate(w, status)
		return true
	case f.WrongContentType:
		body := []byte("<!DOCTYPE html><html><head><title>Service unavailable</title></head><body><h1>Maintenance</h1></body></html>")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		_, _ = w.Write(body)
		return true
	case f.Malformed:
		body := []byte(`{"status": "ok", "items": [1, 2,`)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		_, _ = w.Write(body)
		return true
	case f.Status != 0:
		writeErrorBody(w, r, newError(f.Status, codeForStatus(f.Status), "injected fault: %d %s", f.Status, http.StatusText(f.Status)))
		return true
	}
	return false
}

// truncate answers a JSON body shorter than its declared Content-Length and drops the connection. It takes the
// connection over where it can (HTTP/1.x), so it also works behind middleware that recovers panics; otherwise it
// aborts the handler, which makes net/http reset the stream.
func truncate(w http.ResponseWriter, status int) {
	body := []byte(`{"quoteId": 900001, "carts": [{"basketId": 7000`)
	declared := len(body) + 4096
	if rec, ok := w.(*responseRecorder); ok {
		rec.status, rec.wroteHeader = status, true
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err == nil {
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n",
			status, http.StatusText(status), declared)
		_, _ = buf.Write(body)
		_ = buf.Flush()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(declared))
	w.WriteHeader(status)
	_, _ = w.Write(body)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	panic(http.ErrAbortHandler)
}

// canonicalEndpoint maps the endpoint names internal/apiclient uses, where they differ, to the simulator's, so a
// test can name a fault either way.
func canonicalEndpoint(name string) string {
	switch name {
	case "cpq.addcart.toquote":
		return endpointAddCartExisting
	case "cpq.item.delete":
		return "cpq.removeitem"
	case "cpq.cart.delete":
		return "cpq.removecart"
	case "cpq.applicablediscounts":
		return "cpq.discounts"
	case "cpq.pricelist.change":
		return "cpq.pricelist"
	case "contracts.getbynumber":
		return "contracts.bynumber"
	case "contracts.digitalarchivepayload":
		return "contracts.archivepayload"
	case "contracts.validationaudit":
		return "contracts.audit"
	case "contracts.validationaudit.pdf":
		return "contracts.auditpdf"
	case "signatures.create":
		return "signature.request"
	case "signatures.delete":
		return "signature.remove"
	case "customers.owners.update":
		return "customers.owners.replace"
	case "customers.owner.add":
		return "customers.owners.add"
	case "customers.owner.change":
		return "customers.owners.change"
	}
	return name
}
