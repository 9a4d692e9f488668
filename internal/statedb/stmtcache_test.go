package statedb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// openSQLite opens a fresh SQLite state database with one connection, so every statement below
// meets the same connection's cache.
func openSQLite(t *testing.T) (*DB, *sql.Conn) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, Options{Dir: t.TempDir(), MaxOpenConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return db, conn
}

// cacheOf is the statement cache of the connection under conn.
func cacheOf(t *testing.T, conn *sql.Conn) map[string]*cachedStmt {
	t.Helper()
	var stmts map[string]*cachedStmt
	if err := conn.Raw(func(dc any) error {
		c, ok := dc.(*cachingConn)
		if !ok {
			return fmt.Errorf("connection %T, want *cachingConn", dc)
		}
		stmts = c.stmts
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return stmts
}

func TestStmtCachePreparesEachQueryOnce(t *testing.T) {
	ctx := context.Background()
	_, conn := openSQLite(t)
	const q = "SELECT value FROM portal_meta WHERE name = $1"
	if _, err := conn.ExecContext(ctx, "INSERT INTO portal_meta (name, value) VALUES ($1, $2)", "a", "1"); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := conn.QueryRowContext(ctx, q, "a").Scan(&v); err != nil || v != "1" {
		t.Fatalf("first: %q, %v", v, err)
	}
	first := cacheOf(t, conn)[q]
	if first == nil {
		t.Fatal("the query was not kept prepared")
	}
	if err := conn.QueryRowContext(ctx, q, "a").Scan(&v); err != nil || v != "1" {
		t.Fatalf("second: %q, %v", v, err)
	}
	if cacheOf(t, conn)[q] != first {
		t.Fatal("the second call prepared the query again")
	}
	if err := conn.QueryRowContext(ctx, q, "missing").Scan(&v); err != sql.ErrNoRows {
		t.Fatalf("absent row: %v, want sql.ErrNoRows (the statement's bindings were not reset)", err)
	}
}

func TestStmtCacheSameQueryInsideItsOwnRows(t *testing.T) {
	ctx := context.Background()
	_, conn := openSQLite(t)
	for _, n := range []string{"a", "b", "c"} {
		if _, err := conn.ExecContext(ctx, "INSERT INTO portal_meta (name, value) VALUES ($1, $2)", n, n+n); err != nil {
			t.Fatal(err)
		}
	}
	// The outer rows hold the prepared statement; the inner calls of the same text must not reset
	// it under them.
	const q = "SELECT name, value FROM portal_meta WHERE name >= $1 AND name IN ('a', 'b', 'c') ORDER BY name"
	rows, err := conn.QueryContext(ctx, q, "a")
	if err != nil {
		t.Fatal(err)
	}
	var outer []string
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			t.Fatal(err)
		}
		outer = append(outer, name)
		inner, err := conn.QueryContext(ctx, q, name)
		if err != nil {
			t.Fatal(err)
		}
		count := 0
		for inner.Next() {
			count++
		}
		if err := inner.Close(); err != nil {
			t.Fatal(err)
		}
		if want := 3 - len(outer) + 1; count != want {
			t.Fatalf("inner query from %s: %d rows, want %d", name, count, want)
		}
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(outer, ",") != "a,b,c" {
		t.Fatalf("outer rows %v, want a,b,c (a nested call of the same query reset them)", outer)
	}
	if s := cacheOf(t, conn)[q]; s == nil || s.busy {
		t.Fatalf("statement after the rows closed: %+v, want kept and idle", s)
	}
}

func TestStmtCacheIsBounded(t *testing.T) {
	ctx := context.Background()
	_, conn := openSQLite(t)
	for i := range maxCachedStmts + 10 {
		var n int
		if err := conn.QueryRowContext(ctx, fmt.Sprintf("SELECT %d", i)).Scan(&n); err != nil || n != i {
			t.Fatalf("SELECT %d: %d, %v", i, n, err)
		}
	}
	if got := len(cacheOf(t, conn)); got > maxCachedStmts {
		t.Fatalf("%d statements kept, want at most %d", got, maxCachedStmts)
	}
}

func TestStmtCacheAfterSchemaChangeAndErrors(t *testing.T) {
	ctx := context.Background()
	_, conn := openSQLite(t)
	if _, err := conn.ExecContext(ctx, "CREATE TABLE probe (a INTEGER)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "INSERT INTO probe (a) VALUES ($1)", 1); err != nil {
		t.Fatal(err)
	}
	const q = "SELECT * FROM probe"
	cols := func() []string {
		rows, err := conn.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		c, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if got := cols(); len(got) != 1 {
		t.Fatalf("columns %v", got)
	}
	if _, err := conn.ExecContext(ctx, "ALTER TABLE probe ADD COLUMN b INTEGER"); err != nil {
		t.Fatal(err)
	}
	if got := cols(); len(got) != 2 {
		t.Fatalf("columns after ALTER TABLE %v, want a and b (a stale prepared statement)", got)
	}
	if _, err := conn.ExecContext(ctx, "SELEC nonsense"); err == nil {
		t.Fatal("a syntax error passed")
	}
	if _, err := conn.ExecContext(ctx, "INSERT INTO probe (a) VALUES ($1); INSERT INTO probe (a) VALUES ($1)", 7); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM probe WHERE a = 7").Scan(&n); err != nil || n != 2 {
		t.Fatalf("a script of two statements: %d rows, %v; want both run", n, err)
	}
}
