package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
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

// TestFillCacheKeyFollowsTheSchemaAndTheFillNotTheDay: the key names the highest migration and
// changes with any migration, the fill's code and the totals' rebuild, and holds nothing else (no
// day: a fill means the same on a later day, TestAFillMeasuredOnALaterDayReadsTheSameAsOnTheDayOfTheFill).
func TestFillCacheKeyFollowsTheSchemaAndTheFillNotTheDay(t *testing.T) {
	root := fakeRoot(t)
	key, err := fillCacheKey(root)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^m00028-[0-9a-f]{12}$`).MatchString(key) {
		t.Fatalf("key %s: want m00028-<hash> and nothing else", key)
	}
	if again, _ := fillCacheKey(root); again != key {
		t.Errorf("the same sources: %s then %s", key, again)
	}
	// The files' times are not the key's: a checkout or a touch keeps it.
	later := time.Now().Add(48 * time.Hour)
	for _, f := range fillSources {
		if err := os.Chtimes(filepath.Join(root, f), later, later); err != nil {
			t.Fatal(err)
		}
	}
	if again, _ := fillCacheKey(root); again != key {
		t.Errorf("touched sources: %s then %s", key, again)
	}
	seen := map[string]string{key: "start"}
	for _, f := range append(fillSources, migrationsDir+"/00001_a.sql", migrationsDir+"/00029_new.sql") {
		if err := os.WriteFile(filepath.Join(root, f), []byte("changed "+f), 0o644); err != nil {
			t.Fatal(err)
		}
		k, err := fillCacheKey(root)
		if err != nil {
			t.Fatal(err)
		}
		if prev, dup := seen[k]; dup {
			t.Errorf("changing %s kept the key of %s (%s)", f, prev, k)
		}
		seen[k] = f
	}
	if k, _ := fillCacheKey(root); k[:7] != "m00029-" {
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

// TestFillCacheReusesAWholePostgresFillOnly: the PostgreSQL fills are cached as the SQLite ones
// are (a cluster's data directory, stopped cleanly): the first use fills and caches, the next
// starts a cluster on a copy without filling; a fill that fails halfway leaves nothing; -refill
// fills again once per run; a measurement's writes reach its copy only.
func TestFillCacheReusesAWholePostgresFillOnly(t *testing.T) {
	if _, err := statedbtest.ServerMajor(); err != nil {
		t.Skip(err)
	}
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
	// use starts c's cluster of the fill, reads the fill's number and writes over it.
	use := func(c *fillCache) int {
		t.Helper()
		cluster, url, err := c.postgres(ctx, "state-1k", "bench_1k", fill)
		if err != nil {
			t.Fatal(err)
		}
		defer cluster.Remove()
		db, err := statedb.Open(ctx, statedb.Options{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if err := db.SQL.QueryRowContext(ctx, `SELECT n FROM bench_fill`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL.ExecContext(ctx, `UPDATE bench_fill SET n = 100`); err != nil {
			t.Fatal(err)
		}
		return n
	}

	c := newCache(false)
	if _, _, err := c.postgres(ctx, "state-1k", "bench_1k", fill); !errors.Is(err, fail) {
		t.Fatalf("a failing fill: %v", err)
	}
	if entries, _ := os.ReadDir(c.dir); len(entries) != 0 {
		t.Fatalf("a failed fill left %v in the cache", entries)
	}
	failing = false
	for run := range 2 {
		if got := use(newCache(false)); got != 2 || fills != 2 {
			t.Fatalf("run %d: the copy holds fill %d, %d fills made (want 2, 2)", run, got, fills)
		}
	}
	// The cached data directory keeps the WAL segment of its last checkpoint only (trimWAL), and
	// started from it above.
	major, _ := statedbtest.ServerMajor()
	wal, err := os.ReadDir(filepath.Join(c.dir, "postgres"+major+"-state-1k", "data", "pg_wal"))
	if err != nil {
		t.Fatal(err)
	}
	segments := 0
	for _, e := range wal {
		if len(e.Name()) == 24 {
			segments++
		}
	}
	if segments != 1 {
		t.Errorf("the cached data directory holds %d WAL segments, want 1", segments)
	}
	if got := use(newCache(true)); got != 3 || fills != 3 {
		t.Fatalf("-refill: the copy holds fill %d, %d fills made (want 3, 3)", got, fills)
	}
	// Without a cache, every use fills a fresh cluster.
	if got := use(nil); got != 4 {
		t.Fatalf("no cache: fill %d, %d fills", got, fills)
	}
}
