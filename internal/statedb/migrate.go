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
	return []*goose.Migration{goose.NewGoMigration(20, &goose.GoFunc{RunTx: up}, &goose.GoFunc{RunTx: down}),
		goose.NewGoMigration(21, &goose.GoFunc{RunTx: db.signedAtUp}, &goose.GoFunc{RunTx: signedAtDown}),
		goose.NewGoMigration(34, &goose.GoFunc{RunTx: db.workChangesUp}, &goose.GoFunc{RunTx: db.workChangesDown})}
}

// workChangesTables are the tables the work index's customer section reads (CustomerWork in
// internal/workindex): a statement writing any of them is announced by migration 00034.
func workChangesTables() []string { return []string{"work_rows", "work_viewers", "work_denied"} }

// workChangesUp is migration 00034 (issue 43): on PostgreSQL, every statement that writes a table
// of workChangesTables (an INSERT, UPDATE, DELETE or TRUNCATE, whoever runs it: a replica, an
// older replica during a rollout, psql) announces the table's name on WorkChangesChannel, so the
// replicas that hold the customer section in memory drop what they hold. Per statement, not per
// row: the caches drop everything at any change (a purge deletes thousands of rows in one
// statement), and PostgreSQL sends a transaction's identical notifications once. SQLite needs
// nothing: its file belongs to one process, whose writes of the index all go through one method.
func (db *DB) workChangesUp(ctx context.Context, tx *sql.Tx) error {
	if db.engine != Postgres {
		return nil
	}
	q := `CREATE FUNCTION portal_work_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('` + WorkChangesChannel + `', TG_TABLE_NAME);
    RETURN NULL;
END
$$;`
	for _, table := range workChangesTables() {
		q += `
CREATE TRIGGER ` + table + `_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ` + table + `
    FOR EACH STATEMENT EXECUTE FUNCTION portal_work_changed();`
	}
	if _, err := tx.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("statedb: migration 00034: %w", err)
	}
	return nil
}

func (db *DB) workChangesDown(ctx context.Context, tx *sql.Tx) error {
	if db.engine != Postgres {
		return nil
	}
	q := ""
	for _, table := range workChangesTables() {
		q += "DROP TRIGGER " + table + "_changed ON " + table + ";\n"
	}
	if _, err := tx.ExecContext(ctx, q+"DROP FUNCTION portal_work_changed();"); err != nil {
		return fmt.Errorf("statedb: migration 00034 down: %w", err)
	}
	return nil
}

// signedAtUp is migration 00021 (issue 39, "Facts, not sightings"): a contract's signature is a
// fact that outlives its stage. work_rows.signed_at is when the contract was signed (the v2
// signature's signedAt when the document gave it, else when the portal first saw it signed;
// 0: never seen signed), kept when the contract is archived; signed_month is its UTC month as
// yyyymm (0: never), so the per-viewer sums by month (work_viewer_signed) are kept without date
// arithmetic in SQL. work_viewer_signed holds, for each viewer, the count and value of the
// signed contracts revealed to them by month, apart by owner and mine as work_viewer_totals
// (internal/workindex/totals.go keeps it in each write's transaction). Rows signed before this
// migration take the day they entered the stage; a contract archived before it is not known to
// have been signed (signed_at 0). The month is written per engine: the only reason this is a Go
// migration.
func (db *DB) signedAtUp(ctx context.Context, tx *sql.Tx) error {
	month := `CAST(strftime('%Y%m', stage_since / 1000000, 'unixepoch') AS INTEGER)`
	if db.engine == Postgres {
		month = `CAST(to_char(to_timestamp(stage_since / 1000000) AT TIME ZONE 'UTC', 'YYYYMM') AS INTEGER)`
	}
	for _, q := range []string{
		`ALTER TABLE work_rows ADD COLUMN signed_at BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE work_rows ADD COLUMN signed_month INTEGER NOT NULL DEFAULT 0`,
		`UPDATE work_rows SET signed_at = stage_since, signed_month = ` + month + ` WHERE kind = 'contract' AND stage = 'signed' AND stage_since > 0`,
		`CREATE INDEX work_rows_signed ON work_rows (kind, signed_at, id)`,
		`CREATE TABLE work_viewer_signed (
    person      TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    month       INTEGER NOT NULL,
    owner       INTEGER NOT NULL,
    mine        INTEGER NOT NULL,
    n           BIGINT  NOT NULL DEFAULT 0,
    value_cents BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (person, kind, month, owner, mine)
)`,
		`INSERT INTO work_viewer_signed (person, kind, month, owner, mine, n, value_cents)
    SELECT o.person, o.kind, r.signed_month, o.owner, CASE WHEN r.created_by = o.person OR r.changed_by = o.person THEN 1 ELSE 0 END,
    COUNT(*), SUM(r.value_cents)
    FROM work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id
    WHERE r.signed_month > 0 AND o.seen_at >= r.facts_at
    AND NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = o.person AND d.kind = o.kind AND d.id = o.id)
    GROUP BY o.person, o.kind, r.signed_month, o.owner, CASE WHEN r.created_by = o.person OR r.changed_by = o.person THEN 1 ELSE 0 END`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("statedb: migration 00021: %w", err)
		}
	}
	return nil
}

func signedAtDown(ctx context.Context, tx *sql.Tx) error {
	for _, q := range []string{
		`DROP TABLE work_viewer_signed`,
		`DROP INDEX work_rows_signed`,
		`ALTER TABLE work_rows DROP COLUMN signed_month`,
		`ALTER TABLE work_rows DROP COLUMN signed_at`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("statedb: migration 00021 down: %w", err)
		}
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
