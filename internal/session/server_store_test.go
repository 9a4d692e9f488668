package session

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/gorilla/sessions"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// serverStores builds each server-side store (the state database on SQLite and on PostgreSQL)
// with opts.
func serverStores(t *testing.T) map[string]func(t *testing.T, opts Options) *ServerStore {
	return map[string]func(t *testing.T, opts Options) *ServerStore{
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

			t.Run("round trip with only an id in the cookie", func(t *testing.T) {
				t.Parallel()
				now := time.Now().UTC().Truncate(time.Second)
				store := newStore(t, Options{AbsoluteLifetime: 2 * time.Hour, Now: func() time.Time { return now }})
				if err := store.Ping(ctx); err != nil {
					t.Fatal(err)
				}
				in := sampleSession(t, now)
				in.AccessToken = fakeJWT(t, 4096)
				in.RefreshToken = randomBase64URL(t, 2048)
				cookies := saveCookies(t, store, nil, in)
				if in.ID == "" {
					t.Fatal("Save did not assign an id")
				}
				if len(cookies) != 1 || cookies[0].Name != "portal_sid" || len(cookies[0].Value) > 200 {
					t.Fatalf("want one small id cookie, got %+v", cookies)
				}
				c := cookies[0]
				if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.MaxAge != int((2*time.Hour).Seconds()) {
					t.Fatalf("cookie attributes %+v", c)
				}
				got, err := Load(store, requestWith(cookies))
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if !reflect.DeepEqual(got, in) {
					t.Fatalf("round trip:\n got %+v\nwant %+v", got, in)
				}

				// Saving again (LastSeen) keeps the id and sets no new cookie.
				got.LastSeen = got.LastSeen.Add(time.Minute)
				if again := saveCookies(t, store, requestWith(cookies), got); len(again) != 0 {
					t.Fatalf("re-save set cookies %+v", again)
				}
				reloaded, err := Load(store, requestWith(cookies))
				if err != nil || !reloaded.LastSeen.Equal(got.LastSeen) {
					t.Fatalf("re-save not stored: %v", err)
				}
			})

			t.Run("delete makes the old cookie useless", func(t *testing.T) {
				t.Parallel()
				store := newStore(t, Options{})
				s := sampleSession(t, time.Now())
				cookies := saveCookies(t, store, nil, s)
				rec := httptest.NewRecorder()
				if err := Delete(store, rec, requestWith(cookies)); err != nil {
					t.Fatal(err)
				}
				if del := rec.Result().Cookies(); len(del) != 1 || del[0].MaxAge >= 0 {
					t.Fatalf("Delete cookies %+v", del)
				}
				if _, err := Load(store, requestWith(cookies)); !errors.Is(err, ErrNoSession) {
					t.Fatalf("old cookie after Delete: %v, want ErrNoSession", err)
				}
				if _, err := store.kv.get(ctx, sessionKey(s.ID)); !errors.Is(err, errNotFound) {
					t.Fatalf("server-side session after Delete: %v, want errNotFound", err)
				}
				if members, _ := store.kv.members(ctx, subjectSet(s.Subject)); len(members) != 0 {
					t.Fatalf("subject index still lists %v", members)
				}
				// A request in flight that saves after the delete must not revive the session.
				s.LastSeen = s.LastSeen.Add(time.Minute)
				err := Save(store, httptest.NewRecorder(), requestWith(cookies), s)
				if !errors.Is(err, ErrNoSession) {
					t.Fatalf("Save after Delete: %v, want ErrNoSession", err)
				}
				if _, err := Load(store, requestWith(cookies)); !errors.Is(err, ErrNoSession) {
					t.Fatal("Save revived a deleted session")
				}
			})

			t.Run("reload reads what another request saved", func(t *testing.T) {
				t.Parallel()
				store := newStore(t, Options{})
				s := sampleSession(t, time.Now())
				cookies := saveCookies(t, store, nil, s)
				loaded, err := Load(store, requestWith(cookies))
				if err != nil {
					t.Fatal(err)
				}
				// Another request (or replica) refreshes the tokens after this one loaded the session.
				s.RefreshToken, s.AccessToken = "rotated-refresh-token", "new-access-token"
				saveCookies(t, store, requestWith(cookies), s)

				reloaded, err := store.Reload(ctx, loaded.ID)
				if err != nil {
					t.Fatalf("Reload: %v", err)
				}
				if reloaded.ID != loaded.ID || reloaded.RefreshToken != "rotated-refresh-token" || reloaded.AccessToken != "new-access-token" {
					t.Fatalf("Reload = %+v, want the newer tokens", reloaded)
				}
				if err := Delete(store, httptest.NewRecorder(), requestWith(cookies)); err != nil {
					t.Fatal(err)
				}
				for _, id := range []string{loaded.ID, ""} {
					if _, err := store.Reload(ctx, id); !errors.Is(err, ErrNoSession) {
						t.Errorf("Reload(%q) of no session: %v, want ErrNoSession", id, err)
					}
				}
			})

			t.Run("sign out everywhere", func(t *testing.T) {
				t.Parallel()
				store := newStore(t, Options{})
				laptop := saveCookies(t, store, nil, sampleSession(t, time.Now()))
				phone := saveCookies(t, store, nil, sampleSession(t, time.Now()))
				someoneElse := sampleSession(t, time.Now())
				someoneElse.Subject = "u-backoffice"
				other := saveCookies(t, store, nil, someoneElse)

				if err := store.RevokeSubject(ctx, "u-sales", ""); err != nil {
					t.Fatal(err)
				}
				for name, cookies := range map[string][]*http.Cookie{"laptop": laptop, "phone": phone} {
					if _, err := Load(store, requestWith(cookies)); !errors.Is(err, ErrNoSession) {
						t.Errorf("%s still signed in: %v", name, err)
					}
				}
				if _, err := Load(store, requestWith(other)); err != nil {
					t.Errorf("another user's session was deleted: %v", err)
				}
			})

			t.Run("new sign-in replaces the browser's previous session", func(t *testing.T) {
				t.Parallel()
				store := newStore(t, Options{})
				first := sampleSession(t, time.Now())
				firstCookies := saveCookies(t, store, nil, first)
				second := sampleSession(t, time.Now())
				secondCookies := saveCookies(t, store, requestWith(firstCookies), second)
				if second.ID == first.ID || len(secondCookies) != 1 {
					t.Fatalf("a new session must get a new id and cookie (%q, %d cookies)", second.ID, len(secondCookies))
				}
				if _, err := store.kv.get(ctx, sessionKey(first.ID)); !errors.Is(err, errNotFound) {
					t.Fatalf("the replaced session: %v, want errNotFound", err)
				}
			})

			t.Run("bad cookies", func(t *testing.T) {
				t.Parallel()
				store := newStore(t, Options{})
				other := newStore(t, Options{})
				good := saveCookies(t, store, nil, sampleSession(t, time.Now()))
				forged := saveCookies(t, other, nil, sampleSession(t, time.Now()))
				tampered := *good[0]
				tampered.Value = tampered.Value[:len(tampered.Value)-4] + "AAAA"
				cases := map[string]*http.Request{
					"none":     httptest.NewRequest(http.MethodGet, "/", nil),
					"forged":   requestWith(forged),
					"tampered": requestWith([]*http.Cookie{&tampered}),
					"raw id":   requestWith([]*http.Cookie{{Name: "portal_sid", Value: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}}),
				}
				for name, req := range cases {
					if s, err := Load(store, req); !errors.Is(err, ErrNoSession) || s != nil {
						t.Errorf("%s: Load = %v, %v; want ErrNoSession", name, s, err)
					}
				}
			})

			t.Run("secure cookie name", func(t *testing.T) {
				t.Parallel()
				store := newStore(t, Options{Secure: true})
				cookies := saveCookies(t, store, nil, sampleSession(t, time.Now()))
				if len(cookies) != 1 || cookies[0].Name != "__Host-portal_sid" || !cookies[0].Secure {
					t.Fatalf("cookies %+v", cookies)
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

// TestCookieStoreRevocation runs on each durable revocation list: the state database on SQLite
// and on PostgreSQL ("a restart" is a new store on the same database).
func TestCookieStoreRevocation(t *testing.T) {
	t.Parallel()
	for name, where := range map[string]func(t *testing.T) CookieOptions{
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
