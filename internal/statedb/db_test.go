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
