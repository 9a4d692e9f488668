package session

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/redis/go-redis/v9"
)

const (
	// redisCookieBaseName names the cookie holding the opaque session id.
	redisCookieBaseName = "portal_sid"
	// sessionIDBytes is the entropy of a session id.
	sessionIDBytes = 32
	// defaultKeyPrefix namespaces the portal's redis keys.
	defaultKeyPrefix = "portal:"
)

// RedisOptions configures the redis store.
type RedisOptions struct {
	Options
	// URL locates redis, for example redis://127.0.0.1:6379/0 (see redis.ParseURL). Used when Client is nil.
	URL string
	// Client is an existing client; the store does not close it.
	Client redis.UniversalClient
	// KeyPrefix namespaces keys; default "portal:".
	KeyPrefix string
}

// RedisStore keeps sessions in redis with a TTL of the absolute lifetime. The browser holds only an opaque
// random id, itself sealed with securecookie so forged ids are rejected without a redis round trip. A set
// per subject indexes the user's sessions for DeleteAllForSubject ("sign out everywhere").
type RedisStore struct {
	opts       Options
	keys       keyring
	codecs     []securecookie.Codec
	client     redis.UniversalClient
	ownsClient bool
	prefix     string
}

var _ Store = (*RedisStore)(nil)
var _ CodecSource = (*RedisStore)(nil)
var _ Reloader = (*RedisStore)(nil)

// NewRedisStore returns the redis-backed store. It does not contact redis; see Ping.
func NewRedisStore(opts RedisOptions) (*RedisStore, error) {
	base := opts.Options.withDefaults()
	keys, err := parseKeys(base.Keys)
	if err != nil {
		return nil, err
	}
	rs := &RedisStore{
		opts:   base,
		keys:   keys,
		codecs: keys.codecs(sessionPurpose+" id", base.AbsoluteLifetime),
		client: opts.Client,
		prefix: opts.KeyPrefix,
	}
	if rs.prefix == "" {
		rs.prefix = defaultKeyPrefix
	}
	if rs.client == nil {
		redisOpts, err := redis.ParseURL(opts.URL)
		if err != nil {
			return nil, fmt.Errorf("session: redis URL: %w", err)
		}
		rs.client = redis.NewClient(redisOpts)
		rs.ownsClient = true
	}
	return rs, nil
}

// Close releases the client the store created from URL.
func (rs *RedisStore) Close() error {
	if rs.ownsClient {
		return rs.client.Close()
	}
	return nil
}

// Ping checks that redis answers (for readiness checks).
func (rs *RedisStore) Ping(ctx context.Context) error {
	if err := rs.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("session: redis ping: %w", err)
	}
	return nil
}

// Codecs implements CodecSource.
func (rs *RedisStore) Codecs(purpose string, maxAge time.Duration) []securecookie.Codec {
	return rs.keys.codecs(purpose, maxAge)
}

func (rs *RedisStore) sessionKey(id string) string { return rs.prefix + "session:" + id }

func (rs *RedisStore) subjectKey(subject string) string { return rs.prefix + "subject:" + subject }

func (rs *RedisStore) cookieName() string { return cookieName(rs.opts.Secure, redisCookieBaseName) }

// requestID returns the session id sealed in the request's cookie, or "".
func (rs *RedisStore) requestID(r *http.Request) string {
	cookie, err := r.Cookie(rs.cookieName())
	if err != nil {
		return ""
	}
	var raw []byte
	if err := securecookie.DecodeMulti(redisCookieBaseName, cookie.Value, &raw, rs.codecs...); err != nil {
		return ""
	}
	id := string(raw)
	if len(id) != base64.RawURLEncoding.EncodedLen(sessionIDBytes) {
		return ""
	}
	return id
}

// Load implements Store. It never writes to the response.
func (rs *RedisStore) Load(r *http.Request) (*Session, error) {
	id := rs.requestID(r)
	if id == "" {
		return nil, ErrNoSession
	}
	return rs.load(r.Context(), id)
}

// Reload implements Reloader.
func (rs *RedisStore) Reload(ctx context.Context, id string) (*Session, error) {
	if id == "" {
		return nil, ErrNoSession
	}
	return rs.load(ctx, id)
}

func (rs *RedisStore) load(ctx context.Context, id string) (*Session, error) {
	data, err := rs.client.Get(ctx, rs.sessionKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNoSession
	}
	if err != nil {
		return nil, fmt.Errorf("session: redis get: %w", err)
	}
	s, err := unmarshal(data)
	if err != nil || rs.opts.expired(s, rs.opts.Now()) {
		return nil, ErrNoSession
	}
	s.ID = id
	return s, nil
}

// Save implements Store. A session without ID gets a new random id (and the cookie); one with an ID is
// only updated while it still exists, so a request in flight cannot revive a session that was signed out
// meanwhile (that returns ErrNoSession). A different session id in the request's cookie (an earlier
// sign-in in this browser) is deleted.
func (rs *RedisStore) Save(w http.ResponseWriter, r *http.Request, s *Session) error {
	ctx := r.Context()
	now := rs.opts.Now()
	ttl := time.Duration(rs.opts.remaining(s, now)) * time.Second
	data := marshal(s, true)
	if s.ID == "" {
		id, err := newSessionID()
		if err != nil {
			return err
		}
		created, err := rs.client.SetNX(ctx, rs.sessionKey(id), data, ttl).Result()
		if err != nil {
			return fmt.Errorf("session: redis set: %w", err)
		}
		if !created {
			return errors.New("session: session id collision")
		}
		s.ID = id
	} else {
		updated, err := rs.client.SetXX(ctx, rs.sessionKey(s.ID), data, ttl).Result()
		if err != nil {
			return fmt.Errorf("session: redis set: %w", err)
		}
		if !updated {
			return ErrNoSession
		}
	}
	if s.Subject != "" {
		_, err := rs.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.SAdd(ctx, rs.subjectKey(s.Subject), s.ID)
			p.Expire(ctx, rs.subjectKey(s.Subject), rs.opts.AbsoluteLifetime)
			return nil
		})
		if err != nil {
			return fmt.Errorf("session: redis index subject: %w", err)
		}
	}
	previous := rs.requestID(r)
	if previous == s.ID {
		return nil // the browser already holds this id
	}
	if previous != "" {
		if err := rs.client.Del(ctx, rs.sessionKey(previous)).Err(); err != nil {
			return fmt.Errorf("session: redis delete replaced session: %w", err)
		}
	}
	sealed, err := securecookie.EncodeMulti(redisCookieBaseName, []byte(s.ID), rs.codecs...)
	if err != nil {
		return fmt.Errorf("session: seal id: %w", err)
	}
	dropSetCookies(w.Header(), func(name string) bool { return name == rs.cookieName() })
	http.SetCookie(w, sessionCookie(rs.opts.Secure, rs.cookieName(), sealed, rs.opts.remaining(s, now)))
	return nil
}

// Delete implements Store: it deletes the server-side session and expires the cookie.
func (rs *RedisStore) Delete(w http.ResponseWriter, r *http.Request) error {
	dropSetCookies(w.Header(), func(name string) bool { return name == rs.cookieName() })
	id := rs.requestID(r)
	if _, err := r.Cookie(rs.cookieName()); err == nil {
		http.SetCookie(w, sessionCookie(rs.opts.Secure, rs.cookieName(), "", -1))
	}
	if id == "" {
		return nil
	}
	ctx := r.Context()
	s, err := rs.load(ctx, id)
	if err != nil && !errors.Is(err, ErrNoSession) {
		return err
	}
	_, err = rs.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, rs.sessionKey(id))
		if s != nil && s.Subject != "" {
			p.SRem(ctx, rs.subjectKey(s.Subject), id)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("session: redis delete: %w", err)
	}
	return nil
}

// DeleteAllForSubject deletes every session of the user ("sign out everywhere"). Their cookies become
// useless at once.
func (rs *RedisStore) DeleteAllForSubject(ctx context.Context, subject string) error {
	ids, err := rs.client.SMembers(ctx, rs.subjectKey(subject)).Result()
	if err != nil {
		return fmt.Errorf("session: redis list sessions: %w", err)
	}
	keys := make([]string, 0, len(ids)+1)
	for _, id := range ids {
		keys = append(keys, rs.sessionKey(id))
	}
	keys = append(keys, rs.subjectKey(subject))
	if err := rs.client.Del(ctx, keys...).Err(); err != nil {
		return fmt.Errorf("session: redis delete sessions: %w", err)
	}
	return nil
}

func newSessionID() (string, error) {
	raw := make([]byte, sessionIDBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("session: random id: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(raw), nil
}
