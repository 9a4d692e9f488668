// Package session holds the signed-in user's session (identity, OpenID Connect tokens and the v2 API's
// configuration-session ids) and stores it through gorilla/sessions' Store interface, with two kinds of
// store:
//
//   - the server-side store (ServerStore): the session lives on the portal's side, encrypted, in the
//     state database (NewSQLStore, the default: SQLite, or PostgreSQL shared by several replicas); the cookie holds only an opaque random id,
//     so sign-out deletes the session and sign-ins survive a restart;
//   - CookieStore: the whole session travels in the browser, encoded compactly, compressed, encrypted
//     (AES) and authenticated (HMAC) with gorilla/securecookie, split over a few cookies so
//     enterprise-size tokens still fit; signed-out session ids are kept in a revocation list (in the
//     state database) until they would have expired.
//
// A cookie that is missing, tampered with, truncated, forged with other keys or expired always reads as
// ErrNoSession, never as a panic or a server error.
package session

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"
)

// ErrNoSession reports that the request carries no usable session: absent, tampered, undecodable or expired.
var ErrNoSession = errors.New("session: no session")

// ErrSessionTooLarge reports that a session does not fit in cookies even without its ID token. The
// database store has no such limit.
var ErrSessionTooLarge = errors.New("session: session too large for cookies (use the database session store)")

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
	// ID is the session's random id: the key of the server-side state (database, file), and what the
	// cookie store's revocation list names.
	ID string
	// ProviderSID is the OpenID provider's session id (the ID token's sid claim), which back-channel
	// logout names; "" when the provider sends none.
	ProviderSID string
	// UserAgent and ClientIP describe where the session is used (the sessions page); ClientIP is the
	// address the portal saw (PORTAL_TRUSTED_PROXIES decides whether X-Forwarded-For counts).
	UserAgent, ClientIP string
	// Subject, Name and Email identify the user (from the ID token).
	Subject, Name, Email string
	// Roles are the user's roles from the ID token's roles claim (PORTAL_ROLES_CLAIM), at sign-in.
	Roles []string
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

// clone returns a copy of s that shares nothing changeable with it (strings are immutable).
func (s *Session) clone() *Session {
	c := *s
	c.CPQ = slices.Clone(s.CPQ)
	c.Roles = slices.Clone(s.Roles)
	return &c
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

// Name is the gorilla/sessions name of the portal's session; the stores derive their cookie names
// from it (portal_sid for the server-side stores, portal_s0, portal_s1... for the cookie store).
const Name = "portal"

// Store is what every session store of the portal is: a gorilla/sessions Store (Get, New, Save; a Save
// with Options.MaxAge < 0 deletes the session, as gorilla's stores do), plus the derived cookie codecs
// for short-lived cookies and the Registry that revocation needs. The typed helpers Load, Save and
// Delete are how the portal reads and writes its Session through it.
//
// The stores keep exactly one value in a gorilla session: the typed *Session (see Load). gorilla's
// own CookieStore and FilesystemStore do not fit (docs/security.md, "Sessions"): one gob-encoded
// cookie of at most 4 KB cannot carry enterprise-size tokens, and the filesystem store has no index
// by user, so back-channel logout, "sign out all others" and the sessions page could not find a
// user's sessions without decrypting every file; and its Save recreates a session that was signed
// out meanwhile.
type Store interface {
	sessions.Store
	CodecSource
	Registry
}

// Info describes one active session for the sessions page.
type Info struct {
	ID                  string
	CreatedAt, LastSeen time.Time
	UserAgent, ClientIP string
}

// ErrNotListable is returned by Registry.List when the store cannot enumerate a user's sessions (the
// cookie store: the sessions live in browsers). Revocation still works there.
var ErrNotListable = errors.New("session: this session store cannot list sessions")

// Registry ends sessions other than the request's own: the sessions page, "sign out all others" and
// OpenID Connect back-channel logout. Every method takes effect for every replica sharing the store.
type Registry interface {
	// List returns the subject's active sessions, most recently seen first (ErrNotListable for the
	// cookie store).
	List(ctx context.Context, subject string) ([]Info, error)
	// Revoke ends the subject's session id; an id of another subject is left alone.
	Revoke(ctx context.Context, subject, id string) error
	// RevokeSubject ends every session of the subject except exceptID ("" ends them all).
	RevokeSubject(ctx context.Context, subject, exceptID string) error
	// RevokeProviderSession ends the sessions signed in with the provider's session id providerSID
	// (the ID token's sid claim); when subject is not "", only those of that subject.
	RevokeProviderSession(ctx context.Context, subject, providerSID string) error
	// Remember records key for ttl and reports whether it was new: a shared "seen before" set for
	// single-use values such as a logout token's jti.
	Remember(ctx context.Context, key string, ttl time.Duration) (bool, error)
}

// Recaller is implemented by every store: Seen tells whether Remember recorded key (and it has not
// expired) without recording it. A back-channel logout checks its jti with Seen, ends the sessions,
// and only then remembers the jti, so a failure in between lets the provider's retry succeed.
type Recaller interface {
	Seen(ctx context.Context, key string) (bool, error)
}

// seen is Seen over a kv.
func seen(ctx context.Context, store kv, key string, failed func(string, error) error) (bool, error) {
	_, err := store.get(ctx, "seen:"+hashName(key))
	switch {
	case errors.Is(err, errNotFound):
		return false, nil
	case err != nil:
		return false, failed("registry", err)
	}
	return true, nil
}

// Reloader is implemented by stores that keep the session server-side (database, file), where another
// request or another replica may have saved a newer version since this request loaded it. The cookie
// store does not implement it: its session is the request's cookie, and there is nothing newer to read.
type Reloader interface {
	// Reload reads the session with this id from the store again. It returns ErrNoSession when the
	// session is gone (signed out, expired); other errors mean the store itself failed.
	Reload(ctx context.Context, id string) (*Session, error)
}

// CodecSource is implemented by every store. It hands out securecookie codecs whose keys are derived from
// the session keys for another purpose (for example "login"), so other short-lived cookies, such as an
// OpenID Connect login attempt, are encrypted and authenticated with the same configured secrets without
// ever being interchangeable with session cookies.
type CodecSource interface {
	Codecs(purpose string, maxAge time.Duration) []securecookie.Codec
}

// valueKey is the key of the typed *Session in a gorilla session's Values.
type valueKey struct{}

// Load reads the request's session through store (store.New: always a fresh read, never gorilla's
// per-request registry, so a session saved or revoked earlier in the same request is seen as it is
// now). It returns ErrNoSession when the session is absent, tampered with, undecodable, expired or
// revoked; other errors mean the store itself failed.
func Load(store sessions.Store, r *http.Request) (*Session, error) {
	gs, err := store.New(r, Name)
	if err != nil {
		return nil, err
	}
	s, ok := gs.Values[valueKey{}].(*Session)
	if gs.IsNew || !ok {
		return nil, ErrNoSession
	}
	return s, nil
}

// Save writes s through store (cookies, and server state for the server-side stores). A session
// without ID is created (and s.ID set); one with an ID is only updated while it still exists, so a
// request in flight cannot revive a session signed out meanwhile (that returns ErrNoSession). Call it
// before the response body.
func Save(store sessions.Store, w http.ResponseWriter, r *http.Request, s *Session) error {
	gs := sessions.NewSession(store, Name)
	gs.ID = s.ID
	gs.IsNew = s.ID == ""
	gs.Values[valueKey{}] = s
	if err := store.Save(r, w, gs); err != nil {
		return err
	}
	s.ID = gs.ID
	return nil
}

// Delete ends the request's session: gorilla's convention, a Save with MaxAge -1. It clears the
// cookie(s) and the server state (database, file) or revokes the session id (cookie store), so a copy of
// the cookie taken earlier opens nothing.
func Delete(store sessions.Store, w http.ResponseWriter, r *http.Request) error {
	gs := sessions.NewSession(store, Name)
	gs.Options.MaxAge = -1
	return store.Save(r, w, gs)
}

// typedSession returns the *Session a Save carries.
func typedSession(gs *sessions.Session) (*Session, error) {
	s, ok := gs.Values[valueKey{}].(*Session)
	if !ok || len(gs.Values) != 1 {
		return nil, errors.New("session: a portal session holds exactly one value, the *session.Session (use session.Save)")
	}
	return s, nil
}

// deleting reports whether a Save asks to delete the session (gorilla: MaxAge < 0).
func deleting(gs *sessions.Session) bool {
	return gs.Options != nil && gs.Options.MaxAge < 0
}

// Options configures every store.
type Options struct {
	// Keys are the cookie secrets, each base64 or hex of at least 32 bytes. The first one signs and
	// encrypts; all are accepted when reading, which allows key rotation.
	Keys []string
	// Secure marks cookies Secure and prefixes their names with __Host-. Set it when the public URL is https.
	Secure bool
	// AbsoluteLifetime bounds a session's life: cookie Max-Age, the stored session's expiry and the cookie timestamp check.
	// Default DefaultAbsoluteLifetime.
	AbsoluteLifetime time.Duration
	// Now is the clock; default time.Now. Tests move it.
	Now func() time.Time
	// OnError, when set, is told of every store failure by operation (load, save, delete, registry):
	// the metrics count them. ErrNoSession is no failure.
	OnError func(operation string)
}

// failed reports err (a store failure) to OnError and returns it.
func (o Options) failed(operation string, err error) error {
	if err != nil && o.OnError != nil && !errors.Is(err, ErrNoSession) {
		o.OnError(operation)
	}
	return err
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

// HasCookie reports whether r carries a session cookie of any store (cookie store chunks or a server
// store's id), valid or not: a request with one but no session had a session that ended (signed out
// elsewhere, revoked, expired), which the sign-in page then says (issue 26).
func HasCookie(r *http.Request) bool {
	for _, c := range r.Cookies() {
		name := strings.TrimPrefix(c.Name, "__Host-")
		if c.Value != "" && (strings.HasPrefix(name, cookieBaseName) || name == Name+serverCookieSuffix) {
			return true
		}
	}
	return false
}
