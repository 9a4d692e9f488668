package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
)

// fakeRoot is a repository root holding the files the fill cache's key reads.
func fakeRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range append(fillSources, migrationsDir+"/00001_a.sql", migrationsDir+"/00028_b.sql") {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestFillCacheKeyFollowsTheSchemaTheFillAndTheDay: the key names the highest migration and
// changes with any migration, the fill's code, the totals' rebuild and the UTC day.
func TestFillCacheKeyFollowsTheSchemaTheFillAndTheDay(t *testing.T) {
	root := fakeRoot(t)
	day := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	key, err := fillCacheKey(root, day)
	if err != nil {
		t.Fatal(err)
	}
	if key[:7] != "m00028-" || key[len(key)-9:] != "-20261129" {
		t.Fatalf("key %s", key)
	}
	if again, _ := fillCacheKey(root, day.Add(time.Hour)); again != key {
		t.Errorf("the same sources and day: %s then %s", key, again)
	}
	if next, _ := fillCacheKey(root, day.Add(24*time.Hour)); next == key {
		t.Errorf("the next day has the same key %s", key)
	}
	seen := map[string]string{key: "start"}
	for _, f := range append(fillSources, migrationsDir+"/00001_a.sql", migrationsDir+"/00029_new.sql") {
		if err := os.WriteFile(filepath.Join(root, f), []byte("changed "+f), 0o644); err != nil {
			t.Fatal(err)
		}
		k, err := fillCacheKey(root, day)
		if err != nil {
			t.Fatal(err)
		}
		if prev, dup := seen[k]; dup {
			t.Errorf("changing %s kept the key of %s (%s)", f, prev, k)
		}
		seen[k] = f
	}
	if k, _ := fillCacheKey(root, day); k[:7] != "m00029-" {
		t.Errorf("a new migration 00029: key %s", k)
	}
}

// TestFillCacheReusesAWholeFillOnly: the first use fills and caches, the next copies the cache
// without filling; a fill that fails halfway leaves nothing the next run uses; -refill fills
// again once per run; each use gets its own copy (a measurement's writes never reach the cache).
func TestFillCacheReusesAWholeFillOnly(t *testing.T) {
	ctx := context.Background()
	root := fakeRoot(t)
	newCache := func(refill bool) *fillCache {
		c, err := newFillCache(root, refill, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	fills := 0
	fail := errors.New("stopped halfway")
	failing := true
	fill := func(ctx context.Context, db *statedb.DB) error {
		fills++
		if _, err := db.SQL.ExecContext(ctx, `CREATE TABLE bench_fill (n INTEGER)`); err != nil {
			return err
		}
		if _, err := db.SQL.ExecContext(ctx, `INSERT INTO bench_fill (n) VALUES ($1)`, fills); err != nil {
			return err
		}
		if failing {
			return fail
		}
		return nil
	}
	read := func(dir string) int {
		t.Helper()
		db, err := statedb.Open(ctx, statedb.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if err := db.SQL.QueryRowContext(ctx, `SELECT n FROM bench_fill`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		// The measurement writes to its copy.
		if _, err := db.SQL.ExecContext(ctx, `UPDATE bench_fill SET n = 100`); err != nil {
			t.Fatal(err)
		}
		return n
	}

	c := newCache(false)
	if err := c.sqlite(ctx, "state-1k", t.TempDir(), fill); !errors.Is(err, fail) {
		t.Fatalf("a failing fill: %v", err)
	}
	if entries, _ := os.ReadDir(c.dir); len(entries) != 0 {
		t.Fatalf("a failed fill left %v in the cache", entries)
	}
	failing = false
	for run, want := range []int{2, 2, 2} {
		dst := t.TempDir()
		if err := newCache(false).sqlite(ctx, "state-1k", dst, fill); err != nil {
			t.Fatal(err)
		}
		if got := read(dst); got != want || fills != 2 {
			t.Fatalf("run %d: the copy holds fill %d (want %d), %d fills made", run, got, want, fills)
		}
	}
	c = newCache(true)
	for range 2 {
		dst := t.TempDir()
		if err := c.sqlite(ctx, "state-1k", dst, fill); err != nil {
			t.Fatal(err)
		}
		if got := read(dst); got != 3 || fills != 3 {
			t.Fatalf("-refill: the copy holds fill %d, %d fills made (want 3, 3)", got, fills)
		}
	}
	// Without a cache, every use fills in place.
	dst := t.TempDir()
	if err := (*fillCache)(nil).sqlite(ctx, "state-1k", dst, fill); err != nil || read(dst) != 4 {
		t.Fatalf("no cache: %v, %d fills", err, fills)
	}
}
