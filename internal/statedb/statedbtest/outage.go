package statedbtest

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cpqportal/portal/internal/statedb"
)

// Runs is how many times a heavy test runs: Full times, or Short times under go test -short.
type Runs struct{ Full, Short int }

// N is the number of runs for this go test invocation.
func (r Runs) N() int {
	if testing.Short() {
		return r.Short
	}
	return r.Full
}

// EachOutage runs body once per engine, as the subtests "sqlite" and "postgres", each with its
// runs numbered as subtests of their own, every run on a fresh database that down takes away and
// up gives back, on the same data, at whatever moments body calls them:
//   - SQLite: another connection holds the write lock (BEGIN IMMEDIATE) until up, so no write
//     passes.
//   - PostgreSQL: a cluster of the run's own (the shared one of PostgresURL cannot be stopped) is
//     stopped with a fast shutdown, which cuts every connection, and started again.
func EachOutage(t *testing.T, sqlite, postgres Runs, body func(t *testing.T, db *statedb.DB, down, up func())) {
	t.Helper()
	t.Run(string(statedb.SQLite), func(t *testing.T) {
		for run := range sqlite.N() {
			t.Run(fmt.Sprint(run), func(t *testing.T) { sqliteOutage(t, body) })
		}
	})
	t.Run(string(statedb.Postgres), func(t *testing.T) {
		for run := range postgres.N() {
			t.Run(fmt.Sprint(run), func(t *testing.T) { postgresOutage(t, body) })
		}
	})
}

func sqliteOutage(t *testing.T, body func(t *testing.T, db *statedb.DB, down, up func())) {
	dir := t.TempDir()
	db := open(t, statedb.Options{Dir: dir})
	blocker, err := sql.Open("sqlite", "file:"+filepath.Join(dir, statedb.SQLiteFile)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Close()
	var conn *sql.Conn
	body(t, db, func() {
		conn, err = blocker.Conn(context.Background())
		if err == nil {
			_, err = conn.ExecContext(context.Background(), "BEGIN IMMEDIATE")
		}
		if err != nil {
			t.Fatal(err)
		}
	}, func() {
		if _, err := conn.ExecContext(context.Background(), "COMMIT"); err != nil {
			t.Fatal(err)
		}
		_ = conn.Close()
	})
}

func postgresOutage(t *testing.T, body func(t *testing.T, db *statedb.DB, down, up func())) {
	cluster, err := NewCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Remove() })
	db := open(t, statedb.Options{URL: cluster.URL})
	body(t, db, func() {
		if err := cluster.Stop(); err != nil {
			t.Fatal(err)
		}
	}, func() {
		if err := cluster.Start(); err != nil {
			t.Fatal(err)
		}
	})
}
