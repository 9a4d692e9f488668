package session

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestSQLKV: the database kv answers as the other kvs do: set-if-absent and set-if-present,
// an expired value or member is absent (and can be created again), sets live as long as their
// last add, and the sweep deletes expired rows.
func TestSQLKV(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		clock := &testClock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
		k := newSQLKV(db, clock.Now, "t:")
		other := newSQLKV(db, clock.Now, "u:") // another namespace sees nothing of k's
		set := func(key, value string, ttl time.Duration, mode setMode) bool {
			t.Helper()
			ok, err := k.set(ctx, key, []byte(value), ttl, mode)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		get := func(key string) string {
			t.Helper()
			v, err := k.get(ctx, key)
			if errors.Is(err, errNotFound) {
				return "<absent>"
			}
			if err != nil {
				t.Fatal(err)
			}
			return string(v)
		}
		if set("a", "1", time.Minute, setIfPresent) || get("a") != "<absent>" {
			t.Fatal("set-if-present wrote an absent key")
		}
		if !set("a", "1", time.Minute, setIfAbsent) || set("a", "2", time.Minute, setIfAbsent) || get("a") != "1" {
			t.Fatalf("set-if-absent: %q", get("a"))
		}
		if !set("a", "3", time.Minute, setIfPresent) || get("a") != "3" {
			t.Fatalf("set-if-present: %q", get("a"))
		}
		if _, err := other.get(ctx, "a"); !errors.Is(err, errNotFound) {
			t.Fatalf("another namespace reads a: %v", err)
		}
		clock.now = clock.now.Add(time.Minute)
		if get("a") != "<absent>" || set("a", "4", time.Minute, setIfPresent) {
			t.Fatal("an expired value is present")
		}
		if !set("a", "5", time.Minute, setIfAbsent) || get("a") != "5" {
			t.Fatal("an expired value blocks set-if-absent")
		}
		if !set("a", "6", time.Minute, setAlways) || !set("b", "7", time.Minute, setAlways) || get("a") != "6" {
			t.Fatal("set always")
		}
		binary := []byte{0, 1, 2, 0xff, 0xfe}
		if _, err := k.set(ctx, "bin", binary, time.Minute, setAlways); err != nil {
			t.Fatal(err)
		}
		if v, err := k.get(ctx, "bin"); err != nil || !bytes.Equal(v, binary) {
			t.Fatalf("bytes read back as %v %v", v, err)
		}
		if err := k.del(ctx, "a", "b", "never"); err != nil || get("a") != "<absent>" || get("b") != "<absent>" {
			t.Fatalf("del: %v", err)
		}

		members := func(s string) []string {
			t.Helper()
			m, err := k.members(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		if err := k.addMember(ctx, "s", "x", time.Minute); err != nil {
			t.Fatal(err)
		}
		clock.now = clock.now.Add(30 * time.Second)
		if err := k.addMember(ctx, "s", "y", time.Minute); err != nil {
			t.Fatal(err)
		}
		clock.now = clock.now.Add(45 * time.Second) // x's own minute is over, the set's is not
		if got := members("s"); !slices.Equal(got, []string{"x", "y"}) {
			t.Fatalf("members %v, want x and y (an add extends the set)", got)
		}
		if err := k.removeMembers(ctx, "s", "x", "never"); err != nil {
			t.Fatal(err)
		}
		if got := members("s"); !slices.Equal(got, []string{"y"}) {
			t.Fatalf("members after remove %v", got)
		}
		clock.now = clock.now.Add(time.Minute)
		if got := members("s"); len(got) != 0 {
			t.Fatalf("members of an expired set %v", got)
		}

		// The sweep, during a write once sweepEvery has passed, deletes what expired.
		clock.now = clock.now.Add(sweepEvery)
		set("live", "1", time.Hour, setAlways)
		var values, sets int
		if err := db.SQL.QueryRow("SELECT COUNT(*) FROM session_values").Scan(&values); err != nil {
			t.Fatal(err)
		}
		if err := db.SQL.QueryRow("SELECT COUNT(*) FROM session_members").Scan(&sets); err != nil {
			t.Fatal(err)
		}
		if values != 1 || sets != 0 {
			t.Errorf("after the sweep %d values and %d members remain, want 1 and 0", values, sets)
		}
	})
}

// TestSQLStoreSurvivesRestartAndHoldsNoTokenInClear: a session saved by one store (replica) is
// loaded by another on the same database, and the database holds no token in clear.
func TestSQLStoreSurvivesRestartAndHoldsNoTokenInClear(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		key := newKey(t)
		first := newSQLStore(t, Options{Keys: []string{key}}, db)
		in := sampleSession(t, time.Now().UTC().Truncate(time.Second))
		cookies := saveCookies(t, first, nil, in)
		second := newSQLStore(t, Options{Keys: []string{key}}, db)
		got, err := Load(second, requestWith(cookies))
		if err != nil || got.AccessToken != in.AccessToken || got.ID != in.ID {
			t.Fatalf("from another store: %v, %v", got, err)
		}
		rows, err := db.SQL.Query("SELECT value FROM session_values")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var v []byte
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(v, []byte(in.RefreshToken)) || bytes.Contains(v, []byte(in.AccessToken)) {
				t.Fatal("the database holds a token in clear")
			}
		}
	})
}

// TestSQLStoreDatabaseDownIsAFailureNotASignOut: while the database does not answer, a replica
// keeps the sessions it read or wrote within the outage grace (the people signed in keep working);
// a session it never saw is a store failure (the portal answers 503), never "signed out".
func TestSQLStoreDatabaseDownIsAFailureNotASignOut(t *testing.T) {
	t.Parallel()
	db := statedbtest.SQLite(t)
	keys := []string{newKey(t)}
	store := newSQLStore(t, Options{Keys: keys}, db)
	other := newSQLStore(t, Options{Keys: keys}, db) // another replica, which never saw the session
	cookies := saveCookies(t, store, nil, sampleSession(t, time.Now()))
	_ = db.Close()
	if s, err := Load(store, requestWith(cookies)); err != nil || s == nil {
		t.Fatalf("Load on the replica that wrote the session, the database closed = %v, %v; want the session", s, err)
	}
	if _, err := Load(other, requestWith(cookies)); err == nil || errors.Is(err, ErrNoSession) {
		t.Fatalf("Load on a replica that never saw the session, the database closed = %v, want a store error", err)
	}
	if err := store.Ping(context.Background()); err == nil {
		t.Fatal("Ping of a closed database succeeded")
	}
}

// TestSQLKVRememberOnceAcrossReplicas: replicas on one PostgreSQL that see the same token id at
// the same moment agree that exactly one saw it first (a replayed jti is refused by the others).
func TestSQLKVRememberOnceAcrossReplicas(t *testing.T) {
	t.Parallel()
	url := statedbtest.PostgresURL(t)
	var stores []*ServerStore
	for range 4 {
		db, err := statedb.Open(context.Background(), statedb.Options{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		stores = append(stores, newSQLStore(t, Options{}, db))
	}
	firsts := make(chan bool, 4*8)
	var wg sync.WaitGroup
	for _, store := range stores {
		for range 8 {
			wg.Go(func() {
				first, err := store.Remember(context.Background(), "jti-42", time.Minute)
				if err != nil {
					t.Error(err)
				}
				firsts <- first
			})
		}
	}
	wg.Wait()
	close(firsts)
	n := 0
	for first := range firsts {
		if first {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d callers saw jti-42 first, want 1", n)
	}
}

// TestSQLKVOutageFallback: while the database does not answer, a replica answers what it last read
// or wrote for a key, for outageGrace, so the people signed in stay signed in; a key it never saw,
// or an answer past the grace, is the database's failure.
func TestSQLKVOutageFallback(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		clock := &testClock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
		k := newSQLKV(db, clock.Now, "t:")
		if _, err := k.set(ctx, "session", []byte("sealed"), time.Hour, setIfAbsent); err != nil {
			t.Fatal(err)
		}
		if _, err := k.get(ctx, "revoked"); !errors.Is(err, errNotFound) {
			t.Fatal(err)
		}
		_ = db.Close() // the database stops answering
		if v, err := k.get(ctx, "session"); err != nil || string(v) != "sealed" {
			t.Fatalf("a session written a moment ago, during the outage: %q, %v", v, err)
		}
		if _, err := k.get(ctx, "revoked"); !errors.Is(err, errNotFound) {
			t.Fatalf("a key known absent, during the outage: %v", err)
		}
		if _, err := k.get(ctx, "never-seen"); err == nil || errors.Is(err, errNotFound) {
			t.Fatalf("a key this replica never saw, during the outage: %v; want the database's failure", err)
		}
		clock.now = clock.now.Add(outageGrace)
		if _, err := k.get(ctx, "session"); err == nil || errors.Is(err, errNotFound) {
			t.Fatalf("past the grace: %v; want the database's failure", err)
		}
	})
}
