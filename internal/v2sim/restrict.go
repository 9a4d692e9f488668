package v2sim

import (
	"context"
	"net/http"
	"slices"
)

// codeForbidden answers a call about a customer the user does not own in restricted mode (A13).
const codeForbidden = "FORBIDDEN"

// scope is what a user may see with Options.RestrictToOwners (docs/v2-assumptions.md A13): the customers of one
// owner, or none when the user is no owner. A request without a scope (the default mode, or a user with one of
// Options.UnrestrictedRoles) sees everything.
type scope struct {
	login   string
	ownerID int64 // 0: the user owns nothing
}

type scopeKey struct{}

// withScope stores the user's scope in the request context.
func withScope(ctx context.Context, sc *scope) context.Context {
	if sc == nil {
		return ctx
	}
	return context.WithValue(ctx, scopeKey{}, sc)
}

// scopeOf answers the request's scope, nil when it is not restricted.
func scopeOf(r *http.Request) *scope {
	if r == nil {
		return nil
	}
	sc, _ := r.Context().Value(scopeKey{}).(*scope)
	return sc
}

// scopeFor maps an authenticated user to the owner whose login they are; nil when one of their roles is exempt.
// The catalog's owners are read-only, so no lock is needed.
func (s *Server) scopeFor(id identity) *scope {
	for _, role := range id.roles {
		if slices.Contains(s.opts.UnrestrictedRoles, role) {
			return nil
		}
	}
	return &scope{login: id.login, ownerID: s.cat.ownerByLogin[id.login]}
}

// sees reports whether the scope covers the customer.
func (sc *scope) sees(c *customer) bool {
	return sc == nil || (sc.ownerID != 0 && slices.Contains(c.Owners, sc.ownerID))
}

// checkCustomer answers 403 FORBIDDEN when the request's user may not see the customer (A13); it runs after the
// customer was found, so an unknown id still answers 404. Caller holds s.mu.
func (s *Server) checkCustomer(r *http.Request, c *customer) error {
	if sc := scopeOf(r); !sc.sees(c) {
		return newError(http.StatusForbidden, codeForbidden, "customer %d is not one of %s's customers", c.ID, sc.login)
	}
	return nil
}

// checkCustomerID is checkCustomer for a customer known by id (a quote's or a session's). Caller holds s.mu.
func (s *Server) checkCustomerID(r *http.Request, customerID int32) error {
	if scopeOf(r) == nil {
		return nil
	}
	c := s.customerByID(int64(customerID))
	if c == nil {
		return errNotFound("customer %d not found", customerID)
	}
	return s.checkCustomer(r, c)
}

// checkQuote answers 403 when the quote's customer is not the user's (A13). Caller holds s.mu.
func (s *Server) checkQuote(r *http.Request, q *quote) error {
	return s.checkCustomerID(r, q.CustomerID)
}

// checkContract answers 403 when the contract's customer is not the user's (A13). Caller holds s.mu.
func (s *Server) checkContract(r *http.Request, c *contract) error {
	return s.checkCustomerID(r, c.CustomerID)
}

// ownerOfNewCustomer answers the owners of a customer the request's user creates: the user's own owner id in
// restricted mode (so they can see what they made), none otherwise as before (A8, A13).
func ownerOfNewCustomer(r *http.Request) []int64 {
	if sc := scopeOf(r); sc != nil && sc.ownerID != 0 {
		return []int64{sc.ownerID}
	}
	return []int64{}
}
