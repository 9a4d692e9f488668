package statedb

import (
	"context"
	"database/sql"
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
	opts := []goose.ProviderOption{goose.WithTableName(versionTable), goose.WithDisableGlobalRegistry(true), goose.WithAllowOutofOrder(true),
		goose.WithGoMigrations(db.goMigrations()...)}
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

// SessionChangesChannel is the PostgreSQL channel on which every change of a session_values row
// is announced, its key as the payload ("*": every row, a TRUNCATE), by the trigger of migration
// 00020, whoever makes the change: a replica, an older replica during a rollout, psql. Replicas
// that hold sessions in memory listen to it (internal/session).
const SessionChangesChannel = "portal_session_values"

// goMigrations are the migrations whose text differs by engine, so they cannot be a file of
// migrations/ (the same text on both engines).
func (db *DB) goMigrations() []*goose.Migration {
	// 00020: announce every change of session_values on PostgreSQL. SQLite needs nothing: its
	// file belongs to one process, whose sessions are written through one cache (docs/operations.md).
	up := func(ctx context.Context, tx *sql.Tx) error {
		if db.engine != Postgres {
			return nil
		}
		_, err := tx.ExecContext(ctx, `
CREATE FUNCTION portal_session_values_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('`+SessionChangesChannel+`', '*');
    ELSIF TG_OP = 'INSERT' THEN
        PERFORM pg_notify('`+SessionChangesChannel+`', NEW.key);
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('`+SessionChangesChannel+`', OLD.key);
    ELSE
        PERFORM pg_notify('`+SessionChangesChannel+`', OLD.key);
        IF NEW.key <> OLD.key THEN
            PERFORM pg_notify('`+SessionChangesChannel+`', NEW.key);
        END IF;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER session_values_changed AFTER INSERT OR UPDATE OR DELETE ON session_values
    FOR EACH ROW EXECUTE FUNCTION portal_session_values_changed();
CREATE TRIGGER session_values_truncated AFTER TRUNCATE ON session_values
    FOR EACH STATEMENT EXECUTE FUNCTION portal_session_values_changed();`)
		return err
	}
	down := func(ctx context.Context, tx *sql.Tx) error {
		if db.engine != Postgres {
			return nil
		}
		_, err := tx.ExecContext(ctx, `DROP TRIGGER session_values_truncated ON session_values;
DROP TRIGGER session_values_changed ON session_values;
DROP FUNCTION portal_session_values_changed();`)
		return err
	}
	return []*goose.Migration{goose.NewGoMigration(20, &goose.GoFunc{RunTx: up}, &goose.GoFunc{RunTx: down})}
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
