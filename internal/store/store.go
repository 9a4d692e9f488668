// Package store is the key/value store the portal kept its state in before the state database
// (internal/statedb): a bbolt file in the data directory, or Redis. The portal no longer writes
// it; internal/stateimport reads it once, at the first start of a version with the state
// database, to carry an upgraded deployment's work index, people, recent items and batch jobs over.
//
// Values are opaque bytes (the callers encode JSON). Update is the one way to change a value
// that several parties write (a job's runner and the user's cancel): it reads, calls fn and
// writes atomically, so neither overwrites the other's change.
package store

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned by Get for a key that has no value.
var ErrNotFound = errors.New("store: not found")

// Store is a key/value store with atomic read-modify-write.
type Store interface {
	// Get returns the value of key, or ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Put sets the value of key; ttl > 0 lets it expire (Redis) or is kept as a hint (Bolt
	// sweeps expired keys on open and on Keys).
	Put(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Update reads key (nil when absent), calls fn, and writes what fn returns, atomically. fn
	// may be called more than once (Redis retries when another writer got in between); it
	// returns ErrSkip to leave the value as it is. A nil result deletes the key.
	Update(ctx context.Context, key string, ttl time.Duration, fn func(old []byte) ([]byte, error)) error
	// Keys lists the keys that start with prefix (unordered).
	Keys(ctx context.Context, prefix string) ([]string, error)
	// Delete removes key (no error when absent).
	Delete(ctx context.Context, key string) error
	// Close releases the store.
	Close() error
}

// ErrSkip, returned by an Update function, leaves the stored value unchanged; Update then
// returns nil.
var ErrSkip = errors.New("store: skip update")
