// Package statedbtest gives tests a fresh state database on each engine: SQLite in a temporary
// directory, and PostgreSQL in a fresh database of the cluster named by PORTAL_TEST_POSTGRES_URL
// (make unit and make e2e start a throwaway one: scripts/with-postgres.sh) or, when that is
// unset, of a throwaway cluster the test starts itself from Debian's postgresql package.
package statedbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
)

// EnvPostgresURL names a PostgreSQL server whose superuser URL tests may create databases with.
const EnvPostgresURL = "PORTAL_TEST_POSTGRES_URL"

// Each runs fn once per engine, as the subtests "sqlite" and "postgres", each on a fresh database.
func Each(t *testing.T, fn func(t *testing.T, db *statedb.DB)) {
	t.Helper()
	t.Run(string(statedb.SQLite), func(t *testing.T) { fn(t, SQLite(t)) })
	t.Run(string(statedb.Postgres), func(t *testing.T) { fn(t, Postgres(t)) })
}

// SQLite opens a fresh SQLite state database in a temporary directory, closed at the end of t.
func SQLite(t testing.TB) *statedb.DB {
	t.Helper()
	data, err := migratedSQLite()
	if err != nil {
		t.Fatalf("statedbtest: a migrated SQLite database: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, statedb.SQLiteFile), data, 0o600); err != nil {
		t.Fatalf("statedbtest: %v", err)
	}
	return open(t, statedb.Options{Dir: dir}) // Open's Migrate finds every migration applied
}

// migratedSQLite is the file of a fresh SQLite state database with every migration applied, made
// once a test process: each SQLite database starts as a copy of it. Migrating is SQL parsing
// (modernc's SQLite, instrumented under the race detector), and a handler test's portal opens up
// to six databases: measured (2026-11-29, go test -race -cpuprofile of the handlers' saved-view
// and work-list tests), migrations were 21% of the package's CPU. The migrations themselves are
// tested from an empty database in internal/statedb.
var migratedSQLite = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "statedbtest-sqlite-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	db, err := statedb.Open(ctx, statedb.Options{Dir: dir})
	if err != nil {
		return nil, err
	}
	// Everything in the one file: no write-ahead log left beside it.
	if _, err := db.SQL.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	if info, err := os.Stat(filepath.Join(dir, statedb.SQLiteFile+"-wal")); err == nil && info.Size() > 0 {
		return nil, fmt.Errorf("the write-ahead log of %s holds %d bytes after closing", dir, info.Size())
	}
	return os.ReadFile(filepath.Join(dir, statedb.SQLiteFile))
})

// Postgres opens a fresh PostgreSQL state database, closed (and dropped) at the end of t.
func Postgres(t testing.TB) *statedb.DB {
	t.Helper()
	return open(t, statedb.Options{URL: PostgresURL(t)})
}

// PostgresURL creates a fresh, empty database and returns its URL (for tests that open it more
// than once, as replicas do). It is dropped at the end of t.
func PostgresURL(t testing.TB) string {
	t.Helper()
	server := os.Getenv(EnvPostgresURL)
	if server == "" {
		server = StartCluster(t)
	}
	admin, err := sql.Open("pgx", server)
	if err != nil {
		t.Fatalf("statedbtest: %v", err)
	}
	defer admin.Close()
	name := "t_" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("statedbtest: create database on %s: %v", EnvPostgresURL, err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", server)
		if err != nil {
			return
		}
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("statedbtest: %s: %v", EnvPostgresURL, err)
	}
	u.Path = "/" + name
	return u.String()
}

// OpenURL opens the PostgreSQL state database at url (from PostgresURL) once more, with a
// connection pool of its own, as another replica would; closed at the end of t.
func OpenURL(t testing.TB, url string) *statedb.DB {
	t.Helper()
	return open(t, statedb.Options{URL: url})
}

func open(t testing.TB, opts statedb.Options) *statedb.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db, err := statedb.Open(ctx, opts)
	if err != nil {
		t.Fatalf("statedbtest: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// StartCluster starts a throwaway PostgreSQL cluster (initdb, pg_ctl start) for the rest of t
// and returns its superuser URL. As root, the server runs as the postgres user, as it must.
func StartCluster(t testing.TB) string {
	t.Helper()
	c, err := NewCluster()
	if err != nil {
		t.Fatalf("statedbtest: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	return c.URL
}

// Cluster is a throwaway PostgreSQL cluster.
type Cluster struct {
	URL  string
	dir  string
	bin  string
	port int
}

// NewCluster initialises and starts a cluster in a temporary directory on a free port.
func NewCluster() (*Cluster, error) {
	return newCluster(func(c *Cluster) error {
		if err := c.run(filepath.Join(c.bin, "initdb"), "-D", c.DataDir(), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"); err != nil {
			return fmt.Errorf("initdb: %w", err)
		}
		return nil
	})
}

// NewClusterFrom starts a cluster on a copy of the data directory data (one of a cluster that
// was stopped cleanly: Stop, then DataDir moved away), in a temporary directory on a free port.
// The bench's cached fills (bench/cmd/portalbench/fillcache.go) start their clusters so.
func NewClusterFrom(data string) (*Cluster, error) {
	return newCluster(func(c *Cluster) error {
		// cp -a keeps the files' owner (the server's user) and modes (PostgreSQL refuses a data
		// directory others can read).
		if out, err := exec.Command("cp", "-a", data, c.DataDir()).CombinedOutput(); err != nil {
			return fmt.Errorf("copy %s: %w: %s", data, err, out)
		}
		return nil
	})
}

// newCluster starts a cluster in a temporary directory (the server's user owns it) on a free
// port, on the data directory makeData puts there; on failure nothing is left behind.
func newCluster(makeData func(c *Cluster) error) (*Cluster, error) {
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "portal-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, bin: bin}
	err = c.asServerUser(nil, "chown")
	if err == nil {
		err = makeData(c)
	}
	if err == nil {
		err = c.Start()
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

// DataDir is the cluster's data directory.
func (c *Cluster) DataDir() string { return filepath.Join(c.dir, "data") }

// ServerMajor is the major version of the server the clusters run ("16"): a data directory
// starts only on its own.
func ServerMajor() (string, error) {
	bin, err := postgresBin()
	if err != nil {
		return "", err
	}
	out, err := exec.Command(filepath.Join(bin, "postgres"), "--version").Output()
	if err != nil {
		return "", fmt.Errorf("postgres --version: %w", err)
	}
	// "postgres (PostgreSQL) 16.4 (Debian 16.4-1)"
	f := strings.Fields(string(out))
	if len(f) < 3 {
		return "", fmt.Errorf("postgres --version: %q", out)
	}
	major, _, _ := strings.Cut(f[2], ".")
	return major, nil
}

// Start starts the cluster (again, after Stop or Kill: the data stays), on the port it had.
func (c *Cluster) Start() error {
	if c.port == 0 {
		port, err := freePort()
		if err != nil {
			return err
		}
		c.port = port
		c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", c.port, c.dir)
	if err := c.run(filepath.Join(c.bin, "pg_ctl"), "-D", filepath.Join(c.dir, "data"), "-l", filepath.Join(c.dir, "log"), "-w", "-t", "60", "start", "-o", opts); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		return fmt.Errorf("pg_ctl start: %w\n%s", err, log)
	}
	return nil
}

// Stop stops the cluster at once (fast shutdown: sessions are cut) and keeps its data.
func (c *Cluster) Stop() error {
	return c.run(filepath.Join(c.bin, "pg_ctl"), "-D", filepath.Join(c.dir, "data"), "-m", "fast", "-w", "stop")
}

// Remove stops the cluster and deletes its files.
func (c *Cluster) Remove() error {
	_ = c.Stop()
	return os.RemoveAll(c.dir)
}

// run runs a PostgreSQL program as the server's user.
func (c *Cluster) run(name string, args ...string) error {
	return c.asServerUser(append([]string{name}, args...), "")
}

// asServerUser runs argv as the postgres user when this process is root (initdb refuses root),
// or as this user; with special "chown" it hands the cluster's directory to that user.
func (c *Cluster) asServerUser(argv []string, special string) error {
	root := os.Geteuid() == 0
	if special == "chown" {
		if !root {
			return nil
		}
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("the postgres user is missing (apt-get install postgresql): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return os.Chown(c.dir, uid, gid)
	}
	if root {
		argv = append([]string{"runuser", "-u", "postgres", "--"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %w: %s", argv, err, out)
	}
	return nil
}

// Program is the path of one of PostgreSQL's programs (pg_dump, pg_restore, psql...), from the
// same installation as the throwaway clusters' server.
func Program(name string) (string, error) {
	bin, err := postgresBin()
	if err != nil {
		return "", err
	}
	return filepath.Join(bin, name), nil
}

// postgresBin finds the server's programs (Debian keeps them out of PATH).
func postgresBin() (string, error) {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) > 0 {
		return filepath.Dir(matches[len(matches)-1]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("PostgreSQL is not installed (apt-get install postgresql, or make deps), and %s is unset", EnvPostgresURL)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
