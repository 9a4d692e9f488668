package session

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cpqportal/portal/internal/session/redistest"
)

func newRedisStore(t *testing.T, addr string, opts Options) *ServerStore {
	t.Helper()
	if opts.Keys == nil {
		opts.Keys = []string{newKey(t)}
	}
	store, err := NewRedisStore(RedisOptions{Options: opts, URL: "redis://" + addr + "/0", KeyPrefix: "test:" + t.Name() + ":"})
	if err != nil {
		t.Fatalf("NewRedisStore: %v", err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return store
}

func TestRedisStore(t *testing.T) {
	addr := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = client.Close() })
	ctx := context.Background()

	t.Run("round trip with only an id in the cookie", func(t *testing.T) {
		t.Parallel()
		now := time.Now().UTC().Truncate(time.Second)
		store := newRedisStore(t, addr, Options{AbsoluteLifetime: 2 * time.Hour, Now: func() time.Time { return now }})
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
		ttl, err := client.TTL(ctx, store.redisKey(in.ID)).Result()
		if err != nil || ttl <= time.Hour || ttl > 2*time.Hour {
			t.Fatalf("TTL %v (%v), want the absolute lifetime", ttl, err)
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
		store := newRedisStore(t, addr, Options{})
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
		if n, _ := client.Exists(ctx, store.redisKey(s.ID)).Result(); n != 0 {
			t.Fatal("server-side session survived Delete")
		}
		if members, _ := client.SMembers(ctx, store.kv.(*redisKV).prefix+subjectSet(s.Subject)).Result(); len(members) != 0 {
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
		store := newRedisStore(t, addr, Options{})
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
		store := newRedisStore(t, addr, Options{})
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
		store := newRedisStore(t, addr, Options{})
		first := sampleSession(t, time.Now())
		firstCookies := saveCookies(t, store, nil, first)
		second := sampleSession(t, time.Now())
		secondCookies := saveCookies(t, store, requestWith(firstCookies), second)
		if second.ID == first.ID || len(secondCookies) != 1 {
			t.Fatalf("a new session must get a new id and cookie (%q, %d cookies)", second.ID, len(secondCookies))
		}
		if n, _ := client.Exists(ctx, store.redisKey(first.ID)).Result(); n != 0 {
			t.Fatal("the replaced session still exists")
		}
	})

	t.Run("bad cookies", func(t *testing.T) {
		t.Parallel()
		store := newRedisStore(t, addr, Options{})
		other := newRedisStore(t, addr, Options{})
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

	t.Run("expired by the clock", func(t *testing.T) {
		t.Parallel()
		clock := &testClock{now: time.Now().UTC()}
		store := newRedisStore(t, addr, Options{AbsoluteLifetime: time.Hour, Now: clock.Now})
		cookies := saveCookies(t, store, nil, sampleSession(t, clock.now))
		clock.now = clock.now.Add(time.Hour)
		if _, err := Load(store, requestWith(cookies)); !errors.Is(err, ErrNoSession) {
			t.Fatalf("Load after the absolute lifetime: %v", err)
		}
	})

	t.Run("secure cookie name", func(t *testing.T) {
		t.Parallel()
		store := newRedisStore(t, addr, Options{Secure: true})
		cookies := saveCookies(t, store, nil, sampleSession(t, time.Now()))
		if len(cookies) != 1 || cookies[0].Name != "__Host-portal_sid" || !cookies[0].Secure {
			t.Fatalf("cookies %+v", cookies)
		}
	})
}

// When redis is down, Load reports a store failure, not "no session" (which would send the user to sign in
// again and again).
func TestRedisStoreUnavailable(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	store := newRedisStore(t, addr, Options{})
	cookies := saveCookies(t, store, nil, sampleSession(t, time.Now()))

	down := newRedisStore(t, "127.0.0.1:1", Options{Keys: store.opts.Keys})
	_, err := Load(down, requestWith(cookies))
	if err == nil || errors.Is(err, ErrNoSession) {
		t.Fatalf("Load with redis down: %v, want a store error", err)
	}
}

// redisKey is the redis key of session id.
func (ss *ServerStore) redisKey(id string) string { return ss.kv.(*redisKV).prefix + sessionKey(id) }
