package statedb

import (
	"context"
	"io/fs"

	"github.com/pressly/goose/v3"
)

// Migration 00021's steps, for its test in statedb_test.
var (
	SignedAtUp   = (*DB).signedAtUp
	SignedAtDown = signedAtDown
)

// ApplyMigration runs one migration's up (up) or down step on db, as Migrate's provider would
// (without its PostgreSQL lock: a test's database has one user), for a test of what an SQL
// migration does to rows written before it.
func ApplyMigration(ctx context.Context, db *DB, version int64, up bool) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	dialect := goose.DialectSQLite3
	if db.engine == Postgres {
		dialect = goose.DialectPostgres
	}
	provider, err := goose.NewProvider(dialect, db.SQL, fsys, goose.WithTableName(versionTable), goose.WithDisableGlobalRegistry(true),
		goose.WithAllowOutofOrder(true), goose.WithGoMigrations(db.goMigrations()...))
	if err != nil {
		return err
	}
	_, err = provider.ApplyVersion(ctx, version, up)
	return err
}
