package v2sim

import (
	"crypto/rand"
	"net/http"
	"time"
)

// cpqSession is a configuration session started by the init call (docs/v2-assumptions.md A3).
type cpqSession struct {
	ID         string
	CPQID      int32
	CustomerID int32
	LastUsed   time.Time
}

func (cs *cpqSession) expiresAt(ttl time.Duration) time.Time { return cs.LastUsed.Add(ttl) }

// sessionRule says how a route treats X-SessionId (R4, section 5, A3).
type sessionRule int

const (
	sessionIgnored   sessionRule = iota // sections 4.2 to 4.5: neither required nor rejected
	sessionRequired                     // calls 3 to 9 and 11 to 16
	sessionForbidden                    // calls 1, 2 and 10: "made without it"
)

const sessionHeader = "X-SessionId"

// checkSessionHeader enforces the presence rule of a route before anything else is looked at.
func checkSessionHeader(r *http.Request, rule sessionRule) error {
	values, present := r.Header[http.CanonicalHeaderKey(sessionHeader)]
	switch rule {
	case sessionRequired:
		if !present || len(values) == 0 || values[0] == "" {
			return newError(http.StatusBadRequest, codeSessionRequired, "the %s header is required on this call (rule R4)", sessionHeader)
		}
	case sessionForbidden:
		if present {
			return newError(http.StatusBadRequest, codeSessionNotAllowed, "this call is made without the %s header (spec section 5)", sessionHeader)
		}
	}
	return nil
}

// newSession starts a configuration session. Caller holds s.mu.
func (s *Server) newSession(cpqID, customerID int32) *cpqSession {
	now := s.now()
	if len(s.sessions) > 1000 {
		for id, cs := range s.sessions {
			if now.After(cs.expiresAt(s.sessionTTL)) {
				delete(s.sessions, id)
			}
		}
	}
	cs := &cpqSession{ID: rand.Text(), CPQID: cpqID, CustomerID: customerID, LastUsed: now}
	s.sessions[cs.ID] = cs
	return cs
}

// useSession answers the valid session named by X-SessionId for the configurator and extends it (A3: it
// expires after the TTL without use). Caller holds s.mu.
func (s *Server) useSession(r *http.Request, cpqID int32) (*cpqSession, error) {
	id := r.Header.Get(sessionHeader)
	now := s.now()
	cs, ok := s.sessions[id]
	switch {
	case !ok:
		return nil, newError(http.StatusBadRequest, codeSessionInvalid, "configuration session %q is unknown", id)
	case now.After(cs.expiresAt(s.sessionTTL)):
		delete(s.sessions, id)
		return nil, newError(http.StatusBadRequest, codeSessionInvalid, "configuration session %q expired at %s", id, cs.expiresAt(s.sessionTTL).UTC().Format(time.RFC3339))
	case cs.CPQID != cpqID:
		return nil, newError(http.StatusBadRequest, codeSessionInvalid, "configuration session %q belongs to configurator %d, not %d", id, cs.CPQID, cpqID)
	}
	if err := s.checkCustomerID(r, cs.CustomerID); err != nil {
		return nil, err // the customer changed owners since the session began (A13)
	}
	cs.LastUsed = now
	return cs, nil
}
