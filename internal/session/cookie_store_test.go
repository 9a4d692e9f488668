package session

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func newCookieStore(t testing.TB, opts Options) *CookieStore {
	t.Helper()
	if opts.Keys == nil {
		opts.Keys = []string{newKey(t)}
	}
	store, err := NewCookieStore(opts)
	if err != nil {
		t.Fatalf("NewCookieStore: %v", err)
	}
	return store
}

func sampleSession(t testing.TB, now time.Time) *Session {
	return &Session{
		Subject: "u-sales", Name: "Sam Sales", Email: "sam.sales@demo.example",
		AccessToken: fakeJWT(t, 900), RefreshToken: randomBase64URL(t, 43), IDToken: fakeJWT(t, 800),
		TokenExpiry: now.Add(15 * time.Minute), CreatedAt: now, LastSeen: now,
		CPQ: []CPQEntry{{Key: CPQKey{CPQID: 1, CustomerID: 2, QuoteID: 3}, SessionID: "cpq-1", UsedAt: now}},
	}
}

func TestCookieStoreRoundTrip(t *testing.T) {
	t.Parallel()
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	store := newCookieStore(t, Options{Now: clock.Now})
	in := sampleSession(t, clock.now)

	cookies := saveCookies(t, store, nil, in)
	got, err := Load(store, requestWith(cookies))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !reflect.DeepEqual(got, in) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, in)
	}
}

func TestCookieStoreCookieAttributes(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	for _, secure := range []bool{false, true} {
		store := newCookieStore(t, Options{Secure: secure, AbsoluteLifetime: 8 * time.Hour, Now: func() time.Time { return now }})
		s := sampleSession(t, now.Add(-time.Hour))
		cookies := saveCookies(t, store, nil, s)
		if len(cookies) == 0 {
			t.Fatal("no cookies set")
		}
		for _, c := range cookies {
			wantName := "portal_s0"
			if secure {
				wantName = "__Host-portal_s0"
			}
			if c.Name != wantName {
				t.Errorf("secure=%v: name %q, want %q", secure, c.Name, wantName)
			}
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure != secure || c.Domain != "" {
				t.Errorf("secure=%v: attributes %+v", secure, c)
			}
			// Max-Age is what is left of the absolute lifetime (signed in an hour ago).
			if c.MaxAge != int((7 * time.Hour).Seconds()) {
				t.Errorf("secure=%v: Max-Age %d, want %d", secure, c.MaxAge, int((7 * time.Hour).Seconds()))
			}
		}
		if _, err := Load(store, requestWith(cookies)); err != nil {
			t.Errorf("secure=%v: Load: %v", secure, err)
		}
	}
}

// An enterprise identity provider's tokens (4 KB access, 2 KB refresh, 1 KB ID token) must survive sign-in
// and keep the browser's whole Cookie header under 8 KB.
func TestCookieStoreEnterpriseTokens(t *testing.T) {
	t.Parallel()
	for _, secure := range []bool{false, true} {
		t.Run("secure="+strconv.FormatBool(secure), func(t *testing.T) {
			t.Parallel()
			now := time.Now().UTC().Truncate(time.Second)
			store := newCookieStore(t, Options{Secure: secure, Now: func() time.Time { return now }})
			in := sampleSession(t, now)
			in.AccessToken = fakeJWT(t, 4096)
			in.RefreshToken = randomBase64URL(t, 2048)
			in.IDToken = fakeJWT(t, 1024)
			for i := range MaxCPQEntries {
				in.SetCPQSession(CPQKey{CPQID: 1, CustomerID: 42, QuoteID: int64(1000 + i)}, randomHex(t, 16), now)
			}

			cookies := saveCookies(t, store, nil, in)
			req := requestWith(cookies)
			size := cookieHeaderSize(req)
			t.Logf("%d cookies, Cookie header %d bytes (tokens %d+%d+%d bytes)", len(cookies), size,
				len(in.AccessToken), len(in.RefreshToken), len(in.IDToken))
			if size >= 8<<10 {
				t.Fatalf("Cookie header is %d bytes, want < 8192", size)
			}
			for _, c := range cookies {
				if len(c.Value) >= 4000 {
					t.Errorf("cookie %s value is %d bytes, want < 4000", c.Name, len(c.Value))
				}
			}
			got, err := Load(store, req)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got.AccessToken != in.AccessToken || got.RefreshToken != in.RefreshToken {
				t.Fatal("tokens did not round-trip")
			}
			// Even with twenty CPQ sessions the ID token fits (it would be dropped otherwise, see below).
			if !reflect.DeepEqual(got, in) {
				t.Fatalf("session did not round-trip (ID token kept: %v)", got.IDToken == in.IDToken)
			}
		})
	}
}

func TestCookieStoreDropsIDTokenBeforeFailing(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC().Truncate(time.Second)
	store := newCookieStore(t, Options{Now: func() time.Time { return now }})
	in := sampleSession(t, now)
	in.AccessToken = randomBase64URL(t, 6400) // incompressible: fits only without the ID token
	in.IDToken = fakeJWT(t, 1500)
	got, err := Load(store, requestWith(saveCookies(t, store, nil, in)))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got.IDToken != "" || got.AccessToken != in.AccessToken {
		t.Fatalf("want the ID token dropped and the access token kept; ID token %d bytes", len(got.IDToken))
	}

	in.AccessToken = randomBase64URL(t, 9000)
	err = Save(store, httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil), in)
	if !errors.Is(err, ErrSessionTooLarge) {
		t.Fatalf("Save of a 9 KB token: err %v, want ErrSessionTooLarge", err)
	}
}

func TestCookieStoreDeletesLeftoverChunks(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC().Truncate(time.Second)
	store := newCookieStore(t, Options{Now: func() time.Time { return now }})
	big := sampleSession(t, now)
	big.AccessToken = randomBase64URL(t, 5000)
	big.IDToken = ""
	bigCookies := saveCookies(t, store, nil, big)
	if len(bigCookies) < 2 {
		t.Fatalf("want several chunks for a big session, got %d", len(bigCookies))
	}

	small := sampleSession(t, now)
	rec := httptest.NewRecorder()
	if err := Save(store, rec, requestWith(bigCookies), small); err != nil {
		t.Fatal(err)
	}
	deleted := map[string]bool{}
	var live []*http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.MaxAge < 0 {
			deleted[c.Name] = true
		} else {
			live = append(live, c)
		}
	}
	for i := len(live); i < len(bigCookies); i++ {
		if !deleted["portal_s"+strconv.Itoa(i)] {
			t.Errorf("leftover chunk portal_s%d not deleted (deleted: %v)", i, deleted)
		}
	}
	got, err := Load(store, requestWith(live))
	if err != nil || got.AccessToken != small.AccessToken {
		t.Fatalf("small session after shrink: %v", err)
	}

	// Even if a stale chunk survives in the browser, the count in the first chunk ignores it.
	stale := append(append([]*http.Cookie(nil), live...), bigCookies[len(live):]...)
	if got, err := Load(store, requestWith(stale)); err != nil || got.AccessToken != small.AccessToken {
		t.Fatalf("stale chunk confused Load: %v", err)
	}
}

func TestCookieStoreSecondSaveReplacesFirst(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC().Truncate(time.Second)
	store := newCookieStore(t, Options{Now: func() time.Time { return now }})
	s := sampleSession(t, now)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	rec.Header().Add("Set-Cookie", "other=1")
	if err := Save(store, rec, req, s); err != nil {
		t.Fatal(err)
	}
	s.SetCPQSession(CPQKey{CPQID: 9}, "later", now)
	if err := Save(store, rec, req, s); err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, c := range rec.Result().Cookies() {
		names[c.Name]++
	}
	if names["portal_s0"] != 1 || names["other"] != 1 {
		t.Fatalf("Set-Cookie names after two saves: %v", names)
	}
	got, err := Load(store, requestWith(rec.Result().Cookies()))
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := got.CPQSession(CPQKey{CPQID: 9}); id != "later" {
		t.Fatal("the second save did not win")
	}
}

func TestCookieStoreDelete(t *testing.T) {
	t.Parallel()
	store := newCookieStore(t, Options{})
	s := sampleSession(t, time.Now())
	s.AccessToken = randomBase64URL(t, 5000)
	s.IDToken = ""
	cookies := saveCookies(t, store, nil, s)
	rec := httptest.NewRecorder()
	if err := Delete(store, rec, requestWith(cookies)); err != nil {
		t.Fatal(err)
	}
	expired := 0
	for _, c := range rec.Result().Cookies() {
		if c.MaxAge >= 0 || c.Path != "/" {
			t.Errorf("Delete set %+v, want an expired cookie on Path=/", c)
		}
		expired++
	}
	if expired != len(cookies) {
		t.Fatalf("expired %d cookies, want %d", expired, len(cookies))
	}
}

// Every way a cookie can be damaged or forged reads as "no session", never an error or a panic.
func TestCookieStoreRejectsBadCookies(t *testing.T) {
	t.Parallel()
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	key := newKey(t)
	store := newCookieStore(t, Options{Keys: []string{key}, AbsoluteLifetime: time.Hour, Now: clock.Now})
	s := sampleSession(t, clock.now)
	s.AccessToken = randomBase64URL(t, 5000) // two chunks
	s.IDToken = ""
	good := saveCookies(t, store, nil, s)
	if len(good) < 2 {
		t.Fatalf("want two chunks, got %d", len(good))
	}
	value := good[0].Value
	mutate := func(f func([]*http.Cookie) []*http.Cookie) *http.Request {
		cp := make([]*http.Cookie, len(good))
		for i, c := range good {
			cc := *c
			cp[i] = &cc
		}
		return requestWith(f(cp))
	}
	other := newCookieStore(t, Options{Now: clock.Now})
	forged := saveCookies(t, other, nil, s)

	cases := map[string]*http.Request{
		"no cookie": httptest.NewRequest(http.MethodGet, "/", nil),
		"tampered": mutate(func(c []*http.Cookie) []*http.Cookie {
			b := []byte(c[0].Value)
			if i := len(b) / 2; b[i] == 'A' {
				b[i] = 'B'
			} else {
				b[i] = 'A'
			}
			c[0].Value = string(b)
			return c
		}),
		"truncated":     mutate(func(c []*http.Cookie) []*http.Cookie { c[1].Value = c[1].Value[:len(c[1].Value)-10]; return c }),
		"chunk missing": mutate(func(c []*http.Cookie) []*http.Cookie { return c[:1] }),
		"chunks swapped": mutate(func(c []*http.Cookie) []*http.Cookie {
			c[0].Value, c[1].Value = strings.SplitN(c[0].Value, ".", 2)[0]+"."+c[1].Value, strings.SplitN(c[0].Value, ".", 2)[1]
			return c
		}),
		"bad count":   mutate(func(c []*http.Cookie) []*http.Cookie { c[0].Value = "9" + value[1:]; return c }),
		"no count":    mutate(func(c []*http.Cookie) []*http.Cookie { c[0].Value = strings.ReplaceAll(value, ".", ""); return c }),
		"garbage":     mutate(func(c []*http.Cookie) []*http.Cookie { c[0].Value = "1.%%%"; return c }),
		"forged keys": requestWith(forged),
	}
	for name, req := range cases {
		if got, err := Load(store, req); !errors.Is(err, ErrNoSession) || got != nil {
			t.Errorf("%s: Load = %v, %v; want ErrNoSession", name, got, err)
		}
	}

	// Expired by the session's own clock: signed in longer ago than the absolute lifetime.
	clock.now = clock.now.Add(time.Hour)
	if _, err := Load(store, requestWith(good)); !errors.Is(err, ErrNoSession) {
		t.Errorf("expired session: Load error %v, want ErrNoSession", err)
	}
}

// A cookie whose securecookie timestamp is older than the lifetime is rejected even if its content claims
// to be fresh (a replayed old cookie).
func TestCookieStoreRejectsOldTimestamp(t *testing.T) {
	t.Parallel()
	key := newKey(t)
	store := newCookieStore(t, Options{Keys: []string{key}, AbsoluteLifetime: time.Hour})
	s := sampleSession(t, time.Now())
	cookies := saveCookies(t, store, nil, s)
	if len(cookies) != 1 {
		t.Fatalf("want one chunk, got %d", len(cookies))
	}
	count, packed, _ := strings.Cut(cookies[0].Value, ".")
	encoded, err := unpack(packed)
	if err != nil {
		t.Fatal(err)
	}

	// Re-sign the same encrypted value with a timestamp two hours old: a valid MAC, an expired date.
	secret, err := decodeSecret(key)
	if err != nil {
		t.Fatal(err)
	}
	hashKey, _ := derive(secret, sessionPurpose)
	raw, err := base64.URLEncoding.DecodeString(encoded)
	if err != nil {
		t.Fatal(err)
	}
	parts := bytes.SplitN(raw, []byte("|"), 3)
	old := fmt.Sprintf("%d|%s", time.Now().Add(-2*time.Hour).Unix(), parts[1])
	mac := hmac.New(sha256.New, hashKey)
	mac.Write([]byte(cookieBaseName + "|" + old))
	resigned, err := pack(base64.URLEncoding.EncodeToString(append([]byte(old+"|"), mac.Sum(nil)...)))
	if err != nil {
		t.Fatal(err)
	}

	// Control: the same re-signing with the current time is accepted, so the test exercises the date.
	fresh := fmt.Sprintf("%d|%s", time.Now().Unix(), parts[1])
	mac.Reset()
	mac.Write([]byte(cookieBaseName + "|" + fresh))
	control, err := pack(base64.URLEncoding.EncodeToString(append([]byte(fresh+"|"), mac.Sum(nil)...)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Load(store, requestWith([]*http.Cookie{{Name: "portal_s0", Value: count + "." + control}})); err != nil {
		t.Fatalf("control cookie rejected: %v", err)
	}
	if _, err := Load(store, requestWith([]*http.Cookie{{Name: "portal_s0", Value: count + "." + resigned}})); !errors.Is(err, ErrNoSession) {
		t.Fatalf("old timestamp: Load error %v, want ErrNoSession", err)
	}
}

func TestCookieStoreKeyRotation(t *testing.T) {
	t.Parallel()
	oldKey, newKeyValue := newKey(t), hex.EncodeToString(randomBytes(t, 32))
	before := newCookieStore(t, Options{Keys: []string{oldKey}})
	during := newCookieStore(t, Options{Keys: []string{newKeyValue, oldKey}})
	after := newCookieStore(t, Options{Keys: []string{newKeyValue}})
	s := sampleSession(t, time.Now())

	oldCookies := saveCookies(t, before, nil, s)
	if _, err := Load(during, requestWith(oldCookies)); err != nil {
		t.Fatalf("a rotated-out key must still be read: %v", err)
	}
	newCookies := saveCookies(t, during, nil, s)
	if _, err := Load(after, requestWith(newCookies)); err != nil {
		t.Fatalf("the first key must sign: %v", err)
	}
	if _, err := Load(before, requestWith(newCookies)); !errors.Is(err, ErrNoSession) {
		t.Fatalf("the old key alone must not read cookies signed with the new key: %v", err)
	}
}

func TestParseKeys(t *testing.T) {
	t.Parallel()
	raw := randomBytes(t, 32)
	valid := []string{
		hex.EncodeToString(raw),
		base64.StdEncoding.EncodeToString(raw),
		base64.RawURLEncoding.EncodeToString(randomBytes(t, 48)),
		" " + base64.StdEncoding.EncodeToString(raw) + "\n",
	}
	for _, key := range valid {
		if _, err := parseKeys([]string{key}); err != nil {
			t.Errorf("key %q rejected: %v", key, err)
		}
	}
	k, err := parseKeys([]string{hex.EncodeToString(raw)})
	if err != nil || !bytes.Equal(k.secrets[0], raw) {
		t.Errorf("hex key decoded wrongly: %v", err)
	}
	invalid := map[string][]string{
		"none":      nil,
		"short hex": {hex.EncodeToString(randomBytes(t, 16))},
		"short b64": {base64.StdEncoding.EncodeToString(randomBytes(t, 20))},
		"not text":  {"not a key!"},
		"2nd bad":   {hex.EncodeToString(raw), "short"},
	}
	for name, keys := range invalid {
		if _, err := NewCookieStore(Options{Keys: keys}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCodecsArePurposeBound(t *testing.T) {
	t.Parallel()
	store := newCookieStore(t, Options{})
	login := store.Codecs("login", 10*time.Minute)
	encoded, err := login[0].Encode("x", []byte("state"))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	if err := store.Codecs("login", 10*time.Minute)[0].Decode("x", encoded, &out); err != nil || string(out) != "state" {
		t.Fatalf("same purpose: %v %q", err, out)
	}
	if err := store.codecs[0].Decode("x", encoded, &out); err == nil {
		t.Fatal("a login cookie must not decode with the session codec")
	}
}

func BenchmarkCookieStoreLoad(b *testing.B) {
	store := newCookieStore(b, Options{})
	s := sampleSession(b, time.Now())
	s.AccessToken = fakeJWT(b, 1500)
	req := requestWith(saveCookies(b, store, nil, s))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(store, req); err != nil {
			b.Fatal(err)
		}
	}
}
