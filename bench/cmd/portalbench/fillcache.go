package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
)

// The filled SQLite databases a run reuses (docs/performance.md "The cached fills"): the state
// group's fixture at each size (fill.go) and the mail group's inbox of 11 million items are kept
// under .cache/bench/<key>/<name>/, keyed by the schema and the fill's code, and copied into the
// run's own directory before they are measured (the measurements write to them; the cache is never
// written after it is made). A fill is made under a temporary name in the same directory and
// renamed when it is whole, so a run that stops halfway leaves nothing a later run would use.
//
// The key is m<highest migration>-<hash>-<UTC day>: the hash covers fill.go, the migrations
// (internal/statedb/migrations and the Go migration of migrate.go) and the totals' rebuild
// (internal/workindex/totals.go), so a change to any of them makes a new fill; the day, because
// the fill dates its rows relative to when it was made (the last 60 days: "signed this month",
// the home page's follow-ups by age), so a fill is used only on the day it was made.
// -refill makes the fills again; -no-fill-cache fills in place as before (nothing kept).

// fillCacheMaxAge: other keys' fills older than this are removed when a fill is made (they are
// gigabytes; a run on another branch the same day keeps its own).
const fillCacheMaxAge = 24 * time.Hour

// fillCache is one run's cache of filled databases; a nil *fillCache fills in place.
type fillCache struct {
	dir    string // <root>/.cache/bench/<key>
	refill bool   // make every fill again this run (-refill)
	stderr io.Writer
	made   map[string]bool // fills made again by this run (with refill: each once)
}

// newFillCache is the cache of the repository at root for today's key.
func newFillCache(root string, refill bool, stderr io.Writer) (*fillCache, error) {
	key, err := fillCacheKey(root, time.Now())
	if err != nil {
		return nil, fmt.Errorf("fill cache: %w", err)
	}
	return &fillCache{dir: filepath.Join(root, ".cache", "bench", key), refill: refill, stderr: stderr, made: map[string]bool{}}, nil
}

// fillSources are the files whose text keys the cache, relative to the repository root; every
// file of the migrations directory is added.
var fillSources = []string{"bench/cmd/portalbench/fill.go", "internal/statedb/migrate.go", "internal/workindex/totals.go"}

const migrationsDir = "internal/statedb/migrations"

// fillCacheKey is m<highest migration>-<hash of the fill's sources>-<UTC day of now>.
func fillCacheKey(root string, now time.Time) (string, error) {
	entries, err := os.ReadDir(filepath.Join(root, migrationsDir))
	if err != nil {
		return "", err
	}
	files := slices.Clone(fillSources)
	highest := 0
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		files = append(files, migrationsDir+"/"+e.Name())
		digits, _, _ := strings.Cut(e.Name(), "_")
		if n, err := strconv.Atoi(digits); err == nil {
			highest = max(highest, n)
		}
	}
	if highest == 0 {
		return "", fmt.Errorf("no migration in %s", migrationsDir)
	}
	slices.Sort(files)
	h := sha256.New()
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(data))
		h.Write(data)
	}
	return fmt.Sprintf("m%05d-%x-%s", highest, h.Sum(nil)[:6], now.UTC().Format("20060102")), nil
}

// sqlite puts a copy of the cached SQLite database name into the directory dst (statedb's
// Options.Dir), making it with fill first when the cache lacks it (or with -refill, once a run).
// Without a cache it fills a database in dst itself.
func (c *fillCache) sqlite(ctx context.Context, name, dst string, fill func(ctx context.Context, db *statedb.DB) error) error {
	if c == nil {
		return fillSQLiteIn(ctx, dst, fill)
	}
	final := filepath.Join(c.dir, name)
	_, err := os.Stat(filepath.Join(final, statedb.SQLiteFile))
	if c.refill && !c.made[name] || errors.Is(err, fs.ErrNotExist) {
		if err := c.make(ctx, name, final, fill); err != nil {
			return err
		}
	} else if err != nil {
		return err
	} else {
		fmt.Fprintf(c.stderr, "portalbench: fill %s from the cache (%s)\n", name, final)
	}
	t0 := time.Now()
	if err := copyDir(final, dst); err != nil {
		return fmt.Errorf("fill cache: copy %s: %w", name, err)
	}
	fmt.Fprintf(c.stderr, "portalbench: fill %s copied in %s\n", name, time.Since(t0).Round(time.Millisecond))
	return nil
}

// make fills name under a temporary directory of the cache and renames it to final when whole.
func (c *fillCache) make(ctx context.Context, name, final string, fill func(ctx context.Context, db *statedb.DB) error) error {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return fmt.Errorf("fill cache: %w", err)
	}
	c.prune()
	tmp, err := os.MkdirTemp(c.dir, name+".tmp-")
	if err != nil {
		return fmt.Errorf("fill cache: %w", err)
	}
	defer os.RemoveAll(tmp) // after the rename: nothing there
	t0 := time.Now()
	if err := fillSQLiteIn(ctx, tmp, fill); err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "portalbench: fill %s made in %s (cached in %s)\n", name, time.Since(t0).Round(time.Millisecond), final)
	if err := os.RemoveAll(final); err != nil { // -refill: the previous one
		return fmt.Errorf("fill cache: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("fill cache: %w", err)
	}
	c.made[name] = true
	return nil
}

// fillSQLiteIn opens (migrates) an SQLite database in dir on one connection, fills it and closes
// it (its WAL checkpointed into the file).
func fillSQLiteIn(ctx context.Context, dir string, fill func(ctx context.Context, db *statedb.DB) error) error {
	db, err := statedb.Open(ctx, statedb.Options{Dir: dir, MaxOpenConns: 1})
	if err != nil {
		return err
	}
	if err := fill(ctx, db); err != nil {
		db.Close()
		return fmt.Errorf("fill: %w", err)
	}
	return db.Close()
}

// prune removes the cache's other keys and half-made fills older than fillCacheMaxAge.
func (c *fillCache) prune() {
	parent := filepath.Dir(c.dir)
	old := func(path string) bool {
		fi, err := os.Stat(path)
		return err == nil && time.Since(fi.ModTime()) > fillCacheMaxAge
	}
	keys, _ := os.ReadDir(parent)
	for _, k := range keys {
		path := filepath.Join(parent, k.Name())
		if path != c.dir && old(path) {
			_ = os.RemoveAll(path)
		}
	}
	fills, _ := os.ReadDir(c.dir)
	for _, f := range fills {
		if path := filepath.Join(c.dir, f.Name()); strings.Contains(f.Name(), ".tmp-") && old(path) {
			_ = os.RemoveAll(path)
		}
	}
}

// copyDir copies the regular files of src into dst (made when missing).
func copyDir(src, dst string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
