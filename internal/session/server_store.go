package session

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"

	"github.com/cpqportal/portal/internal/statedb"
)

const (
	// serverCookieSuffix names the cookie holding the opaque session id: portal_sid.
	serverCookieSuffix = "_sid"
	// sessionIDBytes is the entropy of a session id.
	sessionIDBytes = 32
	// maxServerData bounds one sealed server-side session.
	maxServerData = 256 << 10
	// sqlServerPrefix and sqlCookiePrefix namespace the server store's and the cookie store's
	// keys in the database's session tables.
	sqlServerPrefix = "server:"
	sqlCookiePrefix = "cookie:"
)

// ServerStore keeps sessions on the portal's side (the state database)
// and implements gorilla/sessions' Store. The browser holds only an opaque random id, itself sealed
// with securecookie so forged ids are rejected without a store round trip; the session data is
// encrypted and authenticated with keys derived from the session keys (a copy of the database does not hand out tokens). Sets index sessions by subject and by the provider's session
// id, for the sessions page, "sign out all others" and back-channel logout.
//
// Its Save follows gorilla's convention (MaxAge < 0 deletes), creates a session without id and only
// updates one that still exists, so a request in flight cannot revive a session signed out meanwhile.
type ServerStore struct {
	opts      Options
	keys      keyring
	idCodecs  []securecookie.Codec
	dataCodec []securecookie.Codec
	kv        kv

	// Opened before: the id in each id cookie value and the session in each sealed session (see
	// openedCache), so a signed-in user's every request does not pay HMAC, AES, base64 and token
	// decoding twice (about 6 % of the customer page's CPU, docs/performance.md).
	openedIDs  openedCache[string]
	openedData openedCache[*Session]
}

var (
	_ Store          = (*ServerStore)(nil)
	_ sessions.Store = (*ServerStore)(nil)
	_ Reloader       = (*ServerStore)(nil)
)

// NewSQLStore returns the store in the state database db (internal/statedb): the default, shared
// by every replica on one PostgreSQL. Closing the store leaves db open.
func NewSQLStore(opts Options, db *statedb.DB) (*ServerStore, error) {
	base := opts.withDefaults()
	if db == nil {
		return nil, errors.New("session: database store needs a database")
	}
	return newServerStore(base, newSQLKV(db, base.Now, sqlServerPrefix))
}

func newServerStore(opts Options, backend kv) (*ServerStore, error) {
	keys, err := parseKeys(opts.Keys)
	if err != nil {
		_ = backend.close()
		return nil, err
	}
	dataCodec := keys.codecs(sessionPurpose+" data", opts.AbsoluteLifetime)
	for _, codec := range dataCodec {
		// Server-side data is not bound by cookie sizes: enterprise-size tokens, uncompressed.
		codec.(*securecookie.SecureCookie).MaxLength(maxServerData)
	}
	return &ServerStore{
		opts:      opts,
		keys:      keys,
		idCodecs:  keys.codecs(sessionPurpose+" id", opts.AbsoluteLifetime),
		dataCodec: dataCodec,
		kv:        backend,
	}, nil
}

// Close releases what the store holds of its backend (a database stays open).
func (ss *ServerStore) Close() error { return ss.kv.close() }

// Ping checks that the store is usable: the database answers, the data directory can be written.
func (ss *ServerStore) Ping(ctx context.Context) error { return ss.kv.ping(ctx) }

// Codecs implements CodecSource.
func (ss *ServerStore) Codecs(purpose string, maxAge time.Duration) []securecookie.Codec {
	return ss.keys.codecs(purpose, maxAge)
}

func sessionKey(id string) string { return "session:" + id }

func subjectSet(subject string) string { return "subject:" + subject }

func providerSet(sid string) string { return "psid:" + sid }

func (ss *ServerStore) cookieName(name string) string {
	return cookieName(ss.opts.Secure, name+serverCookieSuffix)
}

// requestID returns the session id sealed in the request's cookie, or "".
func (ss *ServerStore) requestID(r *http.Request, name string) string {
	cookie, err := r.Cookie(ss.cookieName(name))
	if err != nil {
		return ""
	}
	if id, ok := ss.openedIDs.get(cookie.Value); ok {
		return id
	}
	var raw []byte
	if err := securecookie.DecodeMulti(name+serverCookieSuffix, cookie.Value, &raw, ss.idCodecs...); err != nil {
		return ""
	}
	id := string(raw)
	if len(id) != base64.RawURLEncoding.EncodedLen(sessionIDBytes) {
		return ""
	}
	ss.openedIDs.put(cookie.Value, id)
	return id
}

// Get implements sessions.Store with gorilla's per-request registry (the portal itself calls New
// through Load, which always reads afresh).
func (ss *ServerStore) Get(r *http.Request, name string) (*sessions.Session, error) {
	return sessions.GetRegistry(r).Get(ss, name)
}

// New implements sessions.Store: the request's session, or a new empty one (IsNew) when there is
// none usable. An error means the store failed (the session may well exist).
func (ss *ServerStore) New(r *http.Request, name string) (*sessions.Session, error) {
	gs := sessions.NewSession(ss, name)
	gs.IsNew = true
	id := ss.requestID(r, name)
	if id == "" {
		return gs, nil
	}
	s, err := ss.load(r.Context(), id)
	if errors.Is(err, ErrNoSession) {
		return gs, nil
	}
	if err != nil {
		return gs, ss.opts.failed("load", err)
	}
	gs.ID, gs.IsNew = id, false
	gs.Values[valueKey{}] = s
	return gs, nil
}

// Reload implements Reloader.
func (ss *ServerStore) Reload(ctx context.Context, id string) (*Session, error) {
	if id == "" {
		return nil, ErrNoSession
	}
	s, err := ss.load(ctx, id)
	return s, ss.opts.failed("load", err)
}

func (ss *ServerStore) load(ctx context.Context, id string) (*Session, error) {
	sealed, err := ss.kv.get(ctx, sessionKey(id))
	if errors.Is(err, errNotFound) {
		return nil, ErrNoSession
	}
	if err != nil {
		return nil, err
	}
	if opened, ok := ss.openedData.getBytes(sealed); ok {
		if ss.opts.expired(opened, ss.opts.Now()) {
			return nil, ErrNoSession
		}
		s := opened.clone() // a fresh Session each time: callers may change it
		s.ID = id
		return s, nil
	}
	var data []byte
	if err := securecookie.DecodeMulti(sessionPurpose+" data", string(sealed), &data, ss.dataCodec...); err != nil {
		return nil, ErrNoSession // sealed with keys no longer configured
	}
	s, err := unmarshal(data)
	if err != nil || ss.opts.expired(s, ss.opts.Now()) {
		return nil, ErrNoSession
	}
	if !s.CreatedAt.IsZero() {
		ss.openedData.put(string(sealed), s.clone())
	}
	s.ID = id
	return s, nil
}

// Save implements sessions.Store. MaxAge < 0 deletes the request's session (server state and
// cookie). Otherwise the *Session in gs (see session.Save) is written: a new id when gs.ID is empty,
// else an update that fails with ErrNoSession when the session is gone. A different session id in the
// request's cookie (an earlier sign-in in this browser) is deleted.
func (ss *ServerStore) Save(r *http.Request, w http.ResponseWriter, gs *sessions.Session) error {
	if deleting(gs) {
		return ss.opts.failed("delete", ss.delete(w, r, gs.Name()))
	}
	s, err := typedSession(gs)
	if err != nil {
		return err
	}
	s.ID = gs.ID
	updated := s.ID != ""
	if err := ss.save(r.Context(), s); err != nil {
		return ss.opts.failed("save", err)
	}
	gs.ID = s.ID
	previous := ss.requestID(r, gs.Name())
	if previous == s.ID {
		ss.kv.settle(r.Context()) // an update: no replica serves the version it replaced
		return nil                // the browser already holds this id
	}
	if previous != "" {
		if err := ss.deleteID(r.Context(), previous); err != nil {
			return ss.opts.failed("save", fmt.Errorf("session: delete replaced session: %w", err))
		}
	}
	if updated || previous != "" {
		ss.kv.settle(r.Context())
	}
	sealed, err := securecookie.EncodeMulti(gs.Name()+serverCookieSuffix, []byte(s.ID), ss.idCodecs...)
	if err != nil {
		return fmt.Errorf("session: seal id: %w", err)
	}
	name := ss.cookieName(gs.Name())
	dropSetCookies(w.Header(), func(n string) bool { return n == name })
	http.SetCookie(w, sessionCookie(ss.opts.Secure, name, sealed, ss.opts.remaining(s, ss.opts.Now())))
	return nil
}

func (ss *ServerStore) save(ctx context.Context, s *Session) error {
	ttl := time.Duration(ss.opts.remaining(s, ss.opts.Now())) * time.Second
	create := s.ID == ""
	if create {
		id, err := newSessionID()
		if err != nil {
			return err
		}
		s.ID = id
	}
	sealed, err := securecookie.EncodeMulti(sessionPurpose+" data", marshal(s, true), ss.dataCodec...)
	if err != nil {
		return fmt.Errorf("session: seal: %w", err)
	}
	mode := setIfPresent
	if create {
		mode = setIfAbsent
	}
	written, err := ss.kv.set(ctx, sessionKey(s.ID), []byte(sealed), ttl, mode)
	if err != nil {
		return err
	}
	if !written {
		if create {
			return errors.New("session: session id collision")
		}
		return ErrNoSession
	}
	if create {
		// Indexes are written once, at creation: subject and provider session do not change.
		if s.Subject != "" {
			if err := ss.kv.addMember(ctx, subjectSet(s.Subject), s.ID, ss.opts.AbsoluteLifetime); err != nil {
				return err
			}
		}
		if s.ProviderSID != "" {
			if err := ss.kv.addMember(ctx, providerSet(s.ProviderSID), s.ID, ss.opts.AbsoluteLifetime); err != nil {
				return err
			}
		}
	}
	return nil
}

// delete ends the request's session, then expires its cookie. When the store fails the cookie is
// kept, so the browser can try again: clearing it would leave a live session nobody can end.
func (ss *ServerStore) delete(w http.ResponseWriter, r *http.Request, name string) error {
	if id := ss.requestID(r, name); id != "" {
		if err := ss.deleteID(r.Context(), id); err != nil {
			return err
		}
		ss.kv.settle(r.Context())
	}
	cookie := ss.cookieName(name)
	dropSetCookies(w.Header(), func(n string) bool { return n == cookie })
	if _, err := r.Cookie(cookie); err == nil {
		http.SetCookie(w, sessionCookie(ss.opts.Secure, cookie, "", -1))
	}
	return nil
}

// deleteID deletes one session and its index entries.
func (ss *ServerStore) deleteID(ctx context.Context, id string) error {
	s, err := ss.load(ctx, id)
	if err != nil && !errors.Is(err, ErrNoSession) {
		return err
	}
	if err := ss.kv.del(ctx, sessionKey(id)); err != nil {
		return err
	}
	if s != nil {
		if s.Subject != "" {
			if err := ss.kv.removeMembers(ctx, subjectSet(s.Subject), id); err != nil {
				return err
			}
		}
		if s.ProviderSID != "" {
			if err := ss.kv.removeMembers(ctx, providerSet(s.ProviderSID), id); err != nil {
				return err
			}
		}
	}
	return nil
}

// sessionsOf loads the live sessions of a set, dropping members whose session is gone.
func (ss *ServerStore) sessionsOf(ctx context.Context, set string) ([]*Session, error) {
	ids, err := ss.kv.members(ctx, set)
	if err != nil {
		return nil, err
	}
	var live []*Session
	var gone []string
	for _, id := range ids {
		s, err := ss.load(ctx, id)
		if errors.Is(err, ErrNoSession) {
			gone = append(gone, id)
			continue
		}
		if err != nil {
			return nil, err
		}
		live = append(live, s)
	}
	if len(gone) > 0 {
		if err := ss.kv.removeMembers(ctx, set, gone...); err != nil {
			return nil, err
		}
	}
	return live, nil
}

// List implements Registry.
func (ss *ServerStore) List(ctx context.Context, subject string) ([]Info, error) {
	all, err := ss.sessionsOf(ctx, subjectSet(subject))
	if err != nil {
		return nil, ss.opts.failed("registry", err)
	}
	infos := make([]Info, 0, len(all))
	for _, s := range all {
		if s.Subject != subject {
			continue
		}
		infos = append(infos, Info{ID: s.ID, CreatedAt: s.CreatedAt, LastSeen: s.LastSeen, UserAgent: s.UserAgent, ClientIP: s.ClientIP})
	}
	slices.SortFunc(infos, func(a, b Info) int { return b.LastSeen.Compare(a.LastSeen) })
	return infos, nil
}

// Revoke implements Registry.
func (ss *ServerStore) Revoke(ctx context.Context, subject, id string) error {
	s, err := ss.load(ctx, id)
	if errors.Is(err, ErrNoSession) {
		return nil
	}
	if err != nil {
		return ss.opts.failed("registry", err)
	}
	if s.Subject != subject {
		return nil
	}
	if err := ss.deleteID(ctx, id); err != nil {
		return ss.opts.failed("registry", err)
	}
	ss.kv.settle(ctx)
	return nil
}

// RevokeSubject implements Registry.
func (ss *ServerStore) RevokeSubject(ctx context.Context, subject, exceptID string) error {
	all, err := ss.sessionsOf(ctx, subjectSet(subject))
	if err != nil {
		return ss.opts.failed("registry", err)
	}
	deleted := false
	for _, s := range all {
		if s.ID == exceptID || s.Subject != subject {
			continue
		}
		if err := ss.deleteID(ctx, s.ID); err != nil {
			return ss.opts.failed("registry", err)
		}
		deleted = true
	}
	if deleted {
		ss.kv.settle(ctx)
	}
	return nil
}

// RevokeProviderSession implements Registry.
func (ss *ServerStore) RevokeProviderSession(ctx context.Context, subject, providerSID string) error {
	all, err := ss.sessionsOf(ctx, providerSet(providerSID))
	if err != nil {
		return ss.opts.failed("registry", err)
	}
	deleted := false
	for _, s := range all {
		if s.ProviderSID != providerSID || (subject != "" && s.Subject != subject) {
			continue
		}
		if err := ss.deleteID(ctx, s.ID); err != nil {
			return ss.opts.failed("registry", err)
		}
		deleted = true
	}
	if deleted {
		ss.kv.settle(ctx)
	}
	return nil
}

// Remember implements Registry.
func (ss *ServerStore) Remember(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	first, err := ss.kv.set(ctx, "seen:"+hashName(key), []byte{1}, ttl, setIfAbsent)
	if first {
		ss.kv.settle(ctx)
	}
	return first, ss.opts.failed("registry", err)
}

// Seen implements Recaller.
func (ss *ServerStore) Seen(ctx context.Context, key string) (bool, error) {
	return seen(ctx, ss.kv, key, ss.opts.failed)
}

func newSessionID() (string, error) {
	raw := make([]byte, sessionIDBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("session: random id: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(raw), nil
}
