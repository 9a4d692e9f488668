package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// The filled databases a run reuses (docs/performance.md "The fills and their cache"): the state
// group's fixture at each size (fill.go) and the mail group's inbox of 11 million items, on both
// engines, are kept under .cache/bench/<key>/<name>/, keyed by the schema and the fill's code,
// and copied into the run's own directory before they are measured (the measurements write to
// them; the cache is never written after it is made): an SQLite database file, or a PostgreSQL
// cluster's data directory (stopped cleanly after the fill; a run starts a throwaway cluster on a
// copy of it). A fill is made under a temporary name in the same directory and renamed when it is
// whole, so a run that stops halfway leaves nothing a later run would use.
//
// The key is m<highest migration>-<hash>: the hash covers fill.go, the migrations
// (internal/statedb/migrations and the Go migration of migrate.go) and the totals' rebuild
// (internal/workindex/totals.go), so a change to any of them makes a new fill. The day is not in
// it: the fills date their rows from a fixed moment and the measured code reads them with a clock
// starting there (fill.go, fillAnchor and fillClock), so a fill means the same on any later day.
// PostgreSQL's data directories are named by the server's major version too (postgres16-...):
// another version cannot start them. -refill makes the fills again; -no-fill-cache fills in
// place (nothing kept).

// fillCacheMaxAge: other keys' fills unused for longer than this are removed when a fill is made
// (they are gigabytes; a run on another branch within the day keeps its own). A run's use of its
// key touches the key's directory.
const fillCacheMaxAge = 24 * time.Hour

// fillCache is one run's cache of filled databases; a nil *fillCache fills in place.
type fillCache struct {
	dir    string // <root>/.cache/bench/<key>
	refill bool   // make every fill again this run (-refill)
	stderr io.Writer
	made   map[string]bool // fills made again by this run (with refill: each once)
}

// newFillCache is the cache of the repository at root for its key.
func newFillCache(root string, refill bool, stderr io.Writer) (*fillCache, error) {
	key, err := fillCacheKey(root)
	if err != nil {
		return nil, fmt.Errorf("fill cache: %w", err)
	}
	c := &fillCache{dir: filepath.Join(root, ".cache", "bench", key), refill: refill, stderr: stderr, made: map[string]bool{}}
	// In use: not another key's old fill to prune (prune).
	now := time.Now()
	_ = os.Chtimes(c.dir, now, now)
	return c, nil
}

// fillSources are the files whose text keys the cache, relative to the repository root; every
// file of the migrations directory is added.
var fillSources = []string{"bench/cmd/portalbench/fill.go", "internal/statedb/migrate.go", "internal/workindex/totals.go"}

const migrationsDir = "internal/statedb/migrations"

// fillCacheKey is m<highest migration>-<hash of the fill's sources>.
func fillCacheKey(root string) (string, error) {
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
	return fmt.Sprintf("m%05d-%x", highest, h.Sum(nil)[:6]), nil
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
		if err := c.make(name, final, func(tmp string) error { return fillSQLiteIn(ctx, tmp, fill) }); err != nil {
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

// make fills name under a temporary directory of the cache (build fills the directory it is
// given) and renames it to final when whole.
func (c *fillCache) make(name, final string, build func(dir string) error) error {
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
	if err := build(tmp); err != nil {
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

// postgres starts a throwaway PostgreSQL cluster whose database dbName holds fill's rows and
// returns it with that database's URL; the caller removes the cluster. The cluster runs on a copy
// of the cached data directory name (made first, by a cluster filled and then stopped cleanly,
// when the cache lacks it, or with -refill once a run). Without a cache it is a fresh cluster
// filled in place.
func (c *fillCache) postgres(ctx context.Context, name, dbName string, fill func(ctx context.Context, db *statedb.DB) error) (*statedbtest.Cluster, string, error) {
	if c == nil {
		cluster, err := statedbtest.NewCluster()
		if err != nil {
			return nil, "", err
		}
		u, err := fillPostgresIn(ctx, cluster, dbName, fill)
		if err != nil {
			_ = cluster.Remove()
			return nil, "", err
		}
		return cluster, u, nil
	}
	major, err := statedbtest.ServerMajor()
	if err != nil {
		return nil, "", fmt.Errorf("fill cache: %w", err)
	}
	name = "postgres" + major + "-" + name
	final := filepath.Join(c.dir, name)
	_, err = os.Stat(filepath.Join(final, "data", "PG_VERSION"))
	if c.refill && !c.made[name] || errors.Is(err, fs.ErrNotExist) {
		err = c.make(name, final, func(tmp string) error {
			cluster, err := statedbtest.NewCluster()
			if err != nil {
				return err
			}
			defer cluster.Remove()
			if _, err := fillPostgresIn(ctx, cluster, dbName, fill); err != nil {
				return err
			}
			// A clean shutdown (a checkpoint): the copy starts without recovery.
			if err := cluster.Stop(); err != nil {
				return err
			}
			if err := trimWAL(cluster.DataDir()); err != nil {
				return err
			}
			return os.Rename(cluster.DataDir(), filepath.Join(tmp, "data"))
		})
		if err != nil {
			return nil, "", err
		}
	} else if err != nil {
		return nil, "", err
	} else {
		fmt.Fprintf(c.stderr, "portalbench: fill %s from the cache (%s)\n", name, final)
	}
	t0 := time.Now()
	cluster, err := statedbtest.NewClusterFrom(filepath.Join(final, "data"))
	if err != nil {
		return nil, "", fmt.Errorf("fill cache: %s: %w", name, err)
	}
	fmt.Fprintf(c.stderr, "portalbench: fill %s copied and started in %s\n", name, time.Since(t0).Round(time.Millisecond))
	u, err := databaseURL(cluster.URL, dbName)
	if err != nil {
		_ = cluster.Remove()
		return nil, "", err
	}
	return cluster, u, nil
}

// trimWAL removes from the data directory of a cluster stopped cleanly every WAL segment but
// the one of its last checkpoint, the only one its start reads: the others are the fill's
// recycled segments (about 1 GB, max_wal_size), which every run would copy for nothing. The
// server makes new segments as it needs them.
func trimWAL(data string) error {
	controldata, err := statedbtest.Program("pg_controldata")
	if err != nil {
		return err
	}
	out, err := exec.Command(controldata, data).Output()
	if err != nil {
		return fmt.Errorf("pg_controldata: %w", err)
	}
	var redo string
	for _, line := range strings.Split(string(out), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok && name == "Latest checkpoint's REDO WAL file" {
			redo = strings.TrimSpace(value)
		}
		if name, value, ok := strings.Cut(line, ":"); ok && name == "Database cluster state" && strings.TrimSpace(value) != "shut down" {
			return fmt.Errorf("pg_controldata: the cluster is %q, not shut down", strings.TrimSpace(value))
		}
	}
	if len(redo) != 24 {
		return fmt.Errorf("pg_controldata: no REDO WAL file in %q", out)
	}
	segments, err := os.ReadDir(filepath.Join(data, "pg_wal"))
	if err != nil {
		return err
	}
	for _, e := range segments {
		if n := e.Name(); e.Type().IsRegular() && len(n) == 24 && n != redo {
			if err := os.Remove(filepath.Join(data, "pg_wal", n)); err != nil {
				return err
			}
		}
	}
	return nil
}

// fillPostgresIn makes the database dbName in cluster, fills it on one connection and returns its URL.
func fillPostgresIn(ctx context.Context, cluster *statedbtest.Cluster, dbName string, fill func(ctx context.Context, db *statedb.DB) error) (string, error) {
	admin, err := sql.Open("pgx", cluster.URL)
	if err != nil {
		return "", err
	}
	_, err = admin.ExecContext(ctx, "CREATE DATABASE "+dbName)
	admin.Close()
	if err != nil {
		return "", err
	}
	u, err := databaseURL(cluster.URL, dbName)
	if err != nil {
		return "", err
	}
	db, err := statedb.Open(ctx, statedb.Options{URL: u, MaxOpenConns: 1})
	if err != nil {
		return "", err
	}
	if err := fill(ctx, db); err != nil {
		db.Close()
		return "", fmt.Errorf("fill: %w", err)
	}
	return u, db.Close()
}

// databaseURL is the URL of the database name on the server of clusterURL.
func databaseURL(clusterURL, name string) (string, error) {
	u, err := url.Parse(clusterURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
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
