package session

import (
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// A cookie value opened once is served from the opened-cookie cache: each Load still returns its
// own Session, the absolute lifetime is still enforced, and a changed value is still refused.
func TestCookieStoreOpenedCache(t *testing.T) {
	t.Parallel()
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	store := newCookieStore(t, Options{Now: clock.Now, AbsoluteLifetime: time.Hour})
	in := sampleSession(t, clock.now)
	cookies := saveCookies(t, store, nil, in)

	first, err := Load(store, requestWith(cookies))
	if err != nil {
		t.Fatalf("first Load: %v", err)
	}
	if n := len(store.opened.entries); n != 1 {
		t.Fatalf("opened cache holds %d entries after one Load, want 1", n)
	}
	first.Subject = "changed by a handler"
	first.CPQ[0].SessionID = "changed by a handler"
	second, err := Load(store, requestWith(cookies))
	if err != nil {
		t.Fatalf("cached Load: %v", err)
	}
	if !reflect.DeepEqual(second, in) {
		t.Fatalf("cached Load:\n got %+v\nwant %+v", second, in)
	}

	tampered := make([]*http.Cookie, len(cookies))
	for i, c := range cookies {
		cc := *c
		tampered[i] = &cc
	}
	v := []byte(tampered[0].Value)
	mid := len(v) / 2
	if v[mid] == 'A' {
		v[mid] = 'B'
	} else {
		v[mid] = 'A'
	}
	tampered[0].Value = string(v)
	if _, err := Load(store, requestWith(tampered)); err != ErrNoSession {
		t.Errorf("tampered cookie after a cached Load: err = %v, want ErrNoSession", err)
	}

	clock.now = clock.now.Add(time.Hour + time.Second)
	if s, err := Load(store, requestWith(cookies)); err != ErrNoSession {
		t.Errorf("expired session from the cache: %+v, %v; want ErrNoSession", s, err)
	}
}

// The server store opens each sealed id and session once: later Loads get their own copy, and the
// absolute lifetime is still enforced.
func TestServerStoreOpenedCache(t *testing.T) {
	t.Parallel()
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	store := newSQLStore(t, Options{Keys: []string{newKey(t)}, Now: clock.Now, AbsoluteLifetime: time.Hour}, statedbtest.SQLite(t))
	in := sampleSession(t, clock.now)
	cookies := saveCookies(t, store, nil, in)
	first, err := Load(store, requestWith(cookies))
	if err != nil {
		t.Fatalf("first Load: %v", err)
	}
	if len(store.openedIDs.entries) != 1 || len(store.openedData.entries) != 1 {
		t.Fatalf("opened caches hold %d ids and %d sessions after one Load, want 1 and 1",
			len(store.openedIDs.entries), len(store.openedData.entries))
	}
	want := *first
	want.CPQ = append([]CPQEntry(nil), first.CPQ...)
	first.AccessToken = "changed by a handler"
	first.CPQ[0].SessionID = "changed by a handler"
	second, err := Load(store, requestWith(cookies))
	if err != nil {
		t.Fatalf("cached Load: %v", err)
	}
	if !reflect.DeepEqual(*second, want) {
		t.Fatalf("cached Load:\n got %+v\nwant %+v", second, want)
	}
	clock.now = clock.now.Add(time.Hour + time.Second)
	if s, err := Load(store, requestWith(cookies)); err != ErrNoSession {
		t.Errorf("expired session from the cache: %+v, %v; want ErrNoSession", s, err)
	}
}
