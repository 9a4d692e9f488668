package session

import (
	"context"
	"errors"
	"time"
)

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
// (sqlKV: SQLite by default, PostgreSQL shared by replicas) is the default; fileKV is the older
// portals' data directory (kept for their one-time import); memoryKV serves tests.
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
	// ping checks that the backend is usable (start-up).
	ping(ctx context.Context) error
	close() error
}
