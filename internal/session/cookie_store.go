package session

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"

	"github.com/cpqportal/portal/internal/statedb"
)

const (
	// cookieBaseName names the session cookies: portal_s0, portal_s1, ... (__Host- prefixed when Secure).
	cookieBaseName = "portal_s"
	// maxChunks bounds how many cookies one session may use.
	maxChunks = 4
	// chunkSize keeps each cookie value below 4000 bytes, so name and attributes stay under the browsers'
	// 4096-byte limit per cookie.
	chunkSize = 3800
	// headerBudget is what the session cookies may add to the browser's Cookie header, leaving room for
	// others under the 8 KB request-header limits of common proxies.
	headerBudget = 7 << 10
	// sessionPurpose separates the session cookie keys from other derived keys.
	sessionPurpose = "session"
)

// CookieStore keeps the whole session in the browser: compact binary, deflate, then securecookie
// (AES-CTR + HMAC-SHA256, re-packed with one base64 layer, see pack), split over up to four cookies.
// The first chunk starts with the chunk count ("2.<data>"), so a chunk left behind by an earlier,
// longer session is never read. It implements gorilla/sessions' Store; gorilla's own CookieStore
// (one gob-encoded cookie of at most 4 KB) cannot carry enterprise-size tokens.
//
// A cookie cannot be taken back from a browser, so sign-out and the Registry write a revocation
// list instead: the revoked session id, a subject's cut-off time ("sign out all others", back-channel
// logout by sub) or a provider session id, each kept until the sessions it names would have expired
// anyway. The list lives in the state database (it survives restarts, and every replica on one
// PostgreSQL sees it), or in files under a data directory, else in memory (tests). Every request checks it, so a copy of a
// signed-out cookie opens nothing.
type CookieStore struct {
	opts        Options
	keys        keyring
	codecs      []securecookie.Codec
	comp        compressor
	opened      openedCache[*Session]
	revocations kv
}

var (
	_ Store          = (*CookieStore)(nil)
	_ sessions.Store = (*CookieStore)(nil)
)

// CookieOptions configures the cookie store's revocation list.
type CookieOptions struct {
	// RevocationDB keeps it in the state database (shared by the replicas of one PostgreSQL);
	// closing the store leaves it open.
	RevocationDB *statedb.DB
}

// NewCookieStore returns the cookie store. Without options its revocation list is in memory.
func NewCookieStore(opts Options, extra ...CookieOptions) (*CookieStore, error) {
	opts = opts.withDefaults()
	keys, err := parseKeys(opts.Keys)
	if err != nil {
		return nil, err
	}
	var revocations kv = newMemoryKV(opts.Now)
	for _, o := range extra {
		if o.RevocationDB != nil {
			revocations = newSQLKV(o.RevocationDB, opts.Now, sqlCookiePrefix)
		}
	}
	return &CookieStore{opts: opts, keys: keys, codecs: keys.codecs(sessionPurpose, opts.AbsoluteLifetime), revocations: revocations}, nil
}

// Close releases what the revocation list holds of its backend (a database stays open).
func (cs *CookieStore) Close() error { return cs.revocations.close() }

// Ping checks the revocation list's backend.
func (cs *CookieStore) Ping(ctx context.Context) error { return cs.revocations.ping(ctx) }

// Get implements sessions.Store with gorilla's per-request registry.
func (cs *CookieStore) Get(r *http.Request, name string) (*sessions.Session, error) {
	return sessions.GetRegistry(r).Get(cs, name)
}

// New implements sessions.Store: the request's session unless absent, tampered with, expired or
// revoked (then a new empty one, IsNew). An error means the revocation list could not be read: the
// request must not go on as if the session were valid, nor as if it were not.
func (cs *CookieStore) New(r *http.Request, name string) (*sessions.Session, error) {
	gs := sessions.NewSession(cs, name)
	gs.IsNew = true
	s, err := cs.decode(r)
	if err != nil {
		return gs, nil
	}
	revoked, err := cs.revoked(r.Context(), s)
	if err != nil {
		return gs, cs.opts.failed("load", err)
	}
	if revoked {
		return gs, nil
	}
	gs.ID, gs.IsNew = s.ID, false
	gs.Values[valueKey{}] = s
	return gs, nil
}

// Keys of the revocation list.
func revokedIDKey(id string) string        { return "revoked:" + id }
func cutoffKey(subject string) string      { return "cutoff:" + subject }
func revokedProviderKey(sid string) string { return "revoked-psid:" + sid }

// revoked reports whether s is on the revocation list.
func (cs *CookieStore) revoked(ctx context.Context, s *Session) (bool, error) {
	if _, err := cs.revocations.get(ctx, revokedIDKey(s.ID)); err != errNotFound {
		return err == nil, err
	}
	if s.ProviderSID != "" {
		if _, err := cs.revocations.get(ctx, revokedProviderKey(s.ProviderSID)); err != errNotFound {
			return err == nil, err
		}
	}
	cutoff, err := cs.revocations.get(ctx, cutoffKey(s.Subject))
	if err == errNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	seconds, exceptID, _ := strings.Cut(string(cutoff), " ")
	before, err := strconv.ParseInt(seconds, 10, 64)
	if err != nil {
		return false, nil
	}
	// CreatedAt has one-second precision: a session created in the cut-off's second counts as before
	// it (fail closed; its user signs in again).
	return s.ID != exceptID && s.CreatedAt.Unix() <= before, nil
}

// List implements Registry: the cookie store's sessions live in browsers and cannot be listed.
func (cs *CookieStore) List(context.Context, string) ([]Info, error) { return nil, ErrNotListable }

// Revoke implements Registry.
func (cs *CookieStore) Revoke(ctx context.Context, _, id string) error {
	_, err := cs.revocations.set(ctx, revokedIDKey(id), []byte{1}, cs.opts.AbsoluteLifetime, setAlways)
	if err == nil {
		cs.revocations.settle(ctx)
	}
	return cs.opts.failed("registry", err)
}

// RevokeSubject implements Registry: sessions of subject created until now, except exceptID.
func (cs *CookieStore) RevokeSubject(ctx context.Context, subject, exceptID string) error {
	value := strconv.FormatInt(cs.opts.Now().Unix(), 10) + " " + exceptID
	_, err := cs.revocations.set(ctx, cutoffKey(subject), []byte(value), cs.opts.AbsoluteLifetime, setAlways)
	if err == nil {
		cs.revocations.settle(ctx)
	}
	return cs.opts.failed("registry", err)
}

// RevokeProviderSession implements Registry. A provider session id names sessions of one subject, so
// subject needs no separate check.
func (cs *CookieStore) RevokeProviderSession(ctx context.Context, _, providerSID string) error {
	_, err := cs.revocations.set(ctx, revokedProviderKey(providerSID), []byte{1}, cs.opts.AbsoluteLifetime, setAlways)
	if err == nil {
		cs.revocations.settle(ctx)
	}
	return cs.opts.failed("registry", err)
}

// Remember implements Registry.
func (cs *CookieStore) Remember(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	first, err := cs.revocations.set(ctx, "seen:"+hashName(key), []byte{1}, ttl, setIfAbsent)
	if first {
		cs.revocations.settle(ctx)
	}
	return first, cs.opts.failed("registry", err)
}

// Seen implements Recaller.
func (cs *CookieStore) Seen(ctx context.Context, key string) (bool, error) {
	return seen(ctx, cs.revocations, key, cs.opts.failed)
}

// Codecs implements CodecSource.
func (cs *CookieStore) Codecs(purpose string, maxAge time.Duration) []securecookie.Codec {
	return cs.keys.codecs(purpose, maxAge)
}

// decode reads the request's cookies: ErrNoSession when absent, tampered with, expired or without id
// (written before sessions had ids). It never writes to the response.
func (cs *CookieStore) decode(r *http.Request) (*Session, error) {
	first, err := r.Cookie(chunkName(cs.opts.Secure, 0))
	if err != nil {
		return nil, ErrNoSession
	}
	countText, data, ok := strings.Cut(first.Value, ".")
	count, err := strconv.Atoi(countText)
	if !ok || err != nil || count < 1 || count > maxChunks {
		return nil, ErrNoSession
	}
	var encoded strings.Builder
	encoded.WriteString(data)
	for i := 1; i < count; i++ {
		chunk, err := r.Cookie(chunkName(cs.opts.Secure, i))
		if err != nil {
			return nil, ErrNoSession
		}
		encoded.WriteString(chunk.Value)
	}
	packed := encoded.String()
	if opened, ok := cs.opened.get(packed); ok {
		if opened.ID == "" || cs.opts.expired(opened, cs.opts.Now()) {
			return nil, ErrNoSession
		}
		return opened.clone(), nil // a fresh Session each time: callers may change it
	}
	sealed, err := unpack(packed)
	if err != nil {
		return nil, ErrNoSession
	}
	var blob []byte
	if err := securecookie.DecodeMulti(cookieBaseName, sealed, &blob, cs.codecs...); err != nil {
		return nil, ErrNoSession
	}
	var s *Session
	err = cs.comp.decompress(blob, func(data []byte) error {
		var err error
		if s, err = unmarshal(data); err == nil && !s.CreatedAt.IsZero() {
			cs.opened.put(packed, s.clone())
		}
		return err
	})
	if err != nil || s.ID == "" || cs.opts.expired(s, cs.opts.Now()) {
		return nil, ErrNoSession
	}
	return s, nil
}

// openedCacheEntries bounds the caches of opened sessions (a session is a few KiB: its tokens).
const openedCacheEntries = 256

// openedCache remembers what sealed values already authenticated, decrypted and decoded gave (a
// session, or a session id), so a signed-in user's every request does not pay AES, HMAC, inflate
// and the decoding of its tokens again (about 6 % of a page's CPU, docs/performance.md). It is
// keyed by the whole sealed value: only a value that passed securecookie once is ever found, and
// any change to it misses. Only sessions with a CreatedAt are kept, so the absolute-lifetime check
// that still runs on every hit (Options.expired) is at least as strict as securecookie's timestamp
// check (a value is never sealed before its session's CreatedAt). Values are never modified:
// sessions are cloned on the way out.
type openedCache[V any] struct {
	mu      sync.Mutex
	entries map[string]V
}

func (oc *openedCache[V]) get(sealed string) (V, bool) {
	oc.mu.Lock()
	defer oc.mu.Unlock()
	v, ok := oc.entries[sealed]
	return v, ok
}

// getBytes is get with the key as bytes (no copy made for the look-up).
func (oc *openedCache[V]) getBytes(sealed []byte) (V, bool) {
	oc.mu.Lock()
	defer oc.mu.Unlock()
	v, ok := oc.entries[string(sealed)]
	return v, ok
}

// put stores v; when full, an arbitrary entry goes (map order).
func (oc *openedCache[V]) put(sealed string, v V) {
	oc.mu.Lock()
	defer oc.mu.Unlock()
	if oc.entries == nil {
		oc.entries = make(map[string]V, openedCacheEntries)
	}
	if _, ok := oc.entries[sealed]; !ok && len(oc.entries) >= openedCacheEntries {
		for k := range oc.entries {
			delete(oc.entries, k)
			break
		}
	}
	oc.entries[sealed] = v
}

// Save implements sessions.Store. MaxAge < 0 deletes: the cookies are expired and the request's
// session id is revoked. Otherwise it writes the *Session (see session.Save), giving it a random id
// when it has none. When the cookies would exceed the header budget it drops the ID token (logout
// then uses client_id instead of id_token_hint); when that is not enough it returns ErrSessionTooLarge.
func (cs *CookieStore) Save(r *http.Request, w http.ResponseWriter, gs *sessions.Session) error {
	if deleting(gs) {
		return cs.opts.failed("delete", cs.delete(w, r))
	}
	s, err := typedSession(gs)
	if err != nil {
		return err
	}
	if s.ID == "" {
		if s.ID, err = newSessionID(); err != nil {
			return err
		}
	}
	if err := cs.write(w, r, s); err != nil {
		return err
	}
	gs.ID = s.ID
	return nil
}

func (cs *CookieStore) write(w http.ResponseWriter, r *http.Request, s *Session) error {
	chunks, err := cs.encode(s, true)
	if err != nil {
		return err
	}
	if headerSize(cs.opts.Secure, chunks) > headerBudget && s.IDToken != "" {
		if chunks, err = cs.encode(s, false); err != nil {
			return err
		}
	}
	if size := headerSize(cs.opts.Secure, chunks); size > headerBudget {
		return fmt.Errorf("%w: %d bytes of cookies, budget %d", ErrSessionTooLarge, size, headerBudget)
	}
	maxAge := cs.opts.remaining(s, cs.opts.Now())
	dropSetCookies(w.Header(), cs.isChunk)
	for i, chunk := range chunks {
		http.SetCookie(w, sessionCookie(cs.opts.Secure, chunkName(cs.opts.Secure, i), chunk, maxAge))
	}
	// Expire chunks the browser still holds from a longer session.
	for i := len(chunks); i < maxChunks; i++ {
		if _, err := r.Cookie(chunkName(cs.opts.Secure, i)); err == nil {
			http.SetCookie(w, sessionCookie(cs.opts.Secure, chunkName(cs.opts.Secure, i), "", -1))
		}
	}
	return nil
}

// delete revokes the session's id until it would have expired, so a copy of the cookies opens
// nothing, then expires every session chunk the browser sent. When the revocation list cannot be
// written the cookies are kept, so the browser can try again.
func (cs *CookieStore) delete(w http.ResponseWriter, r *http.Request) error {
	if s, err := cs.decode(r); err == nil {
		ttl := time.Duration(cs.opts.remaining(s, cs.opts.Now())) * time.Second
		if _, err := cs.revocations.set(r.Context(), revokedIDKey(s.ID), []byte{1}, ttl, setAlways); err != nil {
			return fmt.Errorf("session: revoke: %w", err)
		}
		cs.revocations.settle(r.Context())
	}
	dropSetCookies(w.Header(), cs.isChunk)
	for i := range maxChunks {
		if _, err := r.Cookie(chunkName(cs.opts.Secure, i)); err == nil {
			http.SetCookie(w, sessionCookie(cs.opts.Secure, chunkName(cs.opts.Secure, i), "", -1))
		}
	}
	return nil
}

// isChunk reports whether name is one of this store's chunk cookies.
func (cs *CookieStore) isChunk(name string) bool {
	for i := range maxChunks {
		if name == chunkName(cs.opts.Secure, i) {
			return true
		}
	}
	return false
}

// encode turns s into cookie values: the first carries the chunk count.
func (cs *CookieStore) encode(s *Session, withIDToken bool) ([]string, error) {
	blob := append([]byte(nil), cs.comp.compress(marshal(s, withIDToken))...)
	sealed, err := securecookie.EncodeMulti(cookieBaseName, blob, cs.codecs...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSessionTooLarge, err)
	}
	encoded, err := pack(sealed)
	if err != nil {
		return nil, err
	}
	// The count prefix ("n.") takes two bytes of the first chunk.
	count := (len(encoded) + 2 + chunkSize - 1) / chunkSize
	if count > maxChunks {
		return nil, fmt.Errorf("%w: %d encoded bytes", ErrSessionTooLarge, len(encoded))
	}
	chunks := make([]string, 0, count)
	rest := strconv.Itoa(count) + "." + encoded
	for len(rest) > 0 {
		n := min(len(rest), chunkSize)
		chunks = append(chunks, rest[:n])
		rest = rest[n:]
	}
	return chunks, nil
}

// securecookie base64-encodes twice (base64 of "date|base64(iv+ciphertext)|mac"), which inflates a sealed
// session by 78 %. pack re-expresses the same sealed value as one base64url layer over
// uvarint(date) + iv+ciphertext + mac (33 % overhead); unpack rebuilds securecookie's exact text for
// Decode, which still does every check (MAC, timestamp, decryption, key rotation). For a session with
// enterprise-size tokens this is the difference between about 8.6 KB and 6.4 KB of cookies.

// macSize is the length of securecookie's HMAC-SHA256.
const macSize = sha256.Size

func pack(sealed string) (string, error) {
	raw, err := base64.URLEncoding.DecodeString(sealed)
	if err != nil {
		return "", fmt.Errorf("session: pack: %w", err)
	}
	parts := bytes.SplitN(raw, []byte("|"), 3)
	if len(parts) != 3 || len(parts[2]) != macSize {
		return "", errors.New("session: pack: unexpected securecookie format")
	}
	date, err := strconv.ParseUint(string(parts[0]), 10, 64)
	if err != nil {
		return "", fmt.Errorf("session: pack: %w", err)
	}
	ciphertext, err := base64.URLEncoding.DecodeString(string(parts[1]))
	if err != nil {
		return "", fmt.Errorf("session: pack: %w", err)
	}
	out := binary.AppendUvarint(make([]byte, 0, 10+len(ciphertext)+macSize), date)
	out = append(out, ciphertext...)
	out = append(out, parts[2]...)
	return base64.RawURLEncoding.EncodeToString(out), nil
}

func unpack(packed string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(packed)
	if err != nil {
		return "", errMalformed
	}
	date, n := binary.Uvarint(raw)
	if n <= 0 || len(raw)-n < macSize {
		return "", errMalformed
	}
	ciphertext, mac := raw[n:len(raw)-macSize], raw[len(raw)-macSize:]
	text := make([]byte, 0, 24+base64.URLEncoding.EncodedLen(len(ciphertext))+macSize)
	text = strconv.AppendUint(text, date, 10)
	text = append(text, '|')
	text = base64.URLEncoding.AppendEncode(text, ciphertext)
	text = append(text, '|')
	text = append(text, mac...)
	return base64.URLEncoding.EncodeToString(text), nil
}

// headerSize is what the chunks add to a Cookie header ("name=value; ").
func headerSize(secure bool, chunks []string) int {
	size := 0
	for i, chunk := range chunks {
		size += len(chunkName(secure, i)) + 1 + len(chunk) + 2
	}
	return size
}

func chunkName(secure bool, i int) string {
	return cookieName(secure, cookieBaseName+strconv.Itoa(i))
}

// cookieName adds the __Host- prefix to Secure cookies: the browser then insists on Secure, Path=/ and no
// Domain, so a sibling subdomain cannot plant or shadow the session.
func cookieName(secure bool, name string) string {
	if secure {
		return "__Host-" + name
	}
	return name
}

// sessionCookie builds a session cookie with the secure defaults; maxAge < 0 deletes it.
func sessionCookie(secure bool, name, value string, maxAge int) *http.Cookie {
	cookie := &http.Cookie{
		Name:     name,
		Value:    value,
		Path:     "/",
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   secure,
		SameSite: http.SameSiteLaxMode,
	}
	if maxAge < 0 {
		// Max-Age=0 alone is ignored by some clients (curl 7.88 keeps the cookie); a past Expires is not.
		cookie.Expires = time.Unix(1, 0)
	}
	return cookie
}

// dropSetCookies removes Set-Cookie headers already queued for the cookies that match, so a second Save in
// one response replaces the first instead of sending two values for one cookie.
func dropSetCookies(h http.Header, match func(name string) bool) {
	lines := h.Values("Set-Cookie")
	if len(lines) == 0 {
		return
	}
	kept := lines[:0:0]
	for _, line := range lines {
		if name, _, _ := strings.Cut(line, "="); !match(name) {
			kept = append(kept, line)
		}
	}
	if len(kept) == len(lines) {
		return
	}
	h.Del("Set-Cookie")
	for _, line := range kept {
		h.Add("Set-Cookie", line)
	}
}
