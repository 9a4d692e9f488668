package session

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The file backend's read cache must never show what is no longer in the directory: a value
// written, deleted or expired by this process, or replaced and deleted from outside it.
func TestFileKVReadCacheSeesEveryChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	kv, err := newFileKV(dir, clock)
	if err != nil {
		t.Fatal(err)
	}
	other, err := newFileKV(dir, clock) // a change made from outside the process
	if err != nil {
		t.Fatal(err)
	}
	get := func(want string) {
		t.Helper()
		got, err := kv.get(ctx, "k")
		if want == "" {
			if !errors.Is(err, errNotFound) {
				t.Fatalf("get = %q, %v; want not found", got, err)
			}
			return
		}
		if err != nil || string(got) != want {
			t.Fatalf("get = %q, %v; want %q", got, err, want)
		}
	}

	if _, err := kv.set(ctx, "k", []byte("one"), time.Hour, setAlways); err != nil {
		t.Fatal(err)
	}
	get("one")
	get("one") // from the cache
	if _, err := kv.set(ctx, "k", []byte("two"), time.Hour, setAlways); err != nil {
		t.Fatal(err)
	}
	get("two")
	for _, v := range []string{"333", "444", "555"} { // same size, in a burst: timestamps may not move
		if _, err := other.set(ctx, "k", []byte(v), time.Hour, setAlways); err != nil {
			t.Fatal(err)
		}
		get(v)
	}
	if err := other.del(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	get("")
	if _, err := kv.set(ctx, "k", []byte("six"), time.Minute, setAlways); err != nil {
		t.Fatal(err)
	}
	get("six")
	now = now.Add(2 * time.Minute)
	get("") // expired, although cached
}
