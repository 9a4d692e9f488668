package statedb

import (
	"context"
	"database/sql/driver"
	"errors"

	"modernc.org/sqlite"
)

// maxCachedStmts bounds the statements one SQLite connection keeps prepared. The portal's
// queries are a few dozen texts; those with a variable IN list make more, and when the cache is
// full the idle ones are dropped and prepared again as they come.
const maxCachedStmts = 256

// sqliteConnector opens SQLite connections that keep their statements prepared
// (cachingConn). modernc's driver parses and plans a query's text on every call of
// database/sql's QueryContext and ExecContext: under the overhead bench that was about 40 % of
// the customer page's CPU (docs/performance.md). PostgreSQL needs no such layer: pgx caches
// prepared statements per connection itself.
type sqliteConnector struct {
	dsn    string
	driver *sqlite.Driver
}

func newSQLiteConnector(dsn string) *sqliteConnector {
	return &sqliteConnector{dsn: dsn, driver: &sqlite.Driver{}}
}

// Connect implements driver.Connector.
func (c *sqliteConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.driver.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return newCachingConn(conn)
}

// Driver implements driver.Connector.
func (c *sqliteConnector) Driver() driver.Driver { return c.driver }

// sqliteConn is what database/sql uses of a modernc connection.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// cachingConn is one SQLite connection whose queries and statements run on statements prepared
// once per text. database/sql uses a connection from one goroutine at a time, so the cache
// needs no lock; a statement whose rows are still open (a query inside the loop over another's
// rows, same text) is busy, and the second call runs unprepared as before.
type cachingConn struct {
	sqliteConn
	stmts map[string]*cachedStmt
}

type cachedStmt struct {
	stmt interface {
		driver.Stmt
		driver.StmtExecContext
		driver.StmtQueryContext
	}
	busy bool // its rows are open
}

var (
	_ driver.Connector = (*sqliteConnector)(nil)
	_ sqliteConn       = (*cachingConn)(nil)
)

func newCachingConn(conn driver.Conn) (*cachingConn, error) {
	c, ok := conn.(sqliteConn)
	if !ok {
		_ = conn.Close()
		return nil, errors.New("statedb: the SQLite driver's connection lacks an interface database/sql uses")
	}
	return &cachingConn{sqliteConn: c, stmts: map[string]*cachedStmt{}}, nil
}

// prepared returns the idle prepared statement of query, preparing it when needed; nil when it is
// busy or cannot be kept (the caller then runs the query unprepared, which reports any error).
func (c *cachingConn) prepared(ctx context.Context, query string) *cachedStmt {
	if s, ok := c.stmts[query]; ok {
		if s.busy {
			return nil
		}
		return s
	}
	if len(c.stmts) >= maxCachedStmts {
		for q, s := range c.stmts {
			if !s.busy {
				_ = s.stmt.Close()
				delete(c.stmts, q)
			}
		}
	}
	ds, err := c.sqliteConn.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	stmt, ok := ds.(interface {
		driver.Stmt
		driver.StmtExecContext
		driver.StmtQueryContext
	})
	if !ok {
		_ = ds.Close()
		return nil
	}
	s := &cachedStmt{stmt: stmt}
	c.stmts[query] = s
	return s
}

// ExecContext implements driver.ExecerContext on the prepared statement.
func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s := c.prepared(ctx, query)
	if s == nil {
		return c.sqliteConn.ExecContext(ctx, query, args)
	}
	return s.stmt.ExecContext(ctx, args)
}

// QueryContext implements driver.QueryerContext on the prepared statement, busy until its rows
// are closed.
func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s := c.prepared(ctx, query)
	if s == nil {
		return c.sqliteConn.QueryContext(ctx, query, args)
	}
	rows, err := s.stmt.QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	s.busy = true
	return &cachedRows{Rows: rows, stmt: s}, nil
}

// Close finalizes the prepared statements, then closes the connection.
func (c *cachingConn) Close() error {
	for q, s := range c.stmts {
		_ = s.stmt.Close()
		delete(c.stmts, q)
	}
	return c.sqliteConn.Close()
}

// cachedRows frees its statement for the next query when closed.
type cachedRows struct {
	driver.Rows
	stmt *cachedStmt
}

func (r *cachedRows) Close() error {
	err := r.Rows.Close()
	r.stmt.busy = false
	return err
}
