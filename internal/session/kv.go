package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"
)

// sweepEvery is how often the database backend deletes expired rows (during a write, never in a
// background goroutine).
const sweepEvery = 10 * time.Minute

// hashName is the key under which a name of any length and alphabet (a token id, a jti) is kept.
func hashName(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}

// errNotFound is a kv's answer for a key that is absent or expired.
var errNotFound = errors.New("session: key not found")

// setMode says when kv.set writes.
type setMode int

const (
	setAlways    setMode = iota
	setIfAbsent          // create only (a new session id, a jti seen for the first time)
	setIfPresent         // update only (a session that may have been signed out meanwhile)
)

// kv is the small key-value store under the server-side session stores and the cookie store's
// revocation list: values and sets of members, each with a time to live. The state database
// (sqlKV: SQLite by default, PostgreSQL shared by replicas) is the default; memoryKV serves the
// cookie store without a database, and tests.
type kv interface {
	// get returns the value of key, errNotFound when absent or expired.
	get(ctx context.Context, key string) ([]byte, error)
	// set writes key per mode and reports whether it wrote.
	set(ctx context.Context, key string, value []byte, ttl time.Duration, mode setMode) (bool, error)
	// del removes keys (absent ones are no error).
	del(ctx context.Context, keys ...string) error
	// addMember adds member to set and extends the set's life to at least ttl.
	addMember(ctx context.Context, set, member string, ttl time.Duration) error
	// removeMembers removes members from set.
	removeMembers(ctx context.Context, set string, members ...string) error
	// members lists set (possibly including members whose value has expired).
	members(ctx context.Context, set string) ([]string, error)
	// settle returns once the writes made so far are seen by every replica sharing the backend
	// (valueCache): called once after the last write of an operation, before its caller answers.
	settle(ctx context.Context)
	// ping checks that the backend is usable (start-up).
	ping(ctx context.Context) error
	close() error
}
