// Package session holds the signed-in user's session (identity, OpenID Connect tokens and the v2 API's
// configuration-session ids) and stores it behind one small interface with two implementations:
//
//   - CookieStore (the default, stateless): the whole session travels in the browser, encoded compactly,
//     compressed, encrypted (AES) and authenticated (HMAC) with gorilla/securecookie, split over a few
//     cookies so enterprise-size tokens still fit;
//   - RedisStore: the cookie holds only an opaque random id; the session lives in redis, which also allows
//     "sign out everywhere" (DeleteAllForSubject).
//
// A cookie that is missing, tampered with, truncated, forged with other keys or expired always reads as
// ErrNoSession, never as a panic or a server error.
package session

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gorilla/securecookie"
)

// ErrNoSession reports that the request carries no usable session: absent, tampered, undecodable or expired.
var ErrNoSession = errors.New("session: no session")

// ErrSessionTooLarge reports that a session does not fit in cookies even without its ID token. The redis
// store has no such limit.
var ErrSessionTooLarge = errors.New("session: session too large for cookies (use the redis session store)")

// MaxCPQEntries bounds the number of remembered CPQ configuration sessions; the least recently used is
// dropped first.
const MaxCPQEntries = 20

// DefaultAbsoluteLifetime is the session lifetime used when Options.AbsoluteLifetime is zero.
const DefaultAbsoluteLifetime = 12 * time.Hour

// CPQKey identifies a v2 configuration session: the configurator (CPQID), the customer it was started for
// and the quote it serves. QuoteID 0 means "session started, no quote yet"; such an entry is re-keyed with
// PromoteCPQSession once the quote exists. Keying by quote keeps two quotes open in two tabs from sharing
// or clobbering one session (docs/v2-assumptions.md, A3).
type CPQKey struct {
	CPQID      int32
	CustomerID int32
	QuoteID    int64
}

// CPQEntry is one remembered configuration session.
type CPQEntry struct {
	Key       CPQKey
	SessionID string
	UsedAt    time.Time
}

// Session is the signed-in user's session.
type Session struct {
	// ID is the opaque server-side id (redis store only; empty with the cookie store).
	ID string
	// Subject, Name and Email identify the user (from the ID token).
	Subject, Name, Email string
	// AccessToken, RefreshToken and IDToken are the user's OpenID Connect tokens. The cookie store may drop
	// the ID token when the cookies would grow too large (logout then names the client instead).
	AccessToken, RefreshToken, IDToken string
	// TokenExpiry is the access token's expiry.
	TokenExpiry time.Time
	// CreatedAt is the sign-in time (absolute lifetime); LastSeen the last request (idle timeout).
	CreatedAt, LastSeen time.Time
	// CPQ holds the configuration sessions, most recently used first, at most MaxCPQEntries.
	CPQ []CPQEntry
}

// CPQSession returns the configuration session id remembered for key.
func (s *Session) CPQSession(key CPQKey) (string, bool) {
	for _, entry := range s.CPQ {
		if entry.Key == key {
			return entry.SessionID, true
		}
	}
	return "", false
}

// SetCPQSession remembers sessionID for key as the most recently used entry, dropping the oldest entries
// beyond MaxCPQEntries.
func (s *Session) SetCPQSession(key CPQKey, sessionID string, now time.Time) {
	s.DeleteCPQSession(key)
	entries := make([]CPQEntry, 0, min(len(s.CPQ)+1, MaxCPQEntries))
	entries = append(entries, CPQEntry{Key: key, SessionID: sessionID, UsedAt: now})
	for _, entry := range s.CPQ {
		if len(entries) == MaxCPQEntries {
			break
		}
		entries = append(entries, entry)
	}
	s.CPQ = entries
}

// DeleteCPQSession forgets the configuration session of key (for example after SESSION_INVALID).
func (s *Session) DeleteCPQSession(key CPQKey) {
	kept := s.CPQ[:0]
	for _, entry := range s.CPQ {
		if entry.Key != key {
			kept = append(kept, entry)
		}
	}
	clear(s.CPQ[len(kept):])
	s.CPQ = kept
}

// PromoteCPQSession re-keys the entry of from (typically QuoteID 0, "no quote yet") to to, once the quote
// has been created, and marks it most recently used. Any entry already under to is replaced. It reports
// whether from existed.
func (s *Session) PromoteCPQSession(from, to CPQKey, now time.Time) bool {
	sessionID, ok := s.CPQSession(from)
	if !ok {
		return false
	}
	s.DeleteCPQSession(from)
	s.SetCPQSession(to, sessionID, now)
	return true
}

// Store loads, saves and deletes sessions.
type Store interface {
	// Load reads the request's session without writing anything. It returns ErrNoSession when the session
	// is absent, tampered with, undecodable or expired; other errors mean the store itself failed.
	Load(r *http.Request) (*Session, error)
	// Save writes s (cookies, and server state for the redis store). Call it before the response body.
	Save(w http.ResponseWriter, r *http.Request, s *Session) error
	// Delete clears the session cookie(s) and any server state.
	Delete(w http.ResponseWriter, r *http.Request) error
}

// Reloader is implemented by stores that keep the session server-side (RedisStore), where another request
// or another replica may have saved a newer version since this request loaded it. The cookie store does not
// implement it: its session is the request's cookie, and there is nothing newer to read.
type Reloader interface {
	// Reload reads the session with this id from the store again. It returns ErrNoSession when the
	// session is gone (signed out, expired); other errors mean the store itself failed.
	Reload(ctx context.Context, id string) (*Session, error)
}

// CodecSource is implemented by both stores. It hands out securecookie codecs whose keys are derived from
// the session keys for another purpose (for example "login"), so other short-lived cookies, such as an
// OpenID Connect login attempt, are encrypted and authenticated with the same configured secrets without
// ever being interchangeable with session cookies.
type CodecSource interface {
	Codecs(purpose string, maxAge time.Duration) []securecookie.Codec
}

// Options configures both stores.
type Options struct {
	// Keys are the cookie secrets, each base64 or hex of at least 32 bytes. The first one signs and
	// encrypts; all are accepted when reading, which allows key rotation.
	Keys []string
	// Secure marks cookies Secure and prefixes their names with __Host-. Set it when the public URL is https.
	Secure bool
	// AbsoluteLifetime bounds a session's life: cookie Max-Age, redis TTL and the cookie timestamp check.
	// Default DefaultAbsoluteLifetime.
	AbsoluteLifetime time.Duration
	// Now is the clock; default time.Now. Tests move it.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.AbsoluteLifetime <= 0 {
		o.AbsoluteLifetime = DefaultAbsoluteLifetime
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// expired reports whether s has outlived the absolute lifetime at now.
func (o Options) expired(s *Session, now time.Time) bool {
	return !s.CreatedAt.IsZero() && now.Sub(s.CreatedAt) >= o.AbsoluteLifetime
}

// remaining is the cookie Max-Age in seconds for s: what is left of its absolute lifetime, at least 1.
func (o Options) remaining(s *Session, now time.Time) int {
	left := o.AbsoluteLifetime
	if !s.CreatedAt.IsZero() {
		left = s.CreatedAt.Add(o.AbsoluteLifetime).Sub(now)
	}
	return max(1, int(left/time.Second))
}
