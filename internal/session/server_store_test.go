package session

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gorilla/sessions"

	"github.com/cpqportal/portal/internal/session/redistest"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// serverStores builds each server-side store (file in a temporary directory, redis on a real
// redis-server, the state database on SQLite and on PostgreSQL) with opts.
func serverStores(t *testing.T) map[string]func(t *testing.T, opts Options) *ServerStore {
	addr := redistest.Start(t)
	return map[string]func(t *testing.T, opts Options) *ServerStore{
		"file": func(t *testing.T, opts Options) *ServerStore {
			if opts.Keys == nil {
				opts.Keys = []string{newKey(t)}
			}
			store, err := NewFileStore(FileOptions{Options: opts, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			return store
		},
		"redis": func(t *testing.T, opts Options) *ServerStore { return newRedisStore(t, addr, opts) },
		"sqlite": func(t *testing.T, opts Options) *ServerStore {
			return newSQLStore(t, opts, statedbtest.SQLite(t))
		},
		"postgres": func(t *testing.T, opts Options) *ServerStore {
			return newSQLStore(t, opts, statedbtest.Postgres(t))
		},
	}
}

func newSQLStore(t *testing.T, opts Options, db *statedb.DB) *ServerStore {
	t.Helper()
	if opts.Keys == nil {
		opts.Keys = []string{newKey(t)}
	}
	store, err := NewSQLStore(opts, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return store
}

func TestServerStores(t *testing.T) {
	ctx := context.Background()
	for name, newStore := range serverStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Run("a copy of the cookie opens nothing after Delete", func(t *testing.T) {
				t.Parallel()
				store := newStore(t, Options{})
				cookies := saveCookies(t, store, nil, sampleSession(t, time.Now()))
				if len(cookies) != 1 || cookies[0].Name != "portal_sid" || len(cookies[0].Value) > 200 {
					t.Fatalf("want one small opaque id cookie, got %+v", cookies)
				}
				copied := requestWith(cookies)
				if _, err := Load(store, copied); err != nil {
					t.Fatalf("control: %v", err)
				}
				if err := Delete(store, httptest.NewRecorder(), requestWith(cookies)); err != nil {
					t.Fatal(err)
				}
				if _, err := Load(store, requestWith(cookies)); !errors.Is(err, ErrNoSession) {
					t.Fatalf("the copied cookie after Delete: %v, want ErrNoSession", err)
				}
			})

			t.Run("registry", func(t *testing.T) {
				t.Parallel()
				clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
				store := newStore(t, Options{Now: clock.Now})
				save := func(subject, providerSID, agent string, lastSeen time.Duration) (*Session, *http.Request) {
					s := sampleSession(t, clock.now)
					s.Subject, s.ProviderSID, s.UserAgent, s.ClientIP = subject, providerSID, agent, "192.0.2.1"
					s.LastSeen = clock.now.Add(lastSeen)
					return s, requestWith(saveCookies(t, store, nil, s))
				}
				a, reqA := save("u-sales", "op-1", "browser A", -time.Minute)
				b, reqB := save("u-sales", "op-2", "browser B", 0)
				c, reqC := save("u-sales", "op-3", "browser C", -2*time.Minute)
				other, reqOther := save("u-back", "op-1", "other user", 0)

				list, err := store.List(ctx, "u-sales")
				if err != nil || len(list) != 3 || list[0].ID != b.ID || list[1].ID != a.ID || list[2].ID != c.ID || list[0].UserAgent != "browser B" {
					t.Fatalf("List = %+v, %v; want B, A, C (most recently seen first)", list, err)
				}
				// Another user's id is not revocable through this subject.
				if err := store.Revoke(ctx, "u-sales", other.ID); err != nil {
					t.Fatal(err)
				}
				if _, err := Load(store, reqOther); err != nil {
					t.Fatalf("Revoke ended another user's session: %v", err)
				}
				// A provider session id, limited to the subject the logout token names.
				if err := store.RevokeProviderSession(ctx, "u-sales", "op-1"); err != nil {
					t.Fatal(err)
				}
				if _, err := Load(store, reqA); !errors.Is(err, ErrNoSession) {
					t.Fatalf("session of op-1 survived: %v", err)
				}
				if _, err := Load(store, reqOther); err != nil {
					t.Fatalf("op-1 of another subject was ended: %v", err)
				}
				// All others but B.
				if err := store.RevokeSubject(ctx, "u-sales", b.ID); err != nil {
					t.Fatal(err)
				}
				if _, err := Load(store, reqC); !errors.Is(err, ErrNoSession) {
					t.Fatalf("C survived RevokeSubject: %v", err)
				}
				if _, err := Load(store, reqB); err != nil {
					t.Fatalf("the excepted session ended: %v", err)
				}
				if list, _ := store.List(ctx, "u-sales"); len(list) != 1 || list[0].ID != b.ID {
					t.Fatalf("List after revocations = %+v", list)
				}
				if err := store.Revoke(ctx, "u-sales", b.ID); err != nil {
					t.Fatal(err)
				}
				if _, err := Load(store, reqB); !errors.Is(err, ErrNoSession) {
					t.Fatalf("Revoke left B: %v", err)
				}
			})

			t.Run("expired by the clock", func(t *testing.T) {
				t.Parallel()
				clock := &testClock{now: time.Now().UTC()}
				store := newStore(t, Options{AbsoluteLifetime: time.Hour, Now: clock.Now})
				cookies := saveCookies(t, store, nil, sampleSession(t, clock.now))
				clock.now = clock.now.Add(time.Hour)
				if _, err := Load(store, requestWith(cookies)); !errors.Is(err, ErrNoSession) {
					t.Fatalf("Load after the absolute lifetime: %v", err)
				}
			})

			t.Run("remember reports the first time only", func(t *testing.T) {
				t.Parallel()
				store := newStore(t, Options{})
				for i, want := range []bool{true, false} {
					first, err := store.Remember(ctx, "jti-1", time.Minute)
					if err != nil || first != want {
						t.Fatalf("Remember #%d = %v, %v; want %v", i+1, first, err, want)
					}
				}
			})

			t.Run("only the typed session is stored", func(t *testing.T) {
				t.Parallel()
				store := newStore(t, Options{})
				gs := sessions.NewSession(store, Name)
				gs.Values["flash"] = "hello"
				if err := store.Save(httptest.NewRequest(http.MethodGet, "/", nil), httptest.NewRecorder(), gs); err == nil {
					t.Fatal("Save stored a value the portal never reads")
				}
			})
		})
	}
}

func TestFileStoreSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir, key := t.TempDir(), newKey(t)
	opts := FileOptions{Options: Options{Keys: []string{key}}, Dir: dir}
	first, err := NewFileStore(opts)
	if err != nil {
		t.Fatal(err)
	}
	in := sampleSession(t, time.Now().UTC().Truncate(time.Second))
	cookies := saveCookies(t, first, nil, in)

	second, err := NewFileStore(opts) // the portal restarted
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(second, requestWith(cookies))
	if err != nil || got.AccessToken != in.AccessToken || got.ID != in.ID {
		t.Fatalf("after a restart: %v, %v", got, err)
	}
	// The files hold no token in clear.
	entries, _ := os.ReadDir(filepath.Join(dir, "kv"))
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, "kv", e.Name()))
		if bytes.Contains(data, []byte(in.RefreshToken)) {
			t.Fatal("a session file holds the refresh token in clear")
		}
	}
}

// A data directory that disappears is a store failure (the portal answers 503), never "signed out":
// when it is back, so is the session, without a restart.
func TestFileStoreDirectoryGoneIsAFailureNotASignOut(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions")
	store, err := NewFileStore(FileOptions{Options: Options{Keys: []string{newKey(t)}}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s := sampleSession(t, time.Now())
	cookies := saveCookies(t, store, nil, s)

	aside := dir + ".aside"
	if err := os.Rename(dir, aside); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(store, requestWith(cookies)); err == nil || errors.Is(err, ErrNoSession) {
		t.Fatalf("Load with the directory gone = %v, want a store error", err)
	}
	s.LastSeen = s.LastSeen.Add(time.Minute)
	if err := Save(store, httptest.NewRecorder(), requestWith(cookies), s); err == nil || errors.Is(err, ErrNoSession) {
		t.Fatalf("Save with the directory gone = %v, want a store error", err)
	}

	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(aside, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(store, requestWith(cookies)); err != nil {
		t.Fatalf("the session did not come back with the directory: %v", err)
	}
}

func TestNewFileStoreRefusesAnUnusableDirectory(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewFileStore(FileOptions{Options: Options{Keys: []string{newKey(t)}}, Dir: filepath.Join(file, "sessions")}); err == nil {
		t.Fatal("NewFileStore accepted a directory below a file")
	}
}

// TestCookieStoreRevocation runs on each durable revocation list: files, and the state database
// on SQLite and on PostgreSQL ("a restart" is a new store on the same directory or database).
func TestCookieStoreRevocation(t *testing.T) {
	t.Parallel()
	for name, where := range map[string]func(t *testing.T) CookieOptions{
		"file":     func(t *testing.T) CookieOptions { return CookieOptions{RevocationDir: t.TempDir()} },
		"sqlite":   func(t *testing.T) CookieOptions { return CookieOptions{RevocationDB: statedbtest.SQLite(t)} },
		"postgres": func(t *testing.T) CookieOptions { return CookieOptions{RevocationDB: statedbtest.Postgres(t)} },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testCookieStoreRevocation(t, where(t))
		})
	}
}

func testCookieStoreRevocation(t *testing.T, where CookieOptions) {
	ctx := context.Background()
	key := newKey(t)
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	newStore := func() *CookieStore {
		store, err := NewCookieStore(Options{Keys: []string{key}, Now: clock.Now}, where)
		if err != nil {
			t.Fatal(err)
		}
		return store
	}
	store := newStore()
	session := func(providerSID string) (*Session, []*http.Cookie) {
		s := sampleSession(t, clock.now)
		s.ProviderSID = providerSID
		return s, saveCookies(t, store, nil, s)
	}

	_, loggedOut := session("op-1")
	if err := Delete(store, httptest.NewRecorder(), requestWith(loggedOut)); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(store, requestWith(loggedOut)); !errors.Is(err, ErrNoSession) {
		t.Fatalf("a copy of a signed-out cookie: %v, want ErrNoSession", err)
	}
	if _, err := Load(newStore(), requestWith(loggedOut)); !errors.Is(err, ErrNoSession) {
		t.Fatalf("the revocation did not survive a restart: %v", err)
	}

	_, byProvider := session("op-2")
	if err := store.RevokeProviderSession(ctx, "u-sales", "op-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(store, requestWith(byProvider)); !errors.Is(err, ErrNoSession) {
		t.Fatalf("provider session revoked, cookie still valid: %v", err)
	}

	keep, kept := session("op-3")
	_, other := session("op-4")
	if err := store.RevokeSubject(ctx, "u-sales", keep.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(store, requestWith(other)); !errors.Is(err, ErrNoSession) {
		t.Fatalf("RevokeSubject left another session: %v", err)
	}
	if _, err := Load(store, requestWith(kept)); err != nil {
		t.Fatalf("RevokeSubject ended the excepted session: %v", err)
	}
	clock.now = clock.now.Add(2 * time.Second)
	if _, fresh := session("op-5"); true {
		if _, err := Load(store, requestWith(fresh)); err != nil {
			t.Fatalf("a sign-in after the cut-off is refused: %v", err)
		}
	}
	if _, err := store.List(ctx, "u-sales"); !errors.Is(err, ErrNotListable) {
		t.Fatalf("List = %v, want ErrNotListable", err)
	}
}
