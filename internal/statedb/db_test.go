package statedb_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

func TestOpenAppliesTheMigrations(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		v, err := db.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v < 1 {
			t.Fatalf("schema version %d, want the migrations applied", v)
		}
		if _, err := db.SQL.ExecContext(ctx, "INSERT INTO portal_meta (name, value) VALUES ($1, $2)", "probe", "x"); err != nil {
			t.Fatal(err)
		}
		// Applying again changes nothing.
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		var value string
		if err := db.SQL.QueryRowContext(ctx, "SELECT value FROM portal_meta WHERE name = $1", "probe").Scan(&value); err != nil || value != "x" {
			t.Fatalf("after a second Migrate: %q, %v", value, err)
		}
	})
}

func TestTheDatabaseClock(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		var now int64
		if err := db.SQL.QueryRowContext(context.Background(), "SELECT "+db.NowMicros()).Scan(&now); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(statedb.Time(now)); d < -time.Minute || d > time.Minute {
			t.Fatalf("database clock %v is %v away from ours", statedb.Time(now), d)
		}
	})
}

// Replicas that start together on one PostgreSQL apply each migration once.
func TestReplicasStartingTogetherMigrateOnce(t *testing.T) {
	url := statedbtest.PostgresURL(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	dbs := make([]*statedb.DB, 4)
	for i := range dbs {
		wg.Go(func() {
			dbs[i], errs[i] = statedb.Open(context.Background(), statedb.Options{URL: url})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		defer dbs[i].Close()
	}
	var applied, distinct int
	if err := dbs[0].SQL.QueryRow("SELECT COUNT(*), COUNT(DISTINCT version_id) FROM portal_schema_version WHERE version_id > 0").Scan(&applied, &distinct); err != nil {
		t.Fatal(err)
	}
	if applied != distinct || applied == 0 {
		t.Fatalf("%d migrations recorded for %d versions: some applied twice", applied, distinct)
	}
}

func TestEscapeLike(t *testing.T) {
	if got := statedb.EscapeLike(`50%_a\b`); got != `50\%\_a\\b` {
		t.Fatalf("EscapeLike = %q", got)
	}
}

// Migration 00020: every change of a session_values row is announced on SessionChangesChannel,
// whoever makes it (the replicas' session caches listen), a TRUNCATE as "*".
func TestSessionChangesAreAnnounced(t *testing.T) {
	t.Parallel()
	db := statedbtest.Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := db.DedicatedConn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "LISTEN "+statedb.SessionChangesChannel); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct{ sql, want string }{
		{"INSERT INTO session_values (key, value, expires_at) VALUES ('k1', 'v', 1)", "k1"},
		{"UPDATE session_values SET value = 'w' WHERE key = 'k1'", "k1"},
		{"DELETE FROM session_values WHERE key = 'k1'", "k1"},
		{"TRUNCATE session_values", "*"},
	} {
		if _, err := db.SQL.ExecContext(ctx, step.sql); err != nil {
			t.Fatal(err)
		}
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			t.Fatalf("%s: %v", step.sql, err)
		}
		if n.Channel != statedb.SessionChangesChannel || n.Payload != step.want {
			t.Fatalf("%s announced %s %q, want %q", step.sql, n.Channel, n.Payload, step.want)
		}
	}
	if _, err := statedbtest.SQLite(t).DedicatedConn(ctx); err == nil {
		t.Fatal("a dedicated connection to SQLite")
	}
}

// Migration 00034: every statement that writes a table the work index's customer section reads
// is announced on WorkChangesChannel with the table's name, whoever runs it (the replicas'
// customer section caches listen), a TRUNCATE and a statement that changes no row included.
func TestWorkChangesAreAnnounced(t *testing.T) {
	t.Parallel()
	db := statedbtest.Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := db.DedicatedConn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "LISTEN "+statedb.WorkChangesChannel); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct{ sql, want string }{
		{`INSERT INTO work_rows (kind, id, quote_id, cpq_id, customer_id, customer, customer_folded, configurator, contract_id,
			contract_number, stage, one_off_cents, monthly_cents, created_by, created_by_name, changed_by, changed_by_name, changed_at, seen_at)
			VALUES ('quote', 1, 1, 1, 7, 'Acme', 'acme', '', 0, '', 'draft', 0, 0, 'p', 'P', 'p', 'P', 1, 1)`, "work_rows"},
		{"UPDATE work_rows SET stage = 'sent' WHERE id = 1", "work_rows"},
		{"INSERT INTO work_viewers (person, kind, id, owner, seen_at) VALUES ('p', 'quote', 1, 1, 1)", "work_viewers"},
		{"DELETE FROM work_viewers WHERE person = 'p'", "work_viewers"},
		{"INSERT INTO work_denied (person, kind, id) VALUES ('p', 'quote', 1)", "work_denied"},
		{"DELETE FROM work_denied WHERE person = 'nobody'", "work_denied"},
		{"TRUNCATE work_denied", "work_denied"},
		{"DELETE FROM work_rows", "work_rows"},
	} {
		if _, err := db.SQL.ExecContext(ctx, step.sql); err != nil {
			t.Fatalf("%s: %v", step.sql, err)
		}
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			t.Fatalf("%s: %v", step.sql, err)
		}
		if n.Channel != statedb.WorkChangesChannel || n.Payload != step.want {
			t.Fatalf("%s announced %s %q, want %q", step.sql, n.Channel, n.Payload, step.want)
		}
	}
	// A table the section does not read is not announced.
	if _, err := db.SQL.ExecContext(ctx, "INSERT INTO work_configurators (cpq_id, name) VALUES (1, 'x')"); err != nil {
		t.Fatal(err)
	}
	waitCtx, cancelWait := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelWait()
	if n, err := conn.WaitForNotification(waitCtx); err == nil {
		t.Fatalf("a write of work_configurators announced %s %q", n.Channel, n.Payload)
	}
}
