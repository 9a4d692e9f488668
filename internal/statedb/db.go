// Package statedb is the portal's own state in one SQL database: the work index, the people
// directory, recent items, batch jobs and their lines, revoked token ids and server-side sessions.
// It owns no business data (the v2 API does); what it keeps is state and read models.
//
// Two engines run the same schema and the same queries: SQLite, a file in PORTAL_DATA_DIR (the
// embedded default: a pure-Go driver, so the binary stays static, no server to install), and
// PostgreSQL when PORTAL_DATABASE_URL is set (several replicas share it). Queries use $1-style
// placeholders, which both drivers accept. Times are stored as unix microseconds (BIGINT), so
// both engines compare and index them the same way and no driver's time format is involved.
//
// The schema is the versioned migrations in migrations/, embedded in the binary and applied at
// start by goose; on PostgreSQL an advisory lock makes replicas that start together apply them
// once (Migrate).
package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"
)

// Engine names the database behind a DB.
type Engine string

// The engines.
const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

// DB is the state database.
type DB struct {
	// SQL is the connection pool; every package's queries run on it.
	SQL    *sql.DB
	engine Engine
	// where names the database for messages (a path, or host/database without credentials).
	where string
	// url is the PostgreSQL URL, for connections outside the pool (DedicatedConn).
	url string

	mu sync.Mutex
	// shared is what every user of this database in the process shares (Shared).
	shared map[string]any
	closed bool
}

// Engine says which engine this is.
func (db *DB) Engine() Engine { return db.engine }

// String names the database without credentials.
func (db *DB) String() string { return string(db.engine) + " " + db.where }

// Options say which database to open.
type Options struct {
	// URL is a PostgreSQL URL (postgres:// or postgresql://); empty: SQLite in Dir.
	URL string
	// Dir is the directory of the SQLite file (portal.sqlite); created 0700 when missing.
	Dir string
	// MaxOpenConns bounds the pool (default DefaultPostgresMaxOpenConns on PostgreSQL, 8 on SQLite).
	MaxOpenConns int
}

// DefaultPostgresMaxOpenConns is a replica's pool on PostgreSQL unless Options.MaxOpenConns says
// otherwise: the server's max_connections must cover it times the replicas (docs/operations.md,
// "Connections").
const DefaultPostgresMaxOpenConns = 16

// DedicatedConnsPerReplica is how many connections a replica opens beside its pool
// (DedicatedConn: the listener of Changes, which the session cache and the work index's customer
// section share).
const DedicatedConnsPerReplica = 1

// SQLiteFile is the name of the SQLite database in Options.Dir.
const SQLiteFile = "portal.sqlite"

// Open opens the database, checks that it answers and applies the migrations.
func Open(ctx context.Context, opts Options) (*DB, error) {
	db, err := open(opts)
	if err != nil {
		return nil, err
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.SQL.PingContext(pingCtx); err != nil {
		_ = db.SQL.Close()
		return nil, fmt.Errorf("statedb: %s does not answer: %w", db, err)
	}
	if err := db.Migrate(ctx); err != nil {
		_ = db.SQL.Close()
		return nil, err
	}
	return db, nil
}

func open(opts Options) (*DB, error) {
	if opts.URL != "" {
		u, err := url.Parse(opts.URL)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return nil, errors.New("statedb: the database URL must be postgres://user:password@host:port/database")
		}
		pool, err := sql.Open("pgx", opts.URL)
		if err != nil {
			return nil, fmt.Errorf("statedb: open postgres: %w", err)
		}
		pool.SetMaxOpenConns(cmpOr(opts.MaxOpenConns, DefaultPostgresMaxOpenConns))
		pool.SetMaxIdleConns(cmpOr(opts.MaxOpenConns, DefaultPostgresMaxOpenConns))
		pool.SetConnMaxIdleTime(5 * time.Minute)
		return &DB{SQL: pool, engine: Postgres, where: u.Host + u.Path, url: opts.URL}, nil
	}
	if opts.Dir == "" {
		return nil, errors.New("statedb: neither a database URL nor a data directory")
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("statedb: %w", err)
	}
	path := filepath.Join(opts.Dir, SQLiteFile)
	pool := sql.OpenDB(newSQLiteConnector(sqliteDSN(path)))
	pool.SetMaxOpenConns(cmpOr(opts.MaxOpenConns, 8))
	pool.SetMaxIdleConns(cmpOr(opts.MaxOpenConns, 8))
	return &DB{SQL: pool, engine: SQLite, where: path}, nil
}

// sqliteDSN sets, on every connection, what the portal relies on (modernc's defaults differ from
// other drivers': nothing is left to them):
//   - WAL: readers never wait for the writer, and a list page never waits behind a sighting;
//   - synchronous FULL: a commit is on disk before it returns, so a batch line marked in flight
//     is durably marked before its call is sent, even across a power loss (docs/operations.md);
//   - busy_timeout: a writer waits its turn (one writer at a time) instead of failing;
//   - _txlock=immediate: a transaction takes the write lock at BEGIN, so two read-then-write
//     transactions never deadlock on the upgrade;
//   - foreign keys on.
func sqliteDSN(path string) string {
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)", "foreign_keys(1)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// Close closes what Shared made (those that are an io.Closer), then the pool.
func (db *DB) Close() error {
	db.mu.Lock()
	shared := db.shared
	db.shared, db.closed = nil, true
	db.mu.Unlock()
	var errs []error
	for _, v := range shared {
		if c, ok := v.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	errs = append(errs, db.SQL.Close())
	return errors.Join(errs...)
}

// Shared returns the value kept under name for this database, made by make on the first call:
// what every user of one database in this process must share rather than hold one each (the
// session package's cache of sessions and its listener: two stores on one SQLite file must see
// each other's writes at once). A value that is an io.Closer is closed by Close; one made after
// Close is closed at once. make runs under the database's lock: it must not call Shared (nor
// Changes, which does).
func (db *DB) Shared(name string, make func() any) any {
	db.mu.Lock()
	defer db.mu.Unlock()
	if v, ok := db.shared[name]; ok {
		return v
	}
	v := make()
	if db.closed {
		if c, ok := v.(io.Closer); ok {
			_ = c.Close()
		}
		return v
	}
	if db.shared == nil {
		db.shared = map[string]any{}
	}
	db.shared[name] = v
	return v
}

// DedicatedConn opens a PostgreSQL connection outside the pool, for a session-long purpose the
// pool cannot serve (LISTEN: a pooled connection goes back to the pool between queries). The
// caller closes it. On SQLite it fails.
func (db *DB) DedicatedConn(ctx context.Context) (*pgx.Conn, error) {
	if db.engine != Postgres {
		return nil, errors.New("statedb: a dedicated connection needs PostgreSQL")
	}
	conn, err := pgx.Connect(ctx, db.url)
	if err != nil {
		return nil, fmt.Errorf("statedb: connect to %s: %w", db, err)
	}
	return conn, nil
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.SQL.PingContext(ctx); err != nil {
		return fmt.Errorf("statedb: %s: %w", db, err)
	}
	return nil
}

// NowMicros is an SQL expression of the database's clock in unix microseconds. Leases are
// compared on it, so replicas whose clocks disagree still agree on who holds a lease.
func (db *DB) NowMicros() string {
	if db.engine == Postgres {
		return "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)"
	}
	return "CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)"
}

// ForUpdate is the clause that locks the rows a read-then-write transaction reads: " FOR UPDATE"
// on PostgreSQL, nothing on SQLite, whose transaction took the database's write lock at BEGIN
// (_txlock=immediate) already.
func (db *DB) ForUpdate() string {
	if db.engine == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// LockKey serialises the transactions that lock the same key until tx ends: a transaction
// advisory lock on PostgreSQL; nothing to do on SQLite, whose transaction holds the database's
// write lock already. Two requests checking one person's quota at once cannot both pass.
func (db *DB) LockKey(ctx context.Context, tx *sql.Tx, key string) error {
	if db.engine != Postgres {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, key); err != nil {
		return fmt.Errorf("statedb: lock %q: %w", key, err)
	}
	return nil
}

// ReadTx runs fn in a read-only transaction that sees one consistent state: a repeatable-read
// snapshot on PostgreSQL; on SQLite a deferred read transaction (the driver begins read-only ones
// without the write lock), which never waits for the writer under WAL. fn's error is returned as is.
func (db *DB) ReadTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	isolation := sql.LevelDefault
	if db.engine == Postgres {
		isolation = sql.LevelRepeatableRead
	}
	tx, err := db.SQL.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: isolation})
	if err != nil {
		return fmt.Errorf("statedb: begin a read: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	return fn(tx)
}

// Tx runs fn in a transaction, committed when fn returns nil and rolled back otherwise.
func (db *DB) Tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("statedb: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("statedb: commit: %w", err)
	}
	return nil
}

// Micros is t in unix microseconds (0 for the zero time), as times are stored.
func Micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// Time is the time of stored unix microseconds (the zero time for 0), in UTC.
func Time(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

// EscapeLike escapes s for a LIKE pattern with ESCAPE '\'.
func EscapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
