package session

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// twoReplicas returns two stores with the same keys on one database: on PostgreSQL each with a
// connection pool (and cache, and listener) of its own, as two processes; on SQLite two stores of
// one process on one file (its only use: the file belongs to one process). prepare, when set, runs
// on replica A's database before its store is made.
func twoReplicas(t *testing.T, engine statedb.Engine, prepare func(db *statedb.DB)) (a, b *ServerStore, dbA, dbB *statedb.DB) {
	t.Helper()
	keys := []string{newKey(t)}
	if engine == statedb.Postgres {
		url := statedbtest.PostgresURL(t)
		dbA, dbB = statedbtest.OpenURL(t, url), statedbtest.OpenURL(t, url)
	} else {
		dbA = statedbtest.SQLite(t)
		dbB = dbA
	}
	if prepare != nil {
		prepare(dbA)
	}
	return newSQLStore(t, Options{Keys: keys}, dbA), newSQLStore(t, Options{Keys: keys}, dbB), dbA, dbB
}

func cacheOfStore(store *ServerStore) *valueCache { return store.kv.(*sqlKV).cache }

// loadFromCache loads the request's session until a load is answered by the cache (on PostgreSQL
// the first heartbeat must come back first), and fails the test if none is within 10 s.
func loadFromCache(t *testing.T, store *ServerStore, req *http.Request) *Session {
	t.Helper()
	c := cacheOfStore(store)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		hits := c.hits.Load()
		s, err := Load(store, req)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if c.hits.Load() > hits {
			return s
		}
		time.Sleep(time.Millisecond) // the listener's heartbeat is on its way: poll again
	}
	t.Fatal("no Load was answered from the cache within 10 s")
	return nil
}

func eachEngine(t *testing.T, fn func(t *testing.T, engine statedb.Engine)) {
	for _, engine := range []statedb.Engine{statedb.SQLite, statedb.Postgres} {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			fn(t, engine)
		})
	}
}

// A signed-in request reads the session from the cache, not the database: the second load of a
// session is answered without a query (issue 43).
func TestSessionCacheAnswersWithoutTheDatabase(t *testing.T) {
	eachEngine(t, func(t *testing.T, engine statedb.Engine) {
		a, _, dbA, _ := twoReplicas(t, engine, nil)
		s := sampleSession(t, time.Now())
		cookies := saveCookies(t, a, nil, s)
		got := loadFromCache(t, a, requestWith(cookies))
		if got.AccessToken != s.AccessToken {
			t.Fatal("the cache answered another session")
		}
		// The row is gone behind the store's back (no sqlKV wrote): an answer now can only come
		// from memory. (On SQLite nothing but a sqlKV writes while the portal runs.)
		if _, err := dbA.SQL.Exec("UPDATE session_values SET value = $1", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if engine == statedb.SQLite {
			if again, err := Load(a, requestWith(cookies)); err != nil || again.AccessToken != s.AccessToken {
				t.Fatalf("a second load read the database: %v", err)
			}
		}
	})
}

// Sign-out, revocation from the sessions page, "sign out everywhere" and back-channel logout on
// replica B: the very next request on replica A, which held the session in memory, is refused.
func TestSessionCacheSignOutOnAnotherReplicaIsRefusedAtOnce(t *testing.T) {
	ends := map[string]func(t *testing.T, b *ServerStore, s *Session, req *http.Request){
		"sign-out": func(t *testing.T, b *ServerStore, _ *Session, req *http.Request) {
			if err := Delete(b, httptest.NewRecorder(), req); err != nil {
				t.Fatal(err)
			}
		},
		"revoke": func(t *testing.T, b *ServerStore, s *Session, _ *http.Request) {
			if err := b.Revoke(context.Background(), s.Subject, s.ID); err != nil {
				t.Fatal(err)
			}
		},
		"sign out everywhere": func(t *testing.T, b *ServerStore, s *Session, _ *http.Request) {
			if err := b.RevokeSubject(context.Background(), s.Subject, ""); err != nil {
				t.Fatal(err)
			}
		},
		"back-channel logout": func(t *testing.T, b *ServerStore, s *Session, _ *http.Request) {
			if err := b.RevokeProviderSession(context.Background(), s.Subject, s.ProviderSID); err != nil {
				t.Fatal(err)
			}
		},
	}
	eachEngine(t, func(t *testing.T, engine statedb.Engine) {
		a, b, _, _ := twoReplicas(t, engine, nil)
		for name, end := range ends {
			s := sampleSession(t, time.Now())
			s.ProviderSID = "op-" + name
			cookies := saveCookies(t, a, nil, s)
			loadFromCache(t, a, requestWith(cookies))
			end(t, b, s, requestWith(cookies))
			if _, err := Load(a, requestWith(cookies)); !errors.Is(err, ErrNoSession) {
				t.Fatalf("%s on replica B, then a request on replica A: %v, want ErrNoSession", name, err)
			}
		}
	})
}

// A session saved on replica B (a token refresh) is what replica A serves next, never its own
// older copy: A's copy would give back a refresh token the provider already retired.
func TestSessionCacheRefreshOnAnotherReplicaIsServedAtOnce(t *testing.T) {
	eachEngine(t, func(t *testing.T, engine statedb.Engine) {
		a, b, _, _ := twoReplicas(t, engine, nil)
		s := sampleSession(t, time.Now())
		cookies := saveCookies(t, a, nil, s)
		for range 3 {
			loadFromCache(t, a, requestWith(cookies))
			onB, err := Load(b, requestWith(cookies))
			if err != nil {
				t.Fatal(err)
			}
			onB.AccessToken, onB.RefreshToken = fakeJWT(t, 900), randomBase64URL(t, 43)
			saveCookies(t, b, requestWith(cookies), onB)
			got, err := Load(a, requestWith(cookies))
			if err != nil {
				t.Fatal(err)
			}
			if got.AccessToken != onB.AccessToken || got.RefreshToken != onB.RefreshToken {
				t.Fatal("replica A served its own copy after replica B refreshed the session")
			}
		}
	})
}

// The cookie store's revocation list is cached too: a cookie revoked on replica B is refused by
// replica A at its next request.
func TestSessionCacheCookieRevocationOnAnotherReplica(t *testing.T) {
	eachEngine(t, func(t *testing.T, engine statedb.Engine) {
		var dbA, dbB *statedb.DB
		if engine == statedb.Postgres {
			url := statedbtest.PostgresURL(t)
			dbA, dbB = statedbtest.OpenURL(t, url), statedbtest.OpenURL(t, url)
		} else {
			dbA = statedbtest.SQLite(t)
			dbB = dbA
		}
		opts := Options{Keys: []string{newKey(t)}}
		a, err := NewCookieStore(opts, CookieOptions{RevocationDB: dbA})
		if err != nil {
			t.Fatal(err)
		}
		b, err := NewCookieStore(opts, CookieOptions{RevocationDB: dbB})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = a.Close(), b.Close() })
		s := sampleSession(t, time.Now())
		cookies := saveCookies(t, a, nil, s)
		c := a.revocations.(*sqlKV).cache
		deadline := time.Now().Add(10 * time.Second)
		for hits := c.hits.Load(); c.hits.Load() == hits; {
			if _, err := Load(a, requestWith(cookies)); err != nil {
				t.Fatal(err)
			}
			if time.Now().After(deadline) {
				t.Fatal("the revocation check was never answered from the cache")
			}
		}
		loaded, err := Load(b, requestWith(cookies))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Revoke(context.Background(), loaded.Subject, loaded.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(a, requestWith(cookies)); !errors.Is(err, ErrNoSession) {
			t.Fatalf("a cookie revoked on replica B, on replica A: %v, want ErrNoSession", err)
		}
	})
}

// Rows changed by hand in PostgreSQL (psql: the flush of docs/operations.md after a leaked key)
// are announced by the trigger too: the replicas drop what they hold.
func TestSessionCacheFlushByHandReachesTheReplicas(t *testing.T) {
	t.Parallel()
	for _, flush := range []string{"DELETE FROM session_values", "TRUNCATE session_values"} {
		a, _, _, dbB := twoReplicas(t, statedb.Postgres, nil)
		cookies := saveCookies(t, a, nil, sampleSession(t, time.Now()))
		loadFromCache(t, a, requestWith(cookies))
		if _, err := dbB.SQL.Exec(flush); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second) // well within maxEntryAge
		for {
			_, err := Load(a, requestWith(cookies))
			if errors.Is(err, ErrNoSession) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: replica A still answers the session (%v)", flush, err)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// connectGate holds the listener's reconnections while closed.
type connectGate struct {
	mu   sync.Mutex
	held chan struct{}
}

func (g *connectGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held = make(chan struct{})
}

func (g *connectGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held != nil {
		close(g.held)
		g.held = nil
	}
}

func (g *connectGate) wait(ctx context.Context) error {
	g.mu.Lock()
	held := g.held
	g.mu.Unlock()
	if held == nil {
		return nil
	}
	select {
	case <-held:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Replica A's listener connection is killed (pg_terminate_backend): A reads every session from the
// database until its listener is back, so it never serves a session deleted meanwhile, neither one
// deleted the instant the listener died (before A noticed) nor one deleted without any notice.
func TestSessionCacheListenerKilledFallsBackToTheDatabase(t *testing.T) {
	t.Parallel()
	gate := &connectGate{}
	t.Cleanup(gate.release)
	var cache *valueCache
	a, b, _, dbB := twoReplicas(t, statedb.Postgres, func(db *statedb.DB) {
		cache = db.Shared(sharedCacheName, func() any {
			// A listener of the cache's own, whose reconnections the gate holds.
			changes := statedb.NewChanges(func(ctx context.Context) (*pgx.Conn, error) {
				if err := gate.wait(ctx); err != nil {
					return nil, err
				}
				return db.DedicatedConn(ctx)
			}, statedb.SessionChangesChannel)
			t.Cleanup(func() { _ = changes.Close() })
			c := newValueCache(true)
			c.watch(changes)
			return c
		}).(*valueCache)
	})
	first := saveCookies(t, a, nil, sampleSession(t, time.Now()))
	second := saveCookies(t, a, nil, sampleSession(t, time.Now()))
	loadFromCache(t, a, requestWith(first))
	loadFromCache(t, a, requestWith(second))

	deadline := time.Now().Add(10 * time.Second)
	pid := cache.changes.ListenerPID()
	for ; pid == 0; pid = cache.changes.ListenerPID() {
		if time.Now().After(deadline) {
			t.Fatal("no listener")
		}
		time.Sleep(time.Millisecond)
	}
	gate.hold()
	if _, err := dbB.SQL.Exec("SELECT pg_terminate_backend($1)", int64(pid)); err != nil {
		t.Fatal(err)
	}
	// Signed out on B the instant the listener died, before A may have noticed.
	if err := Delete(b, httptest.NewRecorder(), requestWith(first)); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(a, requestWith(first)); !errors.Is(err, ErrNoSession) {
		t.Fatalf("a session signed out on B as A's listener died: %v, want ErrNoSession", err)
	}

	// While the listener is down, every load reads the database.
	deadline = time.Now().Add(10 * time.Second)
	for cache.changes.ListenerPID() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the listener did not notice its connection was killed")
		}
		time.Sleep(time.Millisecond)
	}
	hits := cache.hits.Load()
	for range 5 {
		if _, err := Load(a, requestWith(second)); err != nil {
			t.Fatal(err)
		}
	}
	if cache.hits.Load() != hits {
		t.Fatal("the cache answered while its listener was down")
	}
	// Deleted without settle's wait (as psql would): only a database read can know.
	if _, err := dbB.SQL.Exec("DELETE FROM session_values"); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(a, requestWith(second)); !errors.Is(err, ErrNoSession) {
		t.Fatalf("a session deleted while A's listener was down: %v, want ErrNoSession", err)
	}

	// The listener back, the cache answers again.
	gate.release()
	third := saveCookies(t, a, nil, sampleSession(t, time.Now()))
	loadFromCache(t, a, requestWith(third))
	if _, err := Load(a, requestWith(second)); !errors.Is(err, ErrNoSession) {
		t.Fatalf("after the listener came back: %v, want ErrNoSession", err)
	}
}

// A row read before a key was dropped is not kept after the drop: the read may predate the
// change that dropped it, and keeping it would serve the old row until maxEntryAge.
func TestSessionCacheKeepsNoReadOlderThanADrop(t *testing.T) {
	t.Parallel()
	c := newValueCache(false)
	gen := c.generation() // a read starts
	c.drop("server:session:x")
	c.keep(gen, "server:session:x", []byte("old"), noRow)
	if _, ok := c.lookup("server:session:x", 0); ok {
		t.Fatal("a read that began before the drop was kept")
	}
	gen = c.generation()
	c.keep(gen, "server:session:x", []byte("new"), noRow)
	if v, ok := c.lookup("server:session:x", 0); !ok || string(v) != "new" {
		t.Fatalf("a read after the drop: %q, %v", v, ok)
	}
	c.keep(c.generation(), "server:session:y", []byte("v"), 10)
	if v, ok := c.lookup("server:session:y", 10); !ok || v != nil {
		t.Fatalf("a row past its expires_at: %q, %v; want no row", v, ok)
	}
}
