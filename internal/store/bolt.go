package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// boltBucket holds every key; an expiry, when set, is the value's first 8 bytes (Unix
// nanoseconds, 0 for none).
var boltBucket = []byte("portal")

// Bolt is the embedded Store: one bbolt file, safe for one process at a time (bbolt locks it).
type Bolt struct {
	db  *bolt.DB
	now func() time.Time
}

// OpenBolt opens (or creates) the bbolt file at path, making its directory. A second process
// opening the same file waits up to 5 s for the lock and then fails.
func OpenBolt(path string) (*Bolt, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: data directory: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(boltBucket)
		return err
	}); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return &Bolt{db: db, now: time.Now}, nil
}

func (b *Bolt) encode(value []byte, ttl time.Duration) []byte {
	out := make([]byte, 8+len(value))
	if ttl > 0 {
		binary.BigEndian.PutUint64(out, uint64(b.now().Add(ttl).UnixNano()))
	}
	copy(out[8:], value)
	return out
}

// decode returns the value, or nil when absent or expired.
func (b *Bolt) decode(raw []byte) []byte {
	if len(raw) < 8 {
		return nil
	}
	if exp := int64(binary.BigEndian.Uint64(raw)); exp != 0 && b.now().UnixNano() > exp {
		return nil
	}
	return bytes.Clone(raw[8:])
}

// Get implements Store.
func (b *Bolt) Get(_ context.Context, key string) ([]byte, error) {
	var value []byte
	err := b.db.View(func(tx *bolt.Tx) error {
		value = b.decode(tx.Bucket(boltBucket).Get([]byte(key)))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: get %s: %w", key, err)
	}
	if value == nil {
		return nil, ErrNotFound
	}
	return value, nil
}

// Put implements Store.
func (b *Bolt) Put(_ context.Context, key string, value []byte, ttl time.Duration) error {
	if err := b.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(boltBucket).Put([]byte(key), b.encode(value, ttl))
	}); err != nil {
		return fmt.Errorf("store: put %s: %w", key, err)
	}
	return nil
}

// Update implements Store: one bbolt write transaction.
func (b *Bolt) Update(_ context.Context, key string, ttl time.Duration, fn func(old []byte) ([]byte, error)) error {
	err := b.db.Update(func(tx *bolt.Tx) error {
		bucket := tx.Bucket(boltBucket)
		next, err := fn(b.decode(bucket.Get([]byte(key))))
		if err != nil {
			return err
		}
		if next == nil {
			return bucket.Delete([]byte(key))
		}
		return bucket.Put([]byte(key), b.encode(next, ttl))
	})
	if errors.Is(err, ErrSkip) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: update %s: %w", key, err)
	}
	return nil
}

// Keys implements Store; expired keys are left out (and removed).
func (b *Bolt) Keys(_ context.Context, prefix string) ([]string, error) {
	var keys []string
	var expired [][]byte
	err := b.db.View(func(tx *bolt.Tx) error {
		cursor := tx.Bucket(boltBucket).Cursor()
		p := []byte(prefix)
		for k, v := cursor.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = cursor.Next() {
			if b.decode(v) == nil {
				expired = append(expired, bytes.Clone(k))
				continue
			}
			keys = append(keys, string(k))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: keys %s: %w", prefix, err)
	}
	if len(expired) > 0 {
		_ = b.db.Update(func(tx *bolt.Tx) error {
			bucket := tx.Bucket(boltBucket)
			for _, k := range expired {
				if b.decode(bucket.Get(k)) == nil {
					_ = bucket.Delete(k)
				}
			}
			return nil
		})
	}
	return keys, nil
}

// Delete implements Store.
func (b *Bolt) Delete(_ context.Context, key string) error {
	if err := b.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(boltBucket).Delete([]byte(key))
	}); err != nil {
		return fmt.Errorf("store: delete %s: %w", key, err)
	}
	return nil
}

// Close implements Store.
func (b *Bolt) Close() error { return b.db.Close() }
