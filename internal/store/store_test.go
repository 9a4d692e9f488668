package store

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/store/redistest"
)

// stores runs fn against both implementations.
func stores(t *testing.T, fn func(t *testing.T, s Store)) {
	t.Run("bolt", func(t *testing.T) {
		s, err := OpenBolt(filepath.Join(t.TempDir(), "sub", "portal.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		fn(t, s)
	})
	t.Run("redis", func(t *testing.T) {
		s, err := NewRedis("redis://"+redistest.Start(t)+"/0", "test:")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		fn(t, s)
	})
}

func TestStoreBasics(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		if _, err := s.Get(ctx, "a"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("get absent: %v", err)
		}
		if err := s.Put(ctx, "job/1", []byte("one"), 0); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, "job/2", []byte("two"), 0); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, "other", []byte("x"), 0); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, "job/1")
		if err != nil || string(got) != "one" {
			t.Fatalf("get: %q %v", got, err)
		}
		keys, err := s.Keys(ctx, "job/")
		slices.Sort(keys)
		if err != nil || !slices.Equal(keys, []string{"job/1", "job/2"}) {
			t.Fatalf("keys: %v %v", keys, err)
		}
		if err := s.Update(ctx, "job/1", 0, func(old []byte) ([]byte, error) { return append(old, '!'), nil }); err != nil {
			t.Fatal(err)
		}
		if err := s.Update(ctx, "job/1", 0, func(old []byte) ([]byte, error) { return nil, ErrSkip }); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Get(ctx, "job/1"); string(got) != "one!" {
			t.Fatalf("after update: %q", got)
		}
		if err := s.Update(ctx, "job/1", 0, func(old []byte) ([]byte, error) { return nil, nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "job/1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deleted by update: %v", err)
		}
		if err := s.Delete(ctx, "job/2"); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, "short", []byte("x"), time.Millisecond); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(3 * time.Second)
		for {
			if _, err := s.Get(ctx, "short"); errors.Is(err, ErrNotFound) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("a value with a ttl did not expire")
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

// TestStoreUpdateIsAtomic: concurrent read-modify-writes lose no increment.
func TestStoreUpdateIsAtomic(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 25 {
					err := s.Update(ctx, "counter", 0, func(old []byte) ([]byte, error) {
						n, _ := strconv.Atoi(string(old))
						return []byte(strconv.Itoa(n + 1)), nil
					})
					if err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		if got, _ := s.Get(ctx, "counter"); string(got) != "200" {
			t.Fatalf("counter %q, want 200", got)
		}
	})
}
