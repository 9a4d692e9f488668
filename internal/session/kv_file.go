package session

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// sweepEvery is how often the file backend removes expired entries (during a write, never in a
// background goroutine).
const sweepEvery = 10 * time.Minute

// fileKV keeps the kv in a directory of small files, written atomically (temporary file, then
// rename): kv/<sha256 of key> holds an 8-byte expiry followed by the value; sets/<sha256 of set>/
// <hex of member> holds the member's expiry. One portal process owns the directory: its writes are
// serialised by a mutex, which is what makes set-if-absent and set-if-present atomic. Several
// replicas need the state database on PostgreSQL instead.
type fileKV struct {
	root string
	now  func() time.Time

	mu        sync.Mutex
	lastSweep time.Time

	reads readCache // the kv entries read last (get), checked with a stat on every use
}

// newFileKV prepares dir (created 0700 when missing) and checks that a file can be written there.
func newFileKV(dir string, now func() time.Time) (*fileKV, error) {
	f := &fileKV{root: dir, now: now}
	for _, sub := range []string{"kv", "sets", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, fmt.Errorf("session: data directory: %w", err)
		}
	}
	if err := f.ping(context.Background()); err != nil {
		return nil, err
	}
	f.lastSweep = now()
	return f, nil
}

func hashName(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}

func (f *fileKV) keyPath(key string) string { return filepath.Join(f.root, "kv", hashName(key)) }

func (f *fileKV) setDir(set string) string { return filepath.Join(f.root, "sets", hashName(set)) }

// ping writes and removes a file: a directory that cannot be written is a store failure.
func (f *fileKV) ping(context.Context) error {
	tmp, err := os.CreateTemp(filepath.Join(f.root, "tmp"), "ping-*")
	if err != nil {
		return fmt.Errorf("session: data directory not writable: %w", err)
	}
	name := tmp.Name()
	_ = tmp.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("session: data directory: %w", err)
	}
	return nil
}

// readEntry reads a file written by writeEntry: ok=false when absent or expired. A missing file is
// absence only while the directory itself is there: a data directory that was removed or replaced is
// a store failure (503), never "signed out", so the session comes back with the directory.
func (f *fileKV) readEntry(path string) ([]byte, bool, error) {
	value, _, ok, err := f.readEntryExpiry(path)
	return value, ok, err
}

// readEntryExpiry is readEntry that also returns the entry's expiry.
func (f *fileKV) readEntryExpiry(path string) ([]byte, time.Time, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if _, statErr := os.Stat(filepath.Dir(path)); statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
			return nil, time.Time{}, false, fmt.Errorf("session: data directory: %w", statErr)
		}
		if _, statErr := os.Stat(filepath.Join(f.root, "kv")); statErr != nil {
			return nil, time.Time{}, false, fmt.Errorf("session: data directory: %w", statErr)
		}
		return nil, time.Time{}, false, nil
	}
	if err != nil {
		return nil, time.Time{}, false, fmt.Errorf("session: read %s: %w", filepath.Base(path), err)
	}
	if len(data) < 8 {
		return nil, time.Time{}, false, nil // a torn write cannot happen (rename), so this is garbage: absent
	}
	expires := time.Unix(0, int64(binary.BigEndian.Uint64(data)))
	if !f.now().Before(expires) {
		return nil, expires, false, nil
	}
	return data[8:], expires, true, nil
}

// writeEntry writes value with its expiry atomically.
func (f *fileKV) writeEntry(path string, value []byte, ttl time.Duration) error {
	buf := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(value)), uint64(f.now().Add(ttl).UnixNano()))
	buf = append(buf, value...)
	tmp, err := os.CreateTemp(filepath.Join(f.root, "tmp"), "w-*")
	if err != nil {
		return fmt.Errorf("session: data directory not writable: %w", err)
	}
	_, werr := tmp.Write(buf)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("session: write: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("session: write: %w", err)
	}
	return nil
}

func (f *fileKV) get(_ context.Context, key string) ([]byte, error) {
	path := f.keyPath(key)
	cached, found, gen := f.reads.begin(path)
	info, statErr := os.Stat(path) // before the read: what is cached must be at most as new as info
	if found && statErr == nil && cached.valid(info) {
		if !f.now().Before(cached.expires) {
			return nil, errNotFound
		}
		return cached.value, nil
	}
	value, expires, ok, err := f.readEntryExpiry(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errNotFound
	}
	if statErr == nil {
		f.reads.store(path, gen, readCacheEntry{info: info, expires: expires, value: value})
	}
	return value, nil
}

func (f *fileKV) set(_ context.Context, key string, value []byte, ttl time.Duration, mode setMode) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sweepLocked()
	path := f.keyPath(key)
	f.reads.invalidate(path)
	if mode != setAlways {
		_, exists, err := f.readEntry(path)
		if err != nil {
			return false, err
		}
		if exists != (mode == setIfPresent) {
			return false, nil
		}
	}
	if err := f.writeEntry(path, value, ttl); err != nil {
		return false, err
	}
	return true, nil
}

func (f *fileKV) del(_ context.Context, keys ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for _, key := range keys {
		f.reads.invalidate(f.keyPath(key))
		if err := os.Remove(f.keyPath(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("session: delete: %w", err)
	}
	return nil
}

func (f *fileKV) addMember(_ context.Context, set, member string, ttl time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	dir := f.setDir(set)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("session: index: %w", err)
	}
	return f.writeEntry(filepath.Join(dir, hex.EncodeToString([]byte(member))), nil, ttl)
}

func (f *fileKV) removeMembers(_ context.Context, set string, members ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	dir := f.setDir(set)
	for _, member := range members {
		if err := os.Remove(filepath.Join(dir, hex.EncodeToString([]byte(member)))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("session: index: %w", err)
		}
	}
	_ = os.Remove(dir) // only succeeds when empty
	return nil
}

func (f *fileKV) members(_ context.Context, set string) ([]string, error) {
	dir := f.setDir(set)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if _, statErr := os.Stat(filepath.Join(f.root, "sets")); statErr != nil {
			return nil, fmt.Errorf("session: data directory: %w", statErr)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session: index: %w", err)
	}
	var members []string
	for _, entry := range entries {
		raw, err := hex.DecodeString(entry.Name())
		if err != nil {
			continue
		}
		if _, ok, err := f.readEntry(filepath.Join(dir, entry.Name())); err == nil && ok {
			members = append(members, string(raw))
		}
	}
	return members, nil
}

// sweepLocked removes expired entries, at most every sweepEvery, so the directory does not grow
// with sessions that simply ran out.
func (f *fileKV) sweepLocked() {
	now := f.now()
	if now.Sub(f.lastSweep) < sweepEvery {
		return
	}
	f.lastSweep = now
	f.reads.invalidate("")
	expired := func(path string) bool {
		data, err := os.ReadFile(path)
		return err == nil && (len(data) < 8 || !now.Before(time.Unix(0, int64(binary.BigEndian.Uint64(data)))))
	}
	if entries, err := os.ReadDir(filepath.Join(f.root, "kv")); err == nil {
		for _, entry := range entries {
			if path := filepath.Join(f.root, "kv", entry.Name()); expired(path) {
				_ = os.Remove(path)
			}
		}
	}
	if sets, err := os.ReadDir(filepath.Join(f.root, "sets")); err == nil {
		for _, set := range sets {
			dir := filepath.Join(f.root, "sets", set.Name())
			members, _ := os.ReadDir(dir)
			for _, member := range members {
				if path := filepath.Join(dir, member.Name()); expired(path) {
					_ = os.Remove(path)
				}
			}
			_ = os.Remove(dir)
		}
	}
	// Temporary files left by a crash between create and rename.
	if temps, err := os.ReadDir(filepath.Join(f.root, "tmp")); err == nil {
		for _, temp := range temps {
			if info, err := temp.Info(); err == nil && now.Sub(info.ModTime()) > time.Hour {
				_ = os.Remove(filepath.Join(f.root, "tmp", temp.Name()))
			}
		}
	}
}

func (f *fileKV) close() error { return nil }
