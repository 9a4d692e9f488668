package statedb

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/*.sql
var migrations embed.FS

// versionTable is goose's record of the applied migrations.
const versionTable = "portal_schema_version"

// Migrate applies the migrations not applied yet. On PostgreSQL it holds an advisory lock while
// it does, so replicas that start together apply each migration once (the others wait, then find
// nothing pending); on SQLite a migration's transaction takes the file's write lock.
func (db *DB) Migrate(ctx context.Context) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("statedb: migrations: %w", err)
	}
	dialect := goose.DialectSQLite3
	// Out of order: a database that applied a later migration first (a development build between
	// two merges) still gets the earlier one rather than refusing to start.
	opts := []goose.ProviderOption{goose.WithTableName(versionTable), goose.WithDisableGlobalRegistry(true), goose.WithAllowOutofOrder(true)}
	if db.engine == Postgres {
		dialect = goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return fmt.Errorf("statedb: migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	provider, err := goose.NewProvider(dialect, db.SQL, fsys, opts...)
	if err != nil {
		return fmt.Errorf("statedb: migrations: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("statedb: applying migrations to %s: %w", db, err)
	}
	return nil
}

// SchemaVersion is the last migration applied.
func (db *DB) SchemaVersion(ctx context.Context) (int64, error) {
	var v int64
	err := db.SQL.QueryRowContext(ctx, "SELECT COALESCE(MAX(version_id), 0) FROM "+versionTable+" WHERE is_applied").Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("statedb: schema version: %w", err)
	}
	return v, nil
}
